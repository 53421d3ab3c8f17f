# 12 layers with a linear decrementing schedule (not the paper's, see
# learngene-vit-b-p16-l12-h12-8-6_*): 12 heads in the first layer, falling
# linearly (rounded) to 6 in the last.
_base_ = ['./learngene-vit-b-p16-l12-h12_deit-b-eps10_8xb128-50e_in1k-224px.py']
model = dict(
    backbone=dict(
        arch=dict(
            _delete_=True, num_layers=12, num_heads=(6, 12), head_schedule='linear-decrementing')))
