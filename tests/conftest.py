"""Shared fixtures: seeded random state, generated data, and DyT checkpoints trained by
tools/train.py."""
import mmvitdyn  # noqa: F401 (first: OpenMP's wait policy, before torch loads) isort: skip
import functools
import logging
import random
from pathlib import Path

import mmengine.config.utils as mmengine_config_utils
import numpy as np
import pytest
import torch
from mmengine.logging import MMLogger

from helpers.configs import DYT_ADE_CFG, DYT_COCO_CFG, DYT_DIGITS_CFG, RANDOM_FROZEN
from helpers.tools import run_tool

# mmengine parses all of a package's metafiles (85 YAML files for mmpretrain)
# whenever a config inherits from it ('mmpretrain::...'), only to read their
# config names; the suite loads our configs a few hundred times, and the files
# do not change during a run. (Its only use of ``load``; nothing it returns is
# changed.)
mmengine_config_utils.load = functools.lru_cache(maxsize=None)(mmengine_config_utils.load)


def pytest_collection_modifyitems(config, items):
    """Tests marked ``gpu`` are skipped on a machine without CUDA."""
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason='needs a CUDA device (marked gpu)')
    for item in items:
        if 'gpu' in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def seeded():
    """Every test starts from the same random state: Python, NumPy and torch seeded with 0.

    Tests that need a particular state seed it themselves; this makes the others
    (random inputs, Gumbel noise, initialisations) repeat exactly from run to run.
    """
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)


@pytest.fixture(scope='session')
def data_workspace(tmp_path_factory) -> Path:
    """A working directory whose ``data/`` holds the three generated sets (small)."""
    from mmvitdyn.datasets import generate_ade_shapes, generate_coco_shapes, generate_digits
    root = tmp_path_factory.mktemp('workspace')
    generate_digits(str(root / 'data/digits'))
    generate_coco_shapes(str(root / 'data/coco_shapes'), num_train=8, num_val=4)
    generate_ade_shapes(str(root / 'data/ade_shapes'), num_train=8, num_val=4)
    return root


def train_briefly(config, options, workspace, work_dir) -> str:
    """Train ``config`` through ``tools/train.py`` without validation; its last checkpoint."""
    run_tool(['train.py', config, '--work-dir', work_dir, '--cfg-options', *options], workspace)
    return (work_dir / 'last_checkpoint').read_text().strip()


@pytest.fixture(scope='session')
def dyt_digits_checkpoint(data_workspace, tmp_path_factory) -> str:
    """The digits DyT classifier after 2 short epochs (8 iterations)."""
    return train_briefly(DYT_DIGITS_CFG, [
        'train_cfg.max_epochs=2', 'train_cfg.val_interval=100',
        'train_dataloader.dataset.indices=128', RANDOM_FROZEN
    ], data_workspace, tmp_path_factory.mktemp('dyt-digits'))


@pytest.fixture(scope='session')
def dyt_coco_checkpoint(data_workspace, tmp_path_factory) -> str:
    """The DyT Mask R-CNN on the COCO shapes after one epoch (2 iterations)."""
    return train_briefly(DYT_COCO_CFG, [
        'train_cfg.max_epochs=1', 'train_cfg.val_interval=100',
        'default_hooks.checkpoint.interval=1'
    ], data_workspace, tmp_path_factory.mktemp('dyt-coco'))


@pytest.fixture(scope='session')
def dyt_ade_checkpoint(data_workspace, tmp_path_factory) -> str:
    """The DyT UperNet on the ADE shapes after 2 iterations."""
    return train_briefly(DYT_ADE_CFG, [
        'train_cfg.max_iters=2', 'train_cfg.val_interval=100', 'default_hooks.checkpoint.interval=2'
    ], data_workspace, tmp_path_factory.mktemp('dyt-ade'))


class ListHandler(logging.Handler):
    """Keeps every record it is given."""

    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        self.records.append(record)


@pytest.fixture
def log():
    """Records logged through the current MMLogger during the test."""
    handler = ListHandler()
    logger = MMLogger.get_current_instance()
    logger.addHandler(handler)
    yield handler.records
    logger.removeHandler(handler)
