# The paper's descendant fine-tuning: AdamW, lr 5e-4 x batch / 512 (1e-3 for a
# total batch of 1024), weight decay 0.05, 5 linear warm-up epochs, cosine
# decay, 50 epochs. No decay on norms, biases, embeddings, nor on the FFN
# expansion maps g ('.map_') of tied descendants, which start as the identity.
# No gradient clipping, as in the authors' public code: its train.py's
# --clip-grad defaults to None and none of its README's commands sets it.
optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(
        type='AdamW', lr=5e-4 * 1024 / 512, weight_decay=0.05, eps=1e-8, betas=(0.9, 0.999)),
    paramwise_cfg=dict(
        norm_decay_mult=0.0,
        bias_decay_mult=0.0,
        flat_decay_mult=0.0,
        custom_keys={
            '.cls_token': dict(decay_mult=0.0),
            '.pos_embed': dict(decay_mult=0.0),
            '.map_': dict(decay_mult=0.0),
        }))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, end=5, convert_to_iter_based=True),
    # Decays to the end of training (train_cfg.max_epochs).
    dict(type='CosineAnnealingLR', eta_min=1e-5, by_epoch=True, begin=5)
]
train_cfg = dict(by_epoch=True, max_epochs=50, val_interval=1)
val_cfg = dict()
test_cfg = dict()
auto_scale_lr = dict(base_batch_size=1024)
