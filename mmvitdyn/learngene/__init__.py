"""Cluster-Learngene (NeurIPS 2024): condense an ancestry ViT into a learngene
and initialise descendants of elastic size from it.

One module per step: ``attention_distance`` (MAD per head),
``head_clustering`` (DBSCAN / k-means, priority order), ``ffn_grouping``
(which adjacent layers share an FFN), ``artefact`` (the learngene file),
``inheritance`` (priority weight-sharing, depth rule, FFN sharing modes) and
``descendant`` (the descendant backbones ``LearngeneViT`` and
``DyTLearngeneViT``); ``builder`` runs steps 1-4 and ``visualization`` plots
the MAD table. The paper's baselines are initialisation modes of the same
descendants, from their own learngenes: ``block_learngene`` (Heuristic- and
Auto-Learngene: whole ancestry blocks) and ``tleg`` (TLEG: theta_A, theta_B
and the Aux-Net that learns them); ``fields`` holds what all learngene files
share (the ancestry description, block state dicts, field checks). ``swin``
holds a Swin Transformer ancestry's learngene (heads clustered per block on
their MAD inside the windows, FFNs grouped within a stage) and its
descendant ``LearngeneSwin``. The
layers a descendant uses (the learnable FFN expansion, tied heads) are in
:mod:`mmvitdyn.models.layers`: this package reads the models, the models do
not import it.
"""
from .artefact import CENTROIDS, FFNGroup, Learngene, LearngeneLayer
from .attention_distance import (AttentionDistanceRecorder, WindowAttentionDistanceRecorder,
                                 attention_distance, mean_attention_distance, patch_attention,
                                 patch_distances, record_attention_distance)
from .block_learngene import BlockLearngene, block_sources, learngene_blocks
from .builder import build_learngene, check_build_args, condense
from .descendant import INIT_MODES, DyTLearngeneViT, LearngeneViT
from .ffn_grouping import explicit_groups, group_ffns
from .head_clustering import (HeadCluster, cluster_heads, dbscan_clusters, dbscan_labels,
                              kmeans_clusters, make_cluster, priority_order)
from .inheritance import (FFN_SHARING, HEAD_SCHEDULES, LINEAR_HEAD_SCHEDULES, DescendantPlan,
                          FFNRun, copy_into, ffn_runs, head_assignment, heads_per_layer,
                          inherit_attention, layer_sources, plan_descendant, plan_whole_layers)
from .swin import LearngeneSwin, SwinLearngene, condense_swin
from .tleg import LinearExpansionViT, TLEGLearngene, expansion_coefficients
from .visualization import plot_mad

__all__ = [
    'AttentionDistanceRecorder', 'BlockLearngene', 'CENTROIDS', 'DescendantPlan', 'DyTLearngeneViT',
    'FFNGroup', 'FFNRun', 'FFN_SHARING', 'HEAD_SCHEDULES', 'HeadCluster', 'INIT_MODES',
    'LINEAR_HEAD_SCHEDULES', 'Learngene', 'LearngeneLayer', 'LearngeneViT', 'LearngeneSwin',
    'LinearExpansionViT', 'SwinLearngene', 'TLEGLearngene', 'WindowAttentionDistanceRecorder',
    'attention_distance', 'block_sources', 'build_learngene', 'check_build_args', 'cluster_heads',
    'condense', 'condense_swin', 'copy_into', 'dbscan_clusters', 'dbscan_labels',
    'expansion_coefficients', 'explicit_groups', 'ffn_runs', 'group_ffns', 'head_assignment',
    'heads_per_layer', 'inherit_attention', 'kmeans_clusters', 'layer_sources', 'learngene_blocks',
    'make_cluster', 'mean_attention_distance', 'patch_attention', 'patch_distances',
    'plan_descendant', 'plan_whole_layers', 'plot_mad', 'priority_order',
    'record_attention_distance'
]
