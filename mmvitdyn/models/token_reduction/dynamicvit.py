"""DynamicViT (Rao et al., NeurIPS 2021): progressive, learned token pruning.

Prediction modules before a few blocks score every remaining patch token;
training samples hard keep/drop decisions with the Gumbel-softmax and hides
dropped tokens from the attention of the others (the paper's masked softmax),
so the sequence length stays fixed and the decisions stay differentiable;
inference keeps the top-scored tokens and really drops the rest (the
sequence shrinks). Here the ViT is frozen and carries AdaptFormer adapters
(the DyT paper's "AdaptFormer + DynamicViT" baseline).
"""
from contextlib import contextmanager
from typing import List, Optional, Sequence

import torch
import torch.nn.functional as F
from mmengine.model.weight_init import trunc_normal_
from mmengine.registry import MODELS
from torch import nn

from ..backbones.dyt_vit import DyTViT
from ..layers import Attention

# Predictor parameters live under this DynamicViT attribute: new, always trained.
PREDICTORS = 'predictors'


def policy_attention(attn: Attention, x: torch.Tensor, policy: torch.Tensor) -> torch.Tensor:
    """Attention in which dropped tokens are keys of no query but themselves.

    The weights are ``exp(s_ij) * P_ij / sum_l exp(s_il) * P_il`` with
    ``P_ij = p_j`` for ``i != j`` and ``P_ii = 1`` (every token still attends
    to itself, so no row is empty): kept tokens see kept tokens only, and the
    gradient reaches the (straight-through) policy ``p``. Unlike DyT's
    :func:`~mmvitdyn.models.layers.dispatch_ops.masked_attention`, dropped
    queries keep their output: the MLP still runs on them in training.

    Args:
        attn (Attention): The attention module.
        x (Tensor): Normalised tokens (B, N, C).
        policy (Tensor): (B, N) 0/1 keep policy, extra tokens 1.

    Returns:
        Tensor: (B, N, C).
    """
    b, n, _ = x.shape
    q, k, v = attn.qkv_heads(x).unbind(0)
    scores = (q @ k.transpose(-2, -1)) * attn.head_dim**-0.5
    eye = torch.eye(n, dtype=policy.dtype, device=policy.device)
    allowed = policy[:, None, None, :] * (1 - eye) + eye
    # The peak over all keys (a constant for the gradient): a dropped key scoring above every
    # allowed one must keep its exp(s_ij - peak) so that d weights / d p_j stays exact.
    peak = scores.amax(-1, keepdim=True).detach()
    weights = torch.exp(scores - peak) * allowed
    weights = weights / weights.sum(-1, keepdim=True).clamp_min(torch.finfo(weights.dtype).tiny)
    weights = F.dropout(weights, attn.attn_drop, attn.training)
    out = (weights @ v).transpose(1, 2).reshape(b, n, attn.num_heads * attn.head_dim)
    return attn.proj_drop(attn.proj(out))


class PolicyAttention(Attention):
    """:class:`Attention` that takes a keep ``policy`` (see :func:`policy_attention`)."""

    def forward(self, x: torch.Tensor, policy: Optional[torch.Tensor] = None) -> torch.Tensor:
        """(B, N, C) -> (B, N, C); ``policy`` (B, N) or None (plain attention)."""
        return super().forward(x) if policy is None else policy_attention(self, x, policy)


class TokenPredictor(nn.Module):
    """DynamicViT's prediction module: keep/drop log-probabilities per token.

    ``h = GELU(Linear(LN(x)))`` is split into a local half ``h[..., :C/2]``
    and a global half averaged over the kept tokens; ``MLP(C -> C/2 -> C/4 -> 2)``
    of their concatenation, log-softmaxed, gives (log p_keep, log p_drop).

    Args:
        dim (int): Token width C.
    """

    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.embed = nn.Linear(dim, dim)
        self.mlp = nn.Sequential(
            nn.Linear(dim, dim // 2), nn.GELU(), nn.Linear(dim // 2, dim // 4), nn.GELU(),
            nn.Linear(dim // 4, 2))
        self.reset_parameters()

    def reset_parameters(self):
        """LayerNorm to identity, linears trunc-normal (std 0.02) with zero bias."""
        self.norm.reset_parameters()
        for module in self.modules():
            if isinstance(module, nn.Linear):
                trunc_normal_(module.weight, std=.02)
                nn.init.zeros_(module.bias)

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """Patch tokens (B, N, C), keep mask (B, N) -> log-probabilities (B, N, 2),
        index 0 = keep."""
        h = F.gelu(self.embed(self.norm(x)))
        half = h.shape[-1] // 2
        local, glob = h[..., :half], h[..., half:]
        weight = keep.unsqueeze(-1)
        # A mask sum is 0 or >= 1: the clamp only avoids 0 / 0 when nothing is kept.
        glob = (glob * weight).sum(1, keepdim=True) / weight.sum(1, keepdim=True).clamp(min=1)
        return self.mlp(torch.cat([local, glob.expand_as(h[..., half:])], -1)).log_softmax(-1)


@MODELS.register_module()
class DynamicViT(DyTViT):
    """AdaptFormer ViT (frozen, adapters in every block) with DynamicViT's pruning.

    Before block ``prune_loc[k]`` a :class:`TokenPredictor` keeps
    ``int(N * keep_rate ** (k + 1))`` of the N patch tokens (the official
    code's rule, a floor: 196 -> 137, 96, 67 at rho = 0.7); the class token is
    always kept. Training: hard Gumbel-softmax decisions (multiplied by the
    previous stage's) hide dropped tokens from the other tokens' attention
    (:func:`policy_attention`); the decisions of the last forward are in
    :attr:`decisions`. Evaluation: ``packed=True`` (default) gathers the
    top-scored tokens and drops the rest; ``packed=False`` applies the same
    selection as a mask to the full sequence (equal class-token outputs, for
    tests). In :meth:`complete_mode` nothing is pruned (the teacher pass).

    Trainable while the ViT is frozen: adapters, predictors (and the head).

    Args:
        prune_loc (Sequence[int]): Blocks (0-based, increasing, > 0) before which
            tokens are pruned. Defaults to (3, 6, 9), the paper's for 12 blocks.
        keep_rate (float): rho in (0, 1). Defaults to 0.7.
        gumbel_tau (float): Gumbel-softmax temperature (> 0). Defaults to 1,
            PyTorch's default that the official code uses.
        **kwargs: Arguments of :class:`DyTViT`; ``dispatch`` must be None
            (default here): DynamicViT prunes, it does not dispatch, so DyT's
            ``target_rate`` and ``dispatcher_cfg`` have no effect.

    Attributes:
        decisions (list[Tensor]): Per stage, the (B, N) keep mask over the patch
            tokens of the last masked forward (straight-through in training).
        last_tokens (Tensor): The final normalised tokens (B, 1 + N', C) of the
            last forward (N' = N unless packed evaluation pruned tokens).
    """
    OUT_TYPES = {'cls_token'}

    def __init__(self,
                 *args,
                 prune_loc: Sequence[int] = (3, 6, 9),
                 keep_rate: float = 0.7,
                 gumbel_tau: float = 1.0,
                 dispatch: Optional[str] = None,
                 **kwargs):
        if dispatch is not None:
            raise ValueError(f'dispatch={dispatch!r}: DynamicViT prunes tokens and has no '
                             'DyT dispatch; allowed: None')
        if kwargs.get('token_reduction') is not None:
            raise ValueError(f"token_reduction={kwargs['token_reduction']}: DynamicViT prunes "
                             'with its own predictors; allowed: None')
        if not 0 < keep_rate < 1:
            raise ValueError(f'keep_rate={keep_rate} must lie in (0, 1)')
        if gumbel_tau <= 0:
            raise ValueError(f'gumbel_tau={gumbel_tau} must be > 0')
        super().__init__(*args, dispatch=None, **kwargs)
        if self.out_indices != (self.num_layers - 1, ):
            raise ValueError(f'out_indices={self.out_indices}: DynamicViT returns the last '
                             f'block only (allowed: -1 or {self.num_layers - 1})')
        prune_loc = tuple(prune_loc)
        valid = range(1, self.num_layers)
        if (not prune_loc or any(i not in valid for i in prune_loc)
                or list(prune_loc) != sorted(set(prune_loc))):
            raise ValueError(f'prune_loc={prune_loc} must be increasing block indices in '
                             f'1..{self.num_layers - 1}')
        self.prune_loc = prune_loc
        self.keep_rate = keep_rate
        self.gumbel_tau = gumbel_tau
        self.predictors = nn.ModuleList(TokenPredictor(self.embed_dims) for _ in prune_loc)
        if self.freeze_pretrained:  # again: the predictors did not exist at DyTViT's freeze
            self._freeze()
        self.complete = False
        self.packed = True
        self.decisions: List[torch.Tensor] = []
        self.last_tokens: Optional[torch.Tensor] = None

    def build_block(self, index: int, **kwargs) -> nn.Module:
        return super().build_block(index, attn_layer=PolicyAttention, **kwargs)

    def is_trainable_name(self, name: str) -> bool:
        return name.startswith(PREDICTORS + '.') or super().is_trainable_name(name)

    def init_weights(self):
        super().init_weights()
        for predictor in self.predictors:
            predictor.reset_parameters()

    def keep_counts(self, num_patches: int) -> List[int]:
        """Patch tokens kept after each pruning stage: ``int(N * rho^k)``, k = 1, 2, ..."""
        return [int(num_patches * self.keep_rate**(k + 1)) for k in range(len(self.prune_loc))]

    @contextmanager
    def complete_mode(self):
        """Within the context no token is pruned (the full model, DynamicViT's teacher)."""
        previous, self.complete = self.complete, True
        try:
            yield self
        finally:
            self.complete = previous

    def set_packed(self, packed: bool) -> None:
        """Choose the packed (tokens dropped) or masked evaluation path."""
        super().set_packed(packed)
        self.packed = packed

    def _decide(self, x: torch.Tensor, keep: torch.Tensor, stage: int, count: int) -> torch.Tensor:
        """Masked path: keep mask (B, N) of stage ``stage`` from tokens (B, 1 + N, C)."""
        scores = self.predictors[stage](x[:, self.num_extra_tokens:], keep)
        if self.training:
            return F.gumbel_softmax(scores, tau=self.gumbel_tau, hard=True)[..., 0] * keep
        keep_score = scores[..., 0].masked_fill(keep == 0, float('-inf'))
        index = keep_score.topk(count, dim=1).indices
        return torch.zeros_like(keep).scatter_(1, index, 1.0)

    def _prune(self, x: torch.Tensor, stage: int, count: int) -> torch.Tensor:
        """Packed path: tokens (B, 1 + M, C) -> (B, 1 + count, C), kept in their order."""
        extra = self.num_extra_tokens
        patches = x[:, extra:]
        scores = self.predictors[stage](patches, patches.new_ones(patches.shape[:2]))
        index = scores[..., 0].topk(count, dim=1).indices.sort(dim=1).values
        kept = patches.gather(1, index.unsqueeze(-1).expand(-1, -1, x.shape[-1]))
        return torch.cat([x[:, :extra], kept], dim=1)

    def forward(self, x: torch.Tensor) -> tuple:
        """Images (B, 3, H, W) -> (class token (B, C), )."""
        x, grid = self.embed(x)
        b, extra = x.shape[0], self.num_extra_tokens
        counts = dict(zip(self.prune_loc, self.keep_counts(x.shape[1] - extra)))
        pruning = not self.complete
        packed = pruning and self.packed and not self.training
        keep = x.new_ones(b, x.shape[1] - extra)
        policy = None
        self.decisions = []
        for i, block in enumerate(self.blocks):
            if pruning and i in counts:
                stage = self.prune_loc.index(i)
                if packed:
                    x = self._prune(x, stage, counts[i])
                else:
                    keep = self._decide(x, keep, stage, counts[i])
                    self.decisions.append(keep)
                    policy = torch.cat([keep.new_ones(b, extra), keep], dim=1)
            x = block(x) if policy is None else block(x, policy=policy)
        x = self.norm(x)
        self.last_tokens = x
        return (self.format_output(x, grid), )
