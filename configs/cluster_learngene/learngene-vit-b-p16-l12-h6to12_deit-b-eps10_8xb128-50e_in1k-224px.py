# 12 layers with a linear incrementing schedule (not the paper's, see
# learngene-vit-b-p16-l12-h6-8-12_*): 6 heads in the first layer, rising
# linearly (rounded) to 12 in the last.
_base_ = ['./learngene-vit-b-p16-l12-h12_deit-b-eps10_8xb128-50e_in1k-224px.py']
model = dict(
    backbone=dict(
        arch=dict(
            _delete_=True, num_layers=12, num_heads=(6, 12), head_schedule='linear-incrementing')))
