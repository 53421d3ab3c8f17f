"""Config files the tests run, by what they are."""
import functools
import re

from mmengine.config import Config

from mmvitdyn.utils.config_names import renamed_to  # noqa: F401 (the tests' rule too)
from .tools import REPO

VIT_DIGITS_CFG = REPO / 'configs/vit/vit-mini-p4_1xb32-20e_digits-32px.py'
MASK_RCNN_COCO_CFG = REPO / 'configs/mask_rcnn/mask-rcnn_r18_fpn_1xb4-12e_coco-shapes-128px.py'
FCN_ADE_CFG = REPO / 'configs/fcn/fcn_r18-d8_1xb4-400i_ade-shapes-128px.py'
DYT_DIGITS_CFG = REPO / 'configs/dyt/vit-mini-p4-dyt_1xb32-8e_digits-32px.py'
DYT_COCO_CFG = REPO / 'configs/dyt/mask-rcnn_vitdet-mini-dyt_1xb4-12e_coco-shapes-128px.py'
DYT_ADE_CFG = REPO / 'configs/dyt/upernet_vit-mini-p16-dyt_mln_1xb4-400i_ade-shapes-128px.py'
DYT_VIDEO_CFG = REPO / 'configs/dyt_video/vit-mini-p4-dyt_d16_1xb8-20e_video-shapes-32px.py'
DYT_CONFIG_DIR = REPO / 'configs/dyt'
# The option that lets a test train a config's frozen ViT on random weights (the
# digits DyT configs expect a trained ViT as load_from).
RANDOM_FROZEN = 'model.backbone.allow_random_frozen=True'


@functools.lru_cache(maxsize=None)
def dyt_config(name: str) -> Config:
    """``configs/dyt/<name>``, parsed once (shared: deep-copy it before changing it)."""
    return Config.fromfile(str(DYT_CONFIG_DIR / name))


def first_test_images(config, workspace, num_images: int) -> list:
    """Paths of the first ``num_images`` images of ``config``'s test set, whose data
    root lies under ``workspace``, in the data set's order."""
    from mmengine.registry import DATASETS, init_default_scope

    cfg = Config.fromfile(str(config))
    init_default_scope(cfg.default_scope)
    dataset_cfg = cfg.test_dataloader.dataset
    dataset = DATASETS.build(
        dict(dataset_cfg, indices=num_images, data_root=str(workspace / dataset_cfg.data_root)))
    return [dataset.get_data_info(i)['img_path'] for i in range(num_images)]


# The config folders whose README lists earlier names of their configs.
EARLIER_NAME_FOLDERS = ('dyt', 'cluster_learngene')


def earlier_names(folder: str) -> list:
    """(earlier name, current name, what differs) of each row of the table under
    ``## Earlier names`` in ``configs/<folder>/README.md``."""
    text = (REPO / 'configs' / folder / 'README.md').read_text()
    section = text.split('## Earlier names', 1)[1].split('\n## ', 1)[0]
    return re.findall(
        r'^\| \[([^]]+)\]\([^)]+\) \| \[([^]]+)\]\([^)]+\) \| (.+?) \|$', section, flags=re.M)
