# DyT on the MAE-pretrained ViT-B/16 for CIFAR-100: the ViT-B/16 CIFAR-100
# recipe with MAE's weights and mean/std (../_base_/models/vit-families.py).
# MAE's own fine-tuning pools the patch tokens (global_pool); this keeps
# DyT's class-token head, as the DyT recipe does.
_base_ = ['./vit-b-p16-dyt_d64_8xb128-100e_cifar100-224px.py', '../_base_/models/vit-families.py']
model = dict(data_preprocessor={{_base_.imagenet_norm}}, backbone={{_base_.mae_b16}})
