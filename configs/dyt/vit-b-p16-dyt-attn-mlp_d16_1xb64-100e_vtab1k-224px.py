# DyT variant, attention-MLP dispatch (paper Sec. 3.3): one dispatcher before
# the attention, one before the MLP. r = 0.7: both parts are skipped, so a
# higher rate gives about the FLOPs of MLP dispatch at 0.5. VTAB-1K 'cifar';
# other tasks: start from the task's config and pass
# --cfg-options model.backbone.dispatch=attn_mlp model.backbone.target_rate=0.7
_base_ = ['./vit-b-p16-dyt_d16_1xb64-100e_vtab1k-224px.py']
model = dict(backbone=dict(dispatch='attn_mlp', target_rate=0.7))
