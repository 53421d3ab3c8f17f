"""Cluster-Learngene (NeurIPS 2024): condense an ancestry into a learngene and initialise
descendants of elastic size from it. One module per step (``attention_distance``,
``head_clustering``, ``ffn_grouping``, ``builder``, ``inheritance``), one folder per part
by family (``ancestries/``, ``artefacts/``, ``descendants/``); see docs/learngene.md."""
from ..lazy_registry import lazy_exports
from ..models.backbones import LinearExpansionViT, expansion_coefficients
from .ancestries import (CENTROIDS, Ancestry, AttentionDistanceRecorder, CondenseSettings,
                         ViTAncestry, ancestry_for)
from .artefacts import (BlockLearngene, FFNGroup, Learngene, LearngeneLayer, LeViTBlockLearngene,
                        LeViTLearngene, SwinLearngene, TLEGLearngene, block_sources,
                        learngene_blocks)
from .attention_distance import attention_distance, patch_attention, patch_distances
from .builder import build_learngene, condense, record_attention_distance
from .descendants import INIT_MODES, DyTLearngeneViT, LearngeneViT
from .ffn_grouping import explicit_groups, group_ffns
from .head_clustering import (HeadCluster, cluster_heads, dbscan_labels, kmeans_clusters,
                              make_cluster, priority_order)
from .inheritance import (FFN_SHARING, HEAD_SCHEDULES, LINEAR_HEAD_SCHEDULES, DescendantPlan,
                          FFNRun, copy_into, ffn_runs, head_assignment, heads_from_omega,
                          heads_per_layer, inherit_attention, layer_sources, plan_descendant,
                          plan_whole_layers)
from .visualization import plot_mad

__getattr__ = lazy_exports(__name__)

__all__ = [
    'Ancestry', 'AttentionDistanceRecorder', 'BlockLearngene', 'CENTROIDS', 'CondenseSettings',
    'DescendantPlan', 'DyTLearngeneViT', 'FFNGroup', 'FFNRun', 'FFN_SHARING', 'HEAD_SCHEDULES',
    'HeadCluster', 'INIT_MODES', 'LINEAR_HEAD_SCHEDULES', 'LeViTBlockLearngene', 'LeViTLearngene',
    'Learngene', 'LearngeneLayer', 'LearngeneViT', 'LinearExpansionViT', 'SwinLearngene',
    'TLEGLearngene', 'ViTAncestry', 'ancestry_for', 'attention_distance', 'block_sources',
    'build_learngene', 'cluster_heads', 'condense', 'copy_into', 'dbscan_labels',
    'expansion_coefficients', 'explicit_groups', 'ffn_runs', 'group_ffns', 'head_assignment',
    'heads_from_omega', 'heads_per_layer', 'inherit_attention', 'kmeans_clusters', 'layer_sources',
    'learngene_blocks', 'make_cluster', 'patch_attention', 'patch_distances', 'plan_descendant',
    'plan_whole_layers', 'plot_mad', 'priority_order', 'record_attention_distance'
]
