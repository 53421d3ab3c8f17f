# DyT variant, attention dispatch (paper Sec. 3.3): inactive tokens neither
# query nor serve as keys/values; the MLP sees every token. r = 0.5, the rate
# the paper pairs with it so the variants' FLOPs are comparable. VTAB-1K
# 'cifar'; other tasks: start from the task's config and pass
# --cfg-options model.backbone.dispatch=attn model.backbone.target_rate=0.5
_base_ = ['./vit-b-p16-dyt_d16_1xb64-100e_vtab1k-224px.py']
model = dict(backbone=dict(dispatch='attn', target_rate=0.5))
