"""check_data_roots: every missing path named, with how to get it."""
import os.path as osp

import pytest

from mmvitdyn.datasets import check_data_roots
from mmvitdyn.datasets.data_roots import REAL_DATA_HINTS, how_to_get
from mmvitdyn.datasets.generators import GENERATORS

GENERATED_CONFIGS = {
    'digits': 'digits_bs32_32px',
    'coco_shapes': 'coco_shapes_instance',
    'ade_shapes': 'ade_shapes',
}
SMALL = {
    'digits': dict(max_per_class=2),
    'coco_shapes': dict(num_train=1, num_val=1),
    'ade_shapes': dict(num_train=1, num_val=1),
}
# Real data sets: (config, its default data root, part of the hint).
REAL_CONFIGS = [
    ('coco_instance_lsj_1024', 'data/coco/', 'cocodataset.org'),
    ('ade20k_512x512', 'data/ade/ADEChallengeData2016', 'ADEChallengeData2016.zip'),
    ('imagenet_bs64_224', 'data/imagenet', 'image-net.org'),
    ('cifar100_bs64_224', 'data/cifar100', 'cifar-100-python.tar.gz'),
    ('vtab1k_bs64_224', 'data/vtab-1k/cifar', 'train800val200.txt'),
    ('svhn_bs64_rrc_224', 'data/svhn', "torchvision's SVHN"),
    # test_list_file_sets.py checks the sets read with list files.
    ('dtd_bs64_deit_224', 'data/dtd', 'dtd-r1.0.1.tar.gz'),
    ('k400_bs16_8x16x1-224px', 'data/kinetics400', 'kinetics400_{train,val}_list_videos.txt'),
    ('ssv2_bs16_u8-224px', 'data/sthv2', 'sthv2_{train,val}_list_videos.txt'),
]


@pytest.mark.parametrize('name', sorted(GENERATED_CONFIGS))
def test_missing_generated_set_names_its_command(tmp_path, dataset_config, name):
    root = tmp_path / 'data' / name
    cfg = dataset_config(GENERATED_CONFIGS[name], root)
    with pytest.raises(FileNotFoundError) as error:
        check_data_roots(cfg)
    # train, val and test read the same root: it is named once.
    assert str(error.value).splitlines() == [
        f'train_dataloader.dataset.data_root {str(root)!r} does not exist; '
        f'create it with: {GENERATORS[name].command(str(root))}'
    ]


@pytest.mark.parametrize('name', sorted(GENERATED_CONFIGS))
def test_generated_set_passes(tmp_path, dataset_config, name):
    root = tmp_path / 'data' / name
    GENERATORS[name].generate(str(root), **SMALL[name])
    check_data_roots(dataset_config(GENERATED_CONFIGS[name], root))


@pytest.mark.parametrize('config, root, hint', REAL_CONFIGS)
def test_missing_real_set_says_how_to_get_it(tmp_path, monkeypatch, dataset_config, config, root,
                                             hint):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError) as error:
        check_data_roots(dataset_config(config))
    assert f'data_root {root!r} does not exist' in str(error.value)
    assert hint in str(error.value)


def test_wrapped_datasets_are_searched(tmp_path):
    (tmp_path / 'images').mkdir()
    leaf = dict(data_root=str(tmp_path), data_prefix=dict(img='images/'))
    cfg = dict(
        train_dataloader=dict(
            dataset=dict(
                type='RepeatDataset',
                dataset=dict(
                    type='ConcatDataset',
                    datasets=[
                        leaf,
                        dict(leaf, data_prefix=dict(img='missing/')),
                        dict(leaf, ann_file='ann.json'),
                    ]))),
        val_dataloader=None)
    with pytest.raises(FileNotFoundError) as error:
        check_data_roots(cfg)
    lines = str(error.value).splitlines()
    where = 'train_dataloader.dataset.dataset.datasets'
    assert [line.split(' does not exist; ')[0] for line in lines] == [
        f'{where}[1].data_prefix.img {osp.join(tmp_path, "missing/")!r}',
        f'{where}[2].ann_file {osp.join(tmp_path, "ann.json")!r}'
    ]
    assert all('none of the known data roots' in line for line in lines)


@pytest.mark.parametrize('path, answer', [
    ('/x/data/digits/train/', 'create it with: python '
     'tools/dataset_converters/gen_digits.py --out-dir /x/data/digits'),
    ('data/coco_shapes/annotations/instances_val2017.json', 'create it '
     'with: python tools/dataset_converters/gen_coco_shapes.py --out-dir '
     'data/coco_shapes'),
    ('data/vtab-1k/dtd/test.txt', REAL_DATA_HINTS['data/vtab-1k']),
])
def test_how_to_get_finds_the_set_a_path_is_in(path, answer):
    assert how_to_get(path) == answer
