"""The AdaptFormer + EViT configs against EViT's public scripts
(github.com/youweiliang/evit at 5ca95a7): the configs without a warm-up keep
0.7 of the tokens from the first iteration, as its fine-tuning script does;
the warm-up config is its from-scratch schedule scaled to 100 epochs. Each
config says which of the two it reproduces."""
import pytest

from helpers.configs import DYT_CONFIG_DIR, dyt_config

NO_WARMUP = ('vit-b-p16-adaptformer-evit_d64_8xb128-100e_cifar100-224px.py',
             'vit-b-p16-adaptformer-evit_d8_1xb64-100e_vtab1k-224px.py')
WARMUP = 'vit-b-p16-adaptformer-evit-warmup_d64_8xb128-100e_cifar100-224px.py'
BASE_KEEP_RATE = 0.7  # both scripts: --base_keep_rate 0.7 (run_code.sh:11, finetune.sh:12)
# run_code.sh:15-17 (training from scratch): --shrink_start_epoch 10
# --shrink_epochs 100 --epochs 300.
SCRATCH_START, SCRATCH_SHRINK, SCRATCH_EPOCHS = 10, 100, 300
# finetune.sh:19-22 (fine-tuning a checkpoint): --shrink_start_epoch 0
# --shrink_epochs 0 --epochs 30; engine.py:48-50 passes them to helpers.py's
# adjust_keep_rate(warmup_epochs=0, total_epochs=0 + 0), whose
# `if epoch >= total_epochs: return base_keep_rate` (helpers.py:11-12) holds
# from epoch 0: the target rate at every iteration.
FINETUNE_START, FINETUNE_SHRINK = 0, 0


def finetune_keep_rate(epoch: int) -> float:
    """helpers.py's adjust_keep_rate at finetune.sh's settings, written out."""
    if epoch < FINETUNE_START:
        return 1.0
    if epoch >= FINETUNE_START + FINETUNE_SHRINK:
        return BASE_KEEP_RATE
    raise AssertionError('finetune.sh has no shrinking epochs')


def comment(name: str) -> str:
    """The config's leading comment, one line."""
    lines = (DYT_CONFIG_DIR / name).read_text().split('\n_base_')[0].splitlines()
    return ' '.join(line.lstrip('# ') for line in lines)


@pytest.mark.parametrize('name', NO_WARMUP)
def test_no_warm_up_configs_are_evits_fine_tuning_recipe(name):
    cfg = dyt_config(name)
    assert 'EViTKeepRateHook' not in [h.type for h in cfg.get('custom_hooks', [])]
    reduction = cfg.model.backbone.token_reduction
    epochs = cfg.train_cfg.max_epochs
    # No hook: the configured rate holds at every epoch, as finetune.sh's does.
    assert [reduction.keep_rate] * epochs == [finetune_keep_rate(e) for e in range(epochs)]
    assert 'finetune.sh' in comment(name)


def test_warm_up_config_is_evits_from_scratch_schedule_scaled():
    cfg = dyt_config(WARMUP)
    hook, = [h for h in cfg.custom_hooks if h.type == 'EViTKeepRateHook']
    epochs = cfg.train_cfg.max_epochs
    assert (hook.start_epoch, hook.shrink_epochs) == (round(
        SCRATCH_START * epochs / SCRATCH_EPOCHS), round(
            SCRATCH_SHRINK * epochs / SCRATCH_EPOCHS)) == (3, 33)
    assert cfg.model.backbone.token_reduction.keep_rate == BASE_KEEP_RATE
    text = comment(WARMUP)
    assert 'run_code.sh' in text and 'finetune.sh' in text
