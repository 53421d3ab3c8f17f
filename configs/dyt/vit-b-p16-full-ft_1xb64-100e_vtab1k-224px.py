# Full fine-tuning baseline: no dispatch, no adapter, every ViT weight trains,
# with the DyT recipe so only what trains differs (full fine-tuning often
# prefers a smaller lr; VPT and NOAH search it per task). VTAB-1K 'cifar';
# other tasks: start from the task's config and pass --cfg-options
# model.backbone.dispatch=None model.backbone.adapter_cfg=None
# model.backbone.freeze_pretrained=False
_base_ = ['./vit-b-p16-dyt_d16_1xb64-100e_vtab1k-224px.py']
model = dict(backbone=dict(dispatch=None, adapter_cfg=None, freeze_pretrained=False))
