"""FLOP handles (one multiply-add one FLOP) for operators mmengine's counter leaves out."""
import math
from typing import Any, Dict, List

from mmengine.analysis.jit_handles import get_shape

# Fused attention hides its two matmuls from op-level counters. The public op
# is what a trace records; the back-end kernels are listed for traces that
# record them instead. All take (query, key, value, ...).
SDPA_OPS = (
    'aten::scaled_dot_product_attention',
    'aten::_scaled_dot_product_attention_math',
    'aten::_scaled_dot_product_flash_attention',
    'aten::_scaled_dot_product_flash_attention_for_cpu',
    'aten::_scaled_dot_product_efficient_attention',
    'aten::_scaled_dot_product_cudnn_attention',
    'aten::_scaled_dot_product_fused_attention_overrideable',
)


def sdpa_flop_jit(inputs: List[Any], outputs: List[Any]) -> int:
    """``q @ k^T`` and ``weights @ v`` of attention with q (..., N_q, D),
    k (..., N_k, D), v (..., N_k, D_v): ``prod(...) * N_q * N_k * (D + D_v)``,
    over the query's batch dims."""
    q, k, v = (get_shape(value) for value in inputs[:3])
    *batch, n_q, d = q
    n_k, d_v = k[-2], v[-1]
    return math.prod(batch) * n_q * n_k * (d + d_v)


def baddbmm_flop_jit(inputs: List[Any], outputs: List[Any]) -> int:
    """``input + batch1 @ batch2`` with batch1 (B, N, K), batch2 (B, K, M): B*N*K*M."""
    b, n, k = get_shape(inputs[1])
    return b * n * k * get_shape(inputs[2])[-1]


def extra_flop_handles() -> Dict[str, Any]:
    """Operator name -> handle, for ``FlopAnalyzer.set_op_handle(**handles)``."""
    handles = dict.fromkeys(SDPA_OPS, sdpa_flop_jit)
    handles['aten::baddbmm'] = baddbmm_flop_jit
    return handles
