"""Cluster-Learngene (NeurIPS 2024): condense an ancestry ViT into a learngene
and initialise descendants of elastic size from it.

One module per step: ``attention_distance`` (MAD per head),
``head_clustering`` (DBSCAN / k-means, priority order), ``ffn_grouping``
(which adjacent layers share an FFN), ``artefact`` (the learngene file),
``inheritance`` (priority weight-sharing, depth rule) and ``ffn_expansion``
(the learnable FFN map); ``builder`` runs steps 1-4 and ``visualization``
plots the MAD table. The descendant backbone is
:class:`mmvitdyn.models.backbones.LearngeneViT`.
"""
from .artefact import CENTROIDS, FFNGroup, Learngene, LearngeneLayer
from .attention_distance import (AttentionDistanceRecorder, attention_distance,
                                 mean_attention_distance, patch_attention, patch_distances,
                                 record_attention_distance)
from .builder import build_learngene
from .ffn_expansion import ExpandedMlp, FFNExpansion
from .ffn_grouping import explicit_groups, group_ffns
from .head_clustering import (HeadCluster, cluster_heads, dbscan_clusters, dbscan_labels,
                              kmeans_clusters, make_cluster, priority_order)
from .inheritance import (DescendantPlan, FFNRun, copy_into, ffn_runs, head_assignment,
                          heads_per_layer, inherit_attention, layer_sources, plan_descendant)
from .visualization import plot_mad

__all__ = [
    'AttentionDistanceRecorder', 'CENTROIDS', 'DescendantPlan', 'ExpandedMlp', 'FFNExpansion',
    'FFNGroup', 'FFNRun', 'HeadCluster', 'Learngene', 'LearngeneLayer', 'attention_distance',
    'build_learngene', 'cluster_heads', 'copy_into', 'dbscan_clusters', 'dbscan_labels',
    'explicit_groups', 'ffn_runs', 'group_ffns', 'head_assignment', 'heads_per_layer',
    'inherit_attention', 'kmeans_clusters', 'layer_sources', 'make_cluster',
    'mean_attention_distance', 'patch_attention', 'patch_distances', 'plan_descendant', 'plot_mad',
    'priority_order', 'record_attention_distance'
]
