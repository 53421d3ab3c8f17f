from .adapter import Adapter, MoEAdapter
from .attention import Attention
from .block import Block
from .dyt_block import DISPATCH_PARTS, DYT_PARTS, DyTBlock, build_adapter, is_dyt_param
from .ffn_expansion import FFN_PARAMS, ExpandedMlp, FFNExpansion
from .head_sharing import SharedHeads, heads_are_shared, share_heads, unshare_heads
from .layer_norm_2d import LayerNorm2d
from .layer_scale import LayerScale
from .mlp import Mlp
from .patch_embed import PatchEmbed
from .pos_embed import resize_pos_embed
from .quick_gelu import QuickGELU
from .rel_pos_attention import RelPosAttention
from .token_dispatcher import TokenDispatcher
from .window_ops import (decomposed_rel_pos_bias, get_rel_pos, resize_rel_pos, window_partition,
                         window_token_mask, window_unpartition)

__all__ = [
    'Adapter', 'Attention', 'Block', 'DISPATCH_PARTS', 'DYT_PARTS', 'DyTBlock', 'ExpandedMlp',
    'FFN_PARAMS', 'FFNExpansion', 'Mlp', 'MoEAdapter', 'PatchEmbed', 'SharedHeads',
    'TokenDispatcher', 'build_adapter', 'heads_are_shared', 'is_dyt_param', 'resize_pos_embed',
    'share_heads', 'unshare_heads', 'LayerNorm2d', 'LayerScale', 'QuickGELU', 'RelPosAttention',
    'decomposed_rel_pos_bias', 'get_rel_pos', 'resize_rel_pos', 'window_partition',
    'window_token_mask', 'window_unpartition'
]
