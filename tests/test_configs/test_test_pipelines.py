"""Every classification config's test pipeline brings any image to the model's
input size, so one odd-sized image cannot zero-pad (and change) its batch."""
import mmcv
import numpy as np
import pytest
from mmengine.config import Config
from mmengine.dataset import Compose
from mmengine.registry import DefaultScope

from helpers.tools import REPO

CONFIGS = sorted(p for p in (REPO / 'configs').rglob('*.py') if '_base_' not in p.parts)


@pytest.fixture(scope='module')
def odd_image(tmp_path_factory):
    """A 50x70 image file, larger and not square."""
    image = np.random.default_rng(0).integers(0, 256, (50, 70, 3), dtype=np.uint8)
    path = tmp_path_factory.mktemp('odd') / 'odd.png'
    mmcv.imwrite(image, str(path))
    return str(path), image


@pytest.mark.parametrize('path', CONFIGS, ids=lambda p: str(p.relative_to(REPO / 'configs')))
def test_test_pipeline_gives_the_model_s_input_size(path, odd_image):
    cfg = Config.fromfile(str(path))
    if cfg.get('default_scope') != 'mmpretrain' or not cfg.get('test_dataloader'):
        pytest.skip('not a classification config')
    file, image = odd_image
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        pipeline = Compose(cfg.test_dataloader.dataset.pipeline)
    # Loading transforms read the file; in-memory data sets (CIFAR) give the array.
    out = pipeline(dict(img_path=file, img=image.copy(), img_shape=image.shape[:2]))
    size = cfg.model.backbone.get('img_size', 224)
    assert tuple(out['inputs'].shape[-2:]) == (size, size)
