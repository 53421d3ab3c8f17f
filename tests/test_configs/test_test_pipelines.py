"""Every classification data set base's test pipeline brings any image to the
input size its name states, so one odd-sized image cannot zero-pad (and change)
its batch. The configs take their test pipelines from these bases."""
import re

import mmcv
import numpy as np
import pytest
from mmengine.config import Config
from mmengine.dataset import Compose
from mmengine.registry import DefaultScope

from helpers.tools import REPO

# The classification bases: <data set>_bs<batch>_..._<size>[px].py
# mmpretrain's data bases (the video ones, packed by PackActionInputs, are
# mmaction2's: tests/test_tools/test_video_train_test.py)
BASES = sorted(
    path for path in (REPO / 'configs/_base_/datasets').glob('*_bs*_*.py')
    if 'PackActionInputs' not in path.read_text())


@pytest.fixture(scope='module')
def odd_image(tmp_path_factory):
    """A 50x70 image file, larger and not square."""
    image = np.random.default_rng(0).integers(0, 256, (50, 70, 3), dtype=np.uint8)
    path = tmp_path_factory.mktemp('odd') / 'odd.png'
    mmcv.imwrite(image, str(path))
    return str(path), image


def test_every_classification_base_is_checked():
    assert len(BASES) == 22 and any(p.name == 'digits_bs32_32px.py' for p in BASES)


@pytest.mark.parametrize('path', BASES, ids=lambda p: p.stem)
def test_test_pipeline_gives_the_stated_input_size(path, odd_image):
    size = int(re.search(r'_(\d+)(?:px)?$', path.stem).group(1))
    cfg = Config.fromfile(str(path))
    file, image = odd_image
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        pipeline = Compose(cfg.test_dataloader.dataset.pipeline)
    # Loading transforms read the file; in-memory data sets (CIFAR) give the array.
    out = pipeline(dict(img_path=file, img=image.copy(), img_shape=image.shape[:2]))
    assert tuple(out['inputs'].shape[-2:]) == (size, size)
