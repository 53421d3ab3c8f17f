from .base import ReductionPass, TokenReduction
from .evit import EViT
from .tome import ToMe, bipartite_soft_matching

__all__ = ['EViT', 'ReductionPass', 'ToMe', 'TokenReduction', 'bipartite_soft_matching']
