from .attention import Attention
from .block import Block
from .mlp import Mlp
from .patch_embed import PatchEmbed
from .pos_embed import resize_pos_embed

__all__ = ['Attention', 'Block', 'Mlp', 'PatchEmbed', 'resize_pos_embed']
