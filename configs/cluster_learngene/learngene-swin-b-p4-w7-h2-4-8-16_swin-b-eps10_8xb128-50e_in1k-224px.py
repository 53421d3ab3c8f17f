# A descendant of the Swin-B learngene (eps = 10) with omega = 2 in every
# stage: 2 / 4 / 8 / 16 heads of 32 (Swin-B: 4 / 8 / 16 / 32), inheriting as
# the Swin-T descendant (learngene-swin-t-p4-w7-h2-4-8-16_*) does; Swin-B's
# depths, widths (128 ... 1024), windows, stochastic depth (0.5) and
# classifier.
_base_ = ['./learngene-swin-t-p4-w7-h2-4-8-16_swin-t-eps10_8xb128-50e_in1k-224px.py']
model = dict(
    backbone=dict(
        learngene='checkpoints/learngene_swin-b-p4-w7_eps10_in1k.pth',
        arch=dict(omega=2),
        drop_path_rate=0.5),
    head=dict(in_channels=1024))
