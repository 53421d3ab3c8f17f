"""The digits set: a stratified split that mmpretrain's CustomDataset reads."""
import numpy as np
import pytest
from mmengine.registry import init_default_scope
from mmpretrain.registry import DATASETS
from PIL import Image
from sklearn.datasets import load_digits

from mmvitdyn.datasets.generators import DIGITS_CLASSES, generate_digits
from mmvitdyn.datasets.generators.digits import split_per_class


@pytest.fixture(scope='module')
def digits_root(tmp_path_factory):
    """The default digits set, generated once for this module."""
    root = tmp_path_factory.mktemp('data') / 'digits'
    generate_digits(str(root))
    return root


def test_split_is_stratified_and_disjoint():
    labels = np.repeat(np.arange(3), [10, 20, 5])
    splits = split_per_class(labels, 0.2, np.random.default_rng(0))
    assert not set(splits['train']) & set(splits['val'])
    assert sorted(np.concatenate(list(splits.values()))) == list(range(35))
    assert np.bincount(labels[splits['val']]).tolist() == [2, 4, 1]


def test_max_per_class_caps_each_class():
    labels = np.repeat(np.arange(2), [10, 20])
    splits = split_per_class(labels, 0.5, np.random.default_rng(0), 4)
    assert np.bincount(labels[splits['train']]).tolist() == [2, 2]
    assert np.bincount(labels[splits['val']]).tolist() == [2, 2]


def test_images_are_the_upsampled_digits(digits_root):
    digits = load_digits()
    path = next((digits_root / 'val' / '7').glob('*.png'))
    image = np.asarray(Image.open(path))
    assert image.shape == (32, 32, 3) and digits.target[int(path.stem)] == 7
    assert (image[..., 0] == image[..., 2]).all()
    small = Image.fromarray(image[..., 0]).resize((8, 8), Image.Resampling.BOX)
    error = np.asarray(small) * (16 / 255) - digits.images[int(path.stem)]
    assert np.abs(error).mean() < 1.5


def test_custom_dataset_reads_the_split(digits_root, dataset_config):
    init_default_scope('mmpretrain')
    cfg = dataset_config('digits_bs32_32px', digits_root)
    train = DATASETS.build(cfg.train_dataloader.dataset)
    val = DATASETS.build(cfg.val_dataloader.dataset)
    assert (len(train), len(val)) == (1438, 359)
    assert train.metainfo['classes'] == val.metainfo['classes'] == DIGITS_CLASSES
    assert np.bincount(val.get_gt_labels()).min() >= 34
    assert (digits_root / 'meta' / 'classes.txt').read_text().split() == list(DIGITS_CLASSES)
    sample = train[0]
    assert tuple(sample['inputs'].shape) == (3, 32, 32)
    assert sample['data_samples'].gt_label.tolist() == [train.get_gt_labels()[0]]


def test_preprocessor_statistics_are_the_train_split(digits_root, dataset_config):
    cfg = dataset_config('digits_bs32_32px', digits_root)
    pixels = np.stack([
        np.asarray(Image.open(path))[..., 0]
        for path in sorted((digits_root / 'train').rglob('*.png'))
    ]).astype(np.float64)
    preprocessor = cfg.data_preprocessor
    assert np.allclose(preprocessor.mean, pixels.mean(), atol=0.01)
    assert np.allclose(preprocessor.std, pixels.std(), atol=0.01)
