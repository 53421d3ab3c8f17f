"""DynamicViT's prediction module."""
import torch
import torch.nn.functional as F
from mmengine.model.weight_init import trunc_normal_
from torch import nn


class TokenPredictor(nn.Module):
    """Keep/drop log-probabilities per token of width ``dim`` (docs/design_notes.md)."""

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
        """Tokens (B, N, C), keep mask (B, N) -> log-probabilities (B, N, 2), 0 = keep."""
        h = F.gelu(self.embed(self.norm(x)))
        half = h.shape[-1] // 2
        local, glob = h[..., :half], h[..., half:]
        weight = keep.unsqueeze(-1)
        # A mask sum is 0 or >= 1: the clamp only avoids 0 / 0 when nothing is kept.
        glob = (glob * weight).sum(1, keepdim=True) / weight.sum(1, keepdim=True).clamp(min=1)
        logits = self.mlp(torch.cat([local, glob.expand_as(h[..., half:])], -1))
        # log-softmax in float32, as CUDA autocast computes it (CPU autocast does not):
        # log p near log(1/2) has bfloat16 steps of 2^-8, which tie the ranked keep scores.
        return logits.log_softmax(-1, torch.promote_types(logits.dtype, torch.float32)).to(x.dtype)
