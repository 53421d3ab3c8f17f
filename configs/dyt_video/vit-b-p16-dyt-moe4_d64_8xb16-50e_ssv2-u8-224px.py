# DyT N = 4 on Something-Something v2, the DyT authors' review comparison (d = 64 for
# all models): the MoE-adapter (paper Sec. 3.4), 4 experts of d = 64 mixed per clip
# frame by a router, merged before use so the cost stays that of one adapter.
# Everything else is vit-b-p16-dyt_d64_8xb16-50e_ssv2-u8-224px.py.
_base_ = ['./vit-b-p16-dyt_d64_8xb16-50e_ssv2-u8-224px.py']
model = dict(backbone=dict(vit=dict(adapter_cfg=dict(num_experts=4))))
