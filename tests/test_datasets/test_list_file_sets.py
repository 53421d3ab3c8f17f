"""The data sets read with list files (Stanford Dogs, NABirds, EuroSAT,
RESISC45): a missing list file is named with how to write it, and a tree
laid out as the data-root error says is read by the base config as written."""
import mmcv
import numpy as np
import pytest
from mmengine.registry import DATASETS, init_default_scope

from mmvitdyn.datasets import AnnotationError, check_data_roots

# base config -> (data root, images folder, two image paths in it as the list
# files name them, a part of the data-root hint that says how to write them).
SETS = {
    'stanford-dogs_bs64_deit_224': ('stanford_dogs', 'Images', [
        'n02085620-Chihuahua/n02085620_10074.jpg',
        'n02116738-African_hunting_dog/n02116738_10024.jpg'
    ], 'train_list.mat'),
    'nabirds_bs64_deit_224':
    ('nabirds', 'images', ['0295/00a0f2a5d1c84c5e.jpg',
                           '1010/ffe9bd0b8b2c4d6e.jpg'], 'image_class_labels.txt'),
    'eurosat_bs64_deit_224':
    ('eurosat', 'EuroSAT_RGB', ['AnnualCrop/AnnualCrop_1.jpg',
                                'SeaLake/SeaLake_3000.jpg'], 'eurosat-train.txt'),
    'resisc45_bs64_deit_224':
    ('resisc45', 'NWPU-RESISC45', ['airplane/airplane_001.jpg',
                                   'wetland/wetland_700.jpg'], 'resisc45-test.txt'),
}


def build(spec):
    # Not serialised: serialize_data's gc.collect() costs ~0.5 s in a test session.
    return DATASETS.build(dict(spec, pipeline=[], serialize_data=False))


def write_lists(root, files, labels):
    for split in ('train', 'test'):
        (root / 'meta' / f'{split}.txt').write_text(''.join(f'{name} {label}\n'
                                                            for name, label in zip(files, labels)))


@pytest.mark.parametrize('config', sorted(SETS))
def test_list_file_layout(tmp_path, dataset_config, config):
    name, folder, files, hint = SETS[config]
    root = tmp_path / 'data' / name
    for file in files:
        (root / folder / file).parent.mkdir(parents=True, exist_ok=True)
        mmcv.imwrite(np.zeros((8, 8, 3), np.uint8), str(root / folder / file))
    cfg = dataset_config(config, root)
    num_classes = cfg.data_preprocessor.num_classes
    # The images are there, the lists are not: each is named with how to write it.
    with pytest.raises(FileNotFoundError) as error:
        check_data_roots(cfg)
    lines = str(error.value).splitlines()
    assert [line.split(' does not exist; ')[0] for line in lines] == [
        f"{loader}.dataset.ann_file {str(root / f'meta/{split}.txt')!r}"
        for loader, split in (('train_dataloader', 'train'), ('val_dataloader', 'test'))
    ]
    assert all(hint in line and 'meta/train.txt' in line for line in lines)
    # Written as the hint says, they are read with the first and the last class.
    (root / 'meta').mkdir()
    write_lists(root, files, [0, num_classes - 1])
    check_data_roots(cfg)
    init_default_scope('mmpretrain')
    for loader in ('train_dataloader', 'val_dataloader'):
        assert cfg[loader].dataset.num_classes == num_classes
        dataset = build(cfg[loader].dataset)
        assert [d['img_path'] for d in dataset] == [str(root / folder / f) for f in files]
        assert [d['gt_label'] for d in dataset] == [0, num_classes - 1]
    write_lists(root, files, [0, num_classes])
    with pytest.raises(AnnotationError, match=f'outside 0..{num_classes - 1}'):
        build(cfg.train_dataloader.dataset)
