"""DyT token dispatcher: per token, per block part, run it or skip it."""
import torch
from mmengine.model.weight_init import trunc_normal_
from torch import nn


class TokenDispatcher(nn.Module):
    """Binary gate over tokens, learned with a straight-through Gumbel-Sigmoid.

    In training ``y = sigmoid((logit + g1 - g2) / tau)`` with g1, g2 ~ Gumbel(0, 1)
    (or without noise when ``gumbel=False``, the "DyT-" ablation), the mask is
    ``1[y > 0.5]`` in the forward pass and has the gradient of ``y``. In
    evaluation the mask is ``1[logit >= 0]``. The first ``num_extra_tokens``
    tokens (class token ...) are always active.

    Args:
        dim (int): Token width C.
        tau (float): Gumbel-Sigmoid temperature. Defaults to 5.
        gumbel (bool): Add Gumbel noise in training. Defaults to True.
    """

    def __init__(self, dim: int, tau: float = 5.0, gumbel: bool = True):
        super().__init__()
        if tau <= 0:
            raise ValueError(f'tau must be > 0, got {tau}')
        self.gate = nn.Linear(dim, 1)
        self.tau = tau
        self.gumbel = gumbel
        self.reset_parameters()

    def reset_parameters(self):
        """Initialise like the ViT's linears: about half the tokens start active."""
        trunc_normal_(self.gate.weight, std=.02)
        nn.init.zeros_(self.gate.bias)

    def forward(self, x: torch.Tensor, num_extra_tokens: int = 1) -> torch.Tensor:
        """Tokens (B, N, C) -> mask (B, N): exactly 0/1 values."""
        # Gate every token, then drop the extra ones: slicing first would copy x.
        logits = self.gate(x).squeeze(-1)[:, num_extra_tokens:]
        if self.training:
            if self.gumbel:
                # g1 - g2 of two i.i.d. Gumbel(0, 1) draws is Logistic(0, 1).
                u = torch.rand_like(logits).clamp_(1e-6, 1 - 1e-6)
                logits = logits + torch.log(u) - torch.log1p(-u)
            soft = torch.sigmoid(logits / self.tau)
            hard = (soft > 0.5).to(soft.dtype)
            mask = hard - soft.detach() + soft
        else:
            mask = (logits >= 0).to(x.dtype)
        extra = mask.new_ones(mask.shape[0], num_extra_tokens)
        return torch.cat([extra, mask], dim=1)
