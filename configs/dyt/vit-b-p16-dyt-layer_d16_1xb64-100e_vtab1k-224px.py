# DyT variant, layer dispatch (paper Sec. 3.3): one dispatcher gates the
# attention and the MLP of a block together. r = 0.7: a skipped token skips
# the whole block, so a higher rate gives about the FLOPs of MLP dispatch at
# 0.5. VTAB-1K 'cifar'; other tasks: start from the task's config and pass
# --cfg-options model.backbone.dispatch=layer model.backbone.target_rate=0.7
_base_ = ['./vit-b-p16-dyt_d16_1xb64-100e_vtab1k-224px.py']
model = dict(backbone=dict(dispatch='layer', target_rate=0.7))
