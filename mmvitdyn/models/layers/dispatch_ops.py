"""A block part on the active tokens: masked (training) and packed (inference)
forms, equal in evaluation. Masks are (B, N); 0 skips a token, a nonzero value
scales its output (docs/backbones.md)."""
from typing import Callable

import torch
import torch.nn.functional as F

from .attention import Attention

# Largest exponent of the masked softmax: e^80 is finite in float32 (its limit is e^88.7).
MAX_EXPONENT = 80.0


def every_token_active(active: torch.Tensor) -> bool:
    """Whether all of the boolean ``active`` is set; False while tracing."""
    return not torch.compiler.is_compiling() and bool(active.all())


def masked_rows(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor,
                mask: torch.Tensor) -> torch.Tensor:
    """``fn(x) * mask`` for a token-wise ``fn``: x (B, N, C), mask (B, N)."""
    return fn(x) * mask.unsqueeze(-1)


def on_rows(fn: Callable[[torch.Tensor], torch.Tensor], rows: torch.Tensor) -> torch.Tensor:
    """``fn`` on gathered rows (T, C) seen as one sequence (1, T, C) -> (T, C_out): exported,
    its linears stay MatMul + Add as in the dense model (docs/benchmarks.md)."""
    return fn(rows.unsqueeze(0)).squeeze(0)


def add_packed_rows(out: torch.Tensor, fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor,
                    mask: torch.Tensor) -> torch.Tensor:
    """Add :func:`masked_rows` to ``out`` (B, N, C_out) in place, computing only the
    active rows (:func:`on_rows`): x (B, N, C), mask (B, N) nonzero = active -> out."""
    active = mask.flatten() != 0
    if every_token_active(active):
        return out.add_(fn(x) * mask.unsqueeze(-1))
    b, n, c = x.shape
    index = active.nonzero().squeeze(1)
    rows = on_rows(fn, x.reshape(b * n, c).index_select(0, index))
    rows = rows * mask.flatten().index_select(0, index).unsqueeze(-1)
    return out.view(b * n, -1).index_add_(0, index, rows).view(b, n, -1)


def masked_softmax_attention(attn: Attention,
                             x: torch.Tensor,
                             key_mask: torch.Tensor,
                             keep_self: bool = False) -> torch.Tensor:
    """Attention with weights ``w_ij = m_j exp(s_ij) / sum_l m_l exp(s_il)``
    (``m_ii = 1`` with ``keep_self``), differentiable in the mask.

    Args:
        attn (Attention): The attention module.
        x (Tensor): Normalised tokens (B, N, C).
        key_mask (Tensor): (B, N) 0/1 mask (may carry straight-through gradients).
        keep_self (bool): Every token attends to itself. Defaults to False.

    Returns:
        Tensor: (B, N, C), every query's output (masked queries included).
    """
    b, n, _ = x.shape
    q, k, v = attn.qkv_heads(x).unbind(0)
    scores = attn.scores(q, k)
    allowed = key_mask[:, None, None, :]
    if keep_self:
        eye = torch.eye(n, dtype=key_mask.dtype, device=key_mask.device)
        allowed = allowed * (1 - eye) + eye
    peak = scores.masked_fill(allowed == 0, float('-inf')).amax(-1, keepdim=True).detach()
    weights = torch.exp((scores - peak).clamp(max=MAX_EXPONENT)) * allowed
    weights = weights / weights.sum(-1, keepdim=True).clamp_min(torch.finfo(weights.dtype).tiny)
    weights = F.dropout(weights, attn.attn_drop, attn.training)
    out = (weights @ v).transpose(1, 2).reshape(b, n, attn.num_heads * attn.head_dim)
    return attn.proj_drop(attn.proj(out))


def masked_attention(attn: Attention, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Attention among active tokens, inactive ones neither keys nor queries:
    x (B, N, C) normalised, mask (B, N) 0/1 -> (B, N, C)."""
    return masked_softmax_attention(attn, x, mask) * mask.unsqueeze(-1)


def packed_attention(attn: Attention, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """:func:`masked_attention` computing only the active tokens: x (B, N, C)
    normalised, mask (B, N) nonzero = active -> (B, N, C)."""
    active = mask != 0
    if every_token_active(active):
        return attn(x)
    b, n, c = x.shape
    heads, head_dim = attn.num_heads, attn.head_dim
    index = active.flatten().nonzero().squeeze(1)
    qkv = on_rows(attn.qkv, x.reshape(b * n, c).index_select(0, index))
    lengths = active.sum(1)
    # Padded to >= 2 keys: traced (torch.compile, torch.export), a length that may be 1
    # would make the attention mask's broadcasting depend on the data.
    length = max(lengths.max().item(), 2)
    image = torch.div(index, n, rounding_mode='floor')
    slot = (active.cumsum(1) - 1).flatten().index_select(0, index)
    padded = qkv.new_zeros(b, length, qkv.shape[-1])
    padded[image, slot] = qkv
    q, k, v = padded.view(b, length, 3, heads, head_dim).permute(2, 0, 3, 1, 4)
    valid = torch.arange(length, device=x.device) < lengths[:, None]
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=valid[:, None, None, :])
    out = on_rows(attn.proj, out.transpose(1, 2)[image, slot].reshape(-1, heads * head_dim))
    result = out.new_zeros(b * n, c)
    return result.index_copy_(0, index, out).view(b, n, c)
