"""Shared fixtures: generated data and a runner for tools/."""
from pathlib import Path

import pytest



@pytest.fixture(scope='session')
def data_workspace(tmp_path_factory) -> Path:
    """A working directory whose ``data/`` holds the three generated sets (small)."""
    from mmvitdyn.datasets import generate_ade_shapes, generate_coco_shapes, generate_digits
    root = tmp_path_factory.mktemp('workspace')
    generate_digits(str(root / 'data/digits'))
    generate_coco_shapes(str(root / 'data/coco_shapes'), num_train=8, num_val=4)
    generate_ade_shapes(str(root / 'data/ade_shapes'), num_train=8, num_val=4)
    return root

