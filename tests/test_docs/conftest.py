"""Fixtures of the guide tests: a workspace with the user's data sets and the
guides' configs, and the classification run that both guides read."""
from pathlib import Path

import pytest
import timm
import torch

from helpers.guides import (CLS_CONFIG, CLS_TRAIN_OPTIONS, CLS_WORK_DIR, EXAMPLES, FINETUNE_GUIDE,
                            VIT_TINY, command, run_command, workspace_config,
                            write_classification_set, write_coco_set, write_seg_set)


@pytest.fixture(scope='session')
def guide_workspace(data_workspace, tmp_path_factory) -> Path:
    """A working directory with the user's data sets of the guides under
    ``data/`` and ``configs/examples/`` holding the guides' configs."""
    root = tmp_path_factory.mktemp('guides')
    write_classification_set(data_workspace / 'data/digits', root / 'data/my_set')
    write_coco_set(data_workspace / 'data/coco_shapes', root / 'data/my_coco')
    write_seg_set(data_workspace / 'data/ade_shapes', root / 'data/my_seg')
    (root / 'configs/examples').mkdir(parents=True)
    for config in EXAMPLES.glob('*.py'):
        (root / 'configs/examples' / config.name).write_text(workspace_config(config.read_text()))
    return root


@pytest.fixture(scope='session')
def cpu_workspace(guide_workspace, tmp_path_factory):
    """A working directory for the guide's CPU configs: the user's data sets of
    ``guide_workspace``, the guides' configs on their own ViT-B bases (which
    the CPU configs shrink to ViT-Ti/16) and the ViT-Ti/16 file they read,
    written by the guide's converter command from a random timm ViT-Ti/16
    saved as the source file the guide names. (root, timm's state dict)."""
    root = tmp_path_factory.mktemp('cpu')
    (root / 'data').symlink_to(guide_workspace / 'data')
    (root / 'configs/examples').mkdir(parents=True)
    for config in EXAMPLES.glob('*.py'):
        (root / 'configs/examples' / config.name).write_text(
            workspace_config(config.read_text(), small=False))
    source = timm.create_model('vit_tiny_patch16_224', pretrained=False, num_classes=21843)
    torch.save(source.state_dict(), root / 'vit_tiny_patch16_224.augreg_in21k.bin')
    run_command(
        command(FINETUNE_GUIDE,
                'python tools/model_converters/timm2mmvitdyn.py vit_tiny_patch16_224'), root)
    return root, source.state_dict()


@pytest.fixture(scope='session')
def classification_run(guide_workspace):
    """The guide's ImageFolder classification commands, run: its smoke test
    (``tools/train.py`` on random frozen weights, 2 epochs of 3 iterations,
    validation after each), then ``tools/test.py`` on the last checkpoint
    (``epoch_2.pth`` for the guide's ``epoch_100.pth``), dumping the
    predictions. (work dir, train output, test output)."""
    train = run_command(
        command(FINETUNE_GUIDE, f'python tools/train.py {CLS_CONFIG} --cfg-options'),
        guide_workspace, CLS_TRAIN_OPTIONS)
    test_tokens = [
        token.replace('epoch_100.pth', 'epoch_2.pth')
        for token in command(FINETUNE_GUIDE, f'python tools/test.py {CLS_CONFIG}')
    ]
    test = run_command(test_tokens, guide_workspace, VIT_TINY)
    return guide_workspace / CLS_WORK_DIR, train.stdout, test.stdout
