# Cluster-Learngene's downstream table: 6-layer DeiT-S-shaped models on 13 data
# sets, initialised by fine-tuning DeiT-S (Pretraining-Finetuning), at random
# (From-Scratch), from the Heuristic-, Auto- and TLEG learngenes, and from the
# Cluster-Learngene learngene (eps = 10); 500 epochs, 8 GPUs x 64 per cell.
# The learngene rows read their learngene files (configs/cluster_learngene/README.md).
#   python tools/sweep.py configs/sweeps/cluster-learngene_table2_downstream.py --dry-run
configs = {
    'pretrain-finetune':
    'configs/cluster_learngene/deit-s-p16_pretrain-finetune_8xb64-500e_*-224px.py',
    'scratch':
    'configs/cluster_learngene/learngene-vit-s-p16-l6-h6_scratch_8xb64-500e_*-224px.py',
    'heuristic-learngene':
    'configs/cluster_learngene/learngene-vit-s-p16-l6-h6_deit-s-heuristic_8xb64-500e_*-224px.py',
    'auto-learngene':
    'configs/cluster_learngene/learngene-vit-s-p16-l6-h6_deit-s-auto_8xb64-500e_*-224px.py',
    'tleg':
    'configs/cluster_learngene/learngene-vit-s-p16-l6-h6_tleg-aux-vit-s_8xb64-500e_*-224px.py',
    'cluster-learngene':
    'configs/cluster_learngene/learngene-vit-s-p16-l6-h6_deit-s-eps10_8xb64-500e_*-224px.py',
}
launcher = dict(type='pytorch', gpus=8)
table = dict(rows=['config'], columns='match', metrics=['accuracy/top1', 't_params', 'i_params'])
