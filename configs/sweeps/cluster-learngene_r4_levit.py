# Cluster-Learngene on a hybrid ancestry, the rebuttal's LeViT table (R4, seed
# 000_7130df39bf8bc907.txt:23-25): LeViT-192-shaped models (3 / 5 / 6 heads,
# 4 / 4 / 4 blocks) on ImageNet-1k and CIFAR-100, initialised by fine-tuning
# LeViT-192 (Pretraining-Finetuning), at random (From-Scratch), from its
# Heuristic- and Auto-Learngene blocks, and from the Cluster-Learngene
# learngene (eps = 10, "clustering and expansion on the MSA and FFN in stages
# 1-3"); fine-tuned 50 epochs on ImageNet and 500 on CIFAR-100 (line 25), From
# Scratch 100 on ImageNet (line 109, Table 1's convention). 8 GPUs per cell.
# The table itself did not survive in the seed, so its rows are those of the
# paper's comparisons that are defined on a LeViT. TLEG is not among them: its
# Aux-Net expands two learned blocks linearly into every layer of one width
# (github.com/AlphaXia/TLEG at 6e30a5c defines Aux-Nets for DeiT-S and DeiT-B
# only, aux_models.py:20-35), and LeViT's stages have three widths and head
# counts; a per-stage expansion would be a method of ours, not TLEG's.
# The descendants read their learngene files (configs/cluster_learngene/README.md).
#   python tools/sweep.py configs/sweeps/cluster-learngene_r4_levit.py --dry-run
configs = {
    'pretrain-finetune':
    'configs/cluster_learngene/levit-192_pretrain-finetune_8xb*-224px.py',
    'scratch':
    'configs/cluster_learngene/learngene-levit-192-h3-5-6_scratch_8xb*-224px.py',
    'heuristic-learngene':
    'configs/cluster_learngene/learngene-levit-192-h3-5-6_levit-192-heuristic_8xb*-224px.py',
    'auto-learngene':
    'configs/cluster_learngene/learngene-levit-192-h3-5-6_levit-192-auto_8xb*-224px.py',
    'cluster-learngene':
    'configs/cluster_learngene/learngene-levit-192-h3-5-6_levit-192-eps10_8xb*-224px.py',
}
launcher = dict(type='pytorch', gpus=8)
# A row per method and run (batch, epochs and data set: what the * matched).
table = dict(rows=['config', 'match'], metrics=['accuracy/top1', 't_params', 'i_params'])
