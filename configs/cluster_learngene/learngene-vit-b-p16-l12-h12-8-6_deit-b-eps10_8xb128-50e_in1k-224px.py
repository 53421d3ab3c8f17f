# The paper's "decrementing" descendant: omega = 1, 1.5, 2 over the three
# thirds of the depth, i.e. 12 heads in layers 0-3, 8 in layers 4-7 and 6 in
# layers 8-11 (heads of 64).
_base_ = ['./learngene-vit-b-p16-l12-h12_deit-b-eps10_8xb128-50e_in1k-224px.py']
model = dict(backbone=dict(arch=dict(_delete_=True, num_layers=12, head_schedule='decrementing')))
