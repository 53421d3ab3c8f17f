from .base import ReductionPass, TokenReduction
from .dynamicvit import DynamicViT, PolicyAttention, TokenPredictor, policy_attention
from .evit import EViT
from .tome import ToMe, bipartite_soft_matching

__all__ = [
    'DynamicViT', 'EViT', 'PolicyAttention', 'ReductionPass', 'ToMe', 'TokenPredictor',
    'TokenReduction', 'bipartite_soft_matching', 'policy_attention'
]
