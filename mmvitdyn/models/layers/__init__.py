from .adapter import Adapter, MoEAdapter
from .attention import Attention
from .block import Block
from .dyt_block import DISPATCH_PARTS, DyTBlock, build_adapter
from .layer_norm_2d import LayerNorm2d
from .mlp import Mlp
from .patch_embed import PatchEmbed
from .pos_embed import resize_pos_embed
from .rel_pos_attention import RelPosAttention
from .token_dispatcher import TokenDispatcher
from .window_ops import (decomposed_rel_pos_bias, get_rel_pos, resize_rel_pos, window_partition,
                         window_token_mask, window_unpartition)

__all__ = [
    'Adapter', 'Attention', 'Block', 'DISPATCH_PARTS', 'DyTBlock', 'Mlp', 'MoEAdapter',
    'PatchEmbed', 'TokenDispatcher', 'build_adapter', 'resize_pos_embed',
    'LayerNorm2d', 'RelPosAttention', 'decomposed_rel_pos_bias', 'get_rel_pos', 'resize_rel_pos',
    'window_partition', 'window_token_mask', 'window_unpartition'
]
