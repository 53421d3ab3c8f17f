# Baseline: plain ViTDet, every backbone weight fine-tuned (no adapters, no
# dispatch), with ViTDet's layer-wise lr decay of 0.7 over the 12 blocks.
_base_ = ['./mask-rcnn_vitdet-b-dyt_d128_8xb4-12e_coco-1024x1024.py']
model = dict(backbone=dict(dispatch=None, adapter_cfg=None, freeze_pretrained=False))
optim_wrapper = dict(paramwise_cfg=dict(layer_decay_rate=0.7))
