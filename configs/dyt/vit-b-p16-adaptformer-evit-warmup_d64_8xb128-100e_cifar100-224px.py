# AdaptFormer + EViT on CIFAR-100 with EViT's keep-rate warm-up: the
# AdaptFormer + EViT run whose keep rate falls from 1 to 0.7 by EViT's half
# cosine (EViTKeepRateHook). This reproduces EViT's schedule for training from
# scratch, scaled: its public run_code.sh keeps every token for the first 10 of
# its 300 epochs and shrinks over the next 100; scaled to this 100-epoch
# schedule that is start_epoch 3 (10/300 of 100, rounded) and shrink_epochs 33
# (100/300), so the target holds from epoch 36 on. EViT's fine-tuning recipe,
# finetune.sh (shrink_start_epoch 0, shrink_epochs 0), has no warm-up: it keeps
# 0.7 from the first iteration, as the config this one changes does, which is
# the nearer setting for adapters on a pretrained ViT. This one is an ablation,
# not a setting of the DyT or EViT paper: the DyT authors do not state a warm-up.
_base_ = ['./vit-b-p16-adaptformer-evit_d64_8xb128-100e_cifar100-224px.py']
custom_hooks = [
    dict(type='DispatchRateHook'),
    dict(type='BestOverEpochsHook', key='accuracy/top1', rule='greater'),
    dict(type='EViTKeepRateHook', start_epoch=3, shrink_epochs=33),
]
