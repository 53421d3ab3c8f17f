"""DyT token dispatcher: per token, per block part, run it or skip it."""
import math
from typing import Optional

import torch
from mmengine.model.weight_init import trunc_normal_
from torch import nn

from ...utils import check_number

# How a dispatcher turns gate logits into a mask: DyT's threshold at logit 0
# (a learned, input-dependent number of tokens) or a fixed top-k per image.
DISPATCH_MODES = ('threshold', 'topk')


def topk_count(keep_rate: float, num_tokens: int) -> int:
    """Tokens kept of ``num_tokens`` at ``keep_rate``: round(r * N), halves rounded up."""
    return int(math.floor(keep_rate * num_tokens + 0.5))


class TokenDispatcher(nn.Module):
    """Binary gate over tokens from a linear gate ``logit = w^T x + b``.

    ``mode='threshold'`` (DyT): in training ``y = sigmoid((logit + g1 - g2) / tau)``
    with g1, g2 ~ Gumbel(0, 1) (or without noise when ``gumbel=False``, the
    "DyT-" ablation), the mask is ``1[y > 0.5]`` in the forward pass and has
    the gradient of ``y``. In evaluation the mask is ``1[logit >= 0]``.

    ``mode='topk'`` (the top-K ablation of the DyT authors' review): every
    image keeps exactly ``k = round(keep_rate * N)`` of its N patch tokens,
    those with the largest logits (with the same noise in training when
    ``gumbel=True``, without it in evaluation). The forward mask is this hard
    top-k; its gradient is that of ``y = sigmoid(logit' / tau)`` as in DyT
    (``hard - y.detach() + y``), so the ablation changes the selection rule
    only, not the estimator (the hard top-k has zero gradient almost everywhere).

    The first ``num_prefix_tokens`` tokens (class token ...) are always active.

    Args:
        dim (int): Token width C.
        tau (float): Gumbel-Sigmoid temperature. Defaults to 5.
        gumbel (bool): Add Gumbel noise in training. Defaults to True.
        mode (str): 'threshold' (default) or 'topk'.
        keep_rate (float, optional): Kept fraction r in (0, 1] of ``mode='topk'``;
            must be None for 'threshold'.
    """

    def __init__(self,
                 dim: int,
                 tau: float = 5.0,
                 gumbel: bool = True,
                 mode: str = 'threshold',
                 keep_rate: Optional[float] = None):
        super().__init__()
        check_number(tau, 'dispatcher_cfg.tau', 0, low_open=True)
        if mode not in DISPATCH_MODES:
            raise ValueError(f'dispatcher mode={mode!r} is not one of {DISPATCH_MODES}')
        if mode == 'topk':
            check_number(keep_rate, 'dispatcher keep_rate', 0, 1, low_open=True)
        if mode == 'threshold' and keep_rate is not None:
            raise ValueError(f"dispatcher keep_rate={keep_rate!r} is only for mode='topk'; "
                             "mode='threshold' learns its rate: leave it None")
        self.gate = nn.Linear(dim, 1)
        self.tau = tau
        self.gumbel = gumbel
        self.mode = mode
        self.keep_rate = keep_rate
        self.reset_parameters()

    def reset_parameters(self):
        """Initialise like the ViT's linears: about half the tokens start active."""
        trunc_normal_(self.gate.weight, std=.02)
        nn.init.zeros_(self.gate.bias)

    def _topk(self, logits: torch.Tensor) -> torch.Tensor:
        """0/1 mask (B, N): 1 at the ``round(keep_rate * N)`` largest logits of each row."""
        k = topk_count(self.keep_rate, logits.shape[1])
        keep = logits.topk(k, dim=1).indices
        return torch.zeros_like(logits).scatter_(1, keep, 1.0)

    def forward(self, x: torch.Tensor, num_prefix_tokens: int = 1) -> torch.Tensor:
        """Tokens (B, N, C) -> mask (B, N): exactly 0/1 values."""
        # Gate every token, then drop the extra ones: slicing first would copy x.
        logits = self.gate(x).squeeze(-1)[:, num_prefix_tokens:]
        if self.training:
            if self.gumbel:
                # g1 - g2 of two i.i.d. Gumbel(0, 1) draws is Logistic(0, 1).
                u = torch.rand_like(logits).clamp_(1e-6, 1 - 1e-6)
                logits = logits + torch.log(u) - torch.log1p(-u)
            soft = torch.sigmoid(logits / self.tau)
            if self.mode == 'topk':
                hard = self._topk(logits.detach())
            else:
                hard = (soft > 0.5).to(soft.dtype)
            mask = hard - soft.detach() + soft
        elif self.mode == 'topk':
            mask = self._topk(logits)
        else:
            mask = (logits >= 0).to(x.dtype)
        extra = mask.new_ones(mask.shape[0], num_prefix_tokens)
        return torch.cat([extra, mask], dim=1)
