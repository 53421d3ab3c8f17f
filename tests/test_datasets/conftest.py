"""Fixtures shared by the data-set tests."""
import hashlib
from pathlib import Path
from typing import Optional

import pytest
from mmengine.config import Config

from mmvitdyn.datasets.data_roots import DATALOADERS

CONFIG_DIR = Path(__file__).parents[2] / 'configs' / '_base_' / 'datasets'


@pytest.fixture
def tree_digest():
    """A function: folder -> {relative path: sha256} of every file in it."""

    def digest(root: Path) -> dict:
        return {
            str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(root.rglob('*')) if path.is_file()
        }

    return digest


@pytest.fixture
def dataset_config():
    """A function: (base config name, data root or None) -> the dataset base
    config, with every dataloader's ``data_root`` set to the given one."""

    def load(name: str, data_root: Optional[Path] = None) -> Config:
        cfg = Config.fromfile(str(CONFIG_DIR / f'{name}.py'))
        for loader in DATALOADERS if data_root else ():
            cfg[loader].dataset.data_root = str(data_root)
        return cfg

    return load
