# Cluster-Learngene's ImageNet-1k table: descendants of 6, 9, 10, 11 and 12
# layers from the DeiT-Ti, -S and -B learngenes (eps = 10, 50 epochs), against
# fine-tuning the pretrained DeiTs for as long and training the 12-layer
# DeiT-B-shaped descendant from scratch (100 epochs). 8 GPUs x 128 per cell.
# The descendants read their learngene files (see configs/cluster_learngene/README.md).
#   python tools/sweep.py configs/sweeps/cluster-learngene_table1_in1k.py --dry-run
configs = {
    'cluster-learngene-ti':
    'configs/cluster_learngene/learngene-vit-ti-p16-l*-h3_deit-ti-eps10_8xb128-50e_in1k-224px.py',
    'cluster-learngene-s':
    'configs/cluster_learngene/learngene-vit-s-p16-l*-h6_deit-s-eps10_8xb128-50e_in1k-224px.py',
    'cluster-learngene-b':
    'configs/cluster_learngene/learngene-vit-b-p16-l*-h6_deit-b-eps10_8xb128-50e_in1k-224px.py',
    'pretrain-finetune':
    'configs/cluster_learngene/deit-*-p16_pretrain-finetune_8xb128-50e_in1k-224px.py',
    'scratch':
    'configs/cluster_learngene/learngene-vit-b-p16-l12-h6_scratch_8xb128-100e_in1k-224px.py',
}
launcher = dict(type='pytorch', gpus=8)
# A row per model: the method and its layers (descendants) or size (DeiTs).
table = dict(rows=['config', 'match'], metrics=['accuracy/top1', 't_params', 'i_params'])
