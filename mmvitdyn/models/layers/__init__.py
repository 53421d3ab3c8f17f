from .adapter import Adapter, MoEAdapter
from .attention import Attention
from .block import Block
from .dyt_block import DISPATCH_PARTS, DyTBlock, build_adapter
from .mlp import Mlp
from .patch_embed import PatchEmbed
from .pos_embed import resize_pos_embed
from .token_dispatcher import TokenDispatcher

__all__ = [
    'Adapter', 'Attention', 'Block', 'DISPATCH_PARTS', 'DyTBlock', 'Mlp', 'MoEAdapter',
    'PatchEmbed', 'TokenDispatcher', 'build_adapter', 'resize_pos_embed'
]
