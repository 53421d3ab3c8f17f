# Semantic segmentation on ADE20K with UperNet on a descendant of the DeiT-B
# learngene (eps = 10; 12 layers, omega = 2: 6 heads of 64), as in the
# authors' rebuttal: base lr 1e-3, 160k iterations, batch 8 (4 GPUs x 2),
# FFN groups and shared heads as independent copies (ffn_sharing='independent',
# how the paper's tables were trained). The backbone logs T-Params (its
# parameters as deployed, every layer's FFN counted) and I-Params (those set
# from the learngene) after initialisation. The learngene's 14x14 position
# embedding is interpolated to the 32x32 grid of 512x512 crops.
_base_ = [
    'mmseg::_base_/models/upernet_vit-b16_ln_mln.py',
    '../_base_/datasets/ade20k_512x512.py',
    'mmseg::_base_/schedules/schedule_160k.py',
    '../_base_/runtimes/mmseg.py',
]
custom_imports = dict(imports=['mmvitdyn'], allow_failed_imports=False)
crop_size = (512, 512)
model = dict(
    pretrained=None,
    data_preprocessor=dict(size=crop_size),
    backbone=dict(
        _delete_=True,
        type='LearngeneViT',
        learngene='checkpoints/learngene_deit-b-p16_eps10_in1k.pth',
        arch=dict(num_layers=12, omega=2),
        ffn_sharing='independent',
        img_size=512,
        drop_path_rate=0.1,
        out_type='featmap',
        out_indices=(2, 5, 8, 11)),
    decode_head=dict(num_classes=150),
    auxiliary_head=dict(num_classes=150))
optim_wrapper = dict(
    _delete_=True,
    type='OptimWrapper',
    optimizer=dict(type='AdamW', lr=1e-3, betas=(0.9, 0.999), weight_decay=0.05),
    paramwise_cfg=dict(
        custom_keys={
            'pos_embed': dict(decay_mult=0.),
            'cls_token': dict(decay_mult=0.),
            'norm': dict(decay_mult=0.),
        }))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-6, by_epoch=False, begin=0, end=1500),
    dict(type='PolyLR', eta_min=0.0, power=1.0, begin=1500, end=160000, by_epoch=False)
]
train_dataloader = dict(batch_size=2)
val_dataloader = dict(batch_size=1)
test_dataloader = val_dataloader
