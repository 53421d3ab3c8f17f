"""The configs of configs/cluster_learngene/, each read once per test session
(reading one takes about half a second; several test files check them)."""
import copy
from functools import lru_cache
from pathlib import Path
from typing import Union

from mmengine.config import Config

from .tools import REPO

CONFIG_DIR = REPO / 'configs/cluster_learngene'


@lru_cache(maxsize=None)
def _read(path: str) -> Config:
    return Config.fromfile(path)


def read_config(path: Union[str, Path]) -> Config:
    """A copy of the config at ``path`` (or named ``path`` in CONFIG_DIR,
    without ``.py``), free to change."""
    path = Path(path)
    if not path.is_absolute():
        path = CONFIG_DIR / f'{path}.py'
    return copy.deepcopy(_read(str(path)))
