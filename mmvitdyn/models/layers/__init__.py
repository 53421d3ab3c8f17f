from ...lazy_registry import lazy_exports
from .adapter import AdaMixAdapter, Adapter, MoEAdapter
from .adapter_block import AdapterBlock, build_adapter
from .attention import Attention
from .block import Block
from .dispatch_ops import masked_softmax_attention
from .dyt_block import DISPATCH_PARTS, GATED_SUBLAYERS, DyTBlock
from .ffn_expansion import FFN_PARAMS, FFNExpansion, expanded_mlp
from .head_sharing import (SHARED_HEAD_PARAMS, SharedHeads, attention_with_shared_heads,
                           heads_are_shared, share_heads, supplied_head_name, unshare_heads)
from .layer_norm_2d import LayerNorm2d
from .layer_scale import LayerScale
from .mlp import Mlp
from .patch_embed import PatchEmbed
from .policy_attention import PolicyAttention
from .pos_embed import resize_pos_embed
from .rel_pos_attention import RelPosAttention
from .supplied_tensors import hold, release, supplied
from .token_dispatcher import TokenDispatcher
from .token_predictor import TokenPredictor
from .window_ops import (decomposed_rel_pos_bias, get_rel_pos, resize_rel_pos, window_partition,
                         window_token_mask, window_unpartition)

__getattr__ = lazy_exports(__name__)

__all__ = [
    'AdaMixAdapter', 'Adapter', 'AdapterBlock', 'Attention', 'Block', 'DISPATCH_PARTS', 'DyTBlock',
    'GATED_SUBLAYERS', 'FFN_PARAMS', 'FFNExpansion', 'Mlp', 'MoEAdapter', 'PatchEmbed',
    'PolicyAttention', 'SHARED_HEAD_PARAMS', 'SharedHeads', 'TokenDispatcher', 'TokenPredictor',
    'attention_with_shared_heads', 'build_adapter', 'expanded_mlp', 'heads_are_shared',
    'masked_softmax_attention', 'resize_pos_embed', 'share_heads', 'supplied_head_name',
    'unshare_heads', 'LayerNorm2d', 'LayerScale', 'RelPosAttention', 'decomposed_rel_pos_bias',
    'get_rel_pos', 'hold', 'release', 'resize_rel_pos', 'supplied', 'window_partition',
    'window_token_mask', 'window_unpartition'
]
