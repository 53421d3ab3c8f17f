# DyT on VTAB-1K: ViT-B/16 (ImageNet-21k) frozen, MLP dispatch at target rate
# r = 0.5, adapters with d = 16 and scale s = 1.0 (the paper's VTAB-1K
# setting), batch 64 on one GPU, 100 epochs: the recipe of the public
# train_vtab.sh, setting by setting in docs/recipes.md.
# The paper's number is the best test accuracy over the 100 epochs, a model
# selected on the test split: the log gives it as accuracy/top1_best_epoch
# (BestOverEpochsHook, ./_base_/default_runtime.py) next to each epoch's
# accuracy/top1, whose last value is the last-epoch accuracy.
#
# Template of the 19 task configs vit-b-p16-dyt_d16_1xb64-100e_vtab1k-{task}-224px.py
# and of the variants in this folder; as it stands it trains the 'cifar'
# task, the dataset base's default. A task config sets the task's data root
# in each dataloader and its class count (see the header of
# configs/_base_/datasets/vtab1k_bs64_224.py). For a data set of your own,
# put your data base in place of the VTAB-1K one (docs/finetune_custom_data.md).
_base_ = [
    './_base_/vit-b-p16-dyt_d16_vtab1k-recipe.py',
    '../_base_/datasets/vtab1k_bs64_224.py',
]
model = dict(head=dict(num_classes=100))
