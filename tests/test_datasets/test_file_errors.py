"""A corrupt image, label map or annotation file: the error names the file."""
import json
import shutil

import pytest
import torch
from mmengine.registry import DATASETS, init_default_scope

from helpers.configs import VIT_DIGITS_CFG
from helpers.tools import run_tool
from mmvitdyn.datasets import DataFileError


@pytest.fixture
def data_copy(data_workspace, tmp_path):
    """A function: generated set name -> a copy of it, free to corrupt."""

    def copy(name: str):
        return shutil.copytree(data_workspace / 'data' / name, tmp_path / 'data' / name)

    return copy


def truncate(path) -> None:
    """Keep the first half of the file's bytes, as an interrupted copy does."""
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])


def build(dataset_config, name: str, scope: str, root, loader='val_dataloader'):
    init_default_scope(scope)
    return DATASETS.build(dataset_config(name, root)[loader].dataset)


def index_of(dataset, key: str, path) -> int:
    return next(i for i in range(len(dataset)) if dataset.get_data_info(i)[key] == str(path))


def empty(path) -> None:
    path.write_bytes(b'')


@pytest.mark.parametrize('damage,problem', [(truncate, r'cv2 cannot decode its \d+ bytes'),
                                            (empty, 'the file is empty')])
def test_classification_names_the_image(dataset_config, data_copy, damage, problem):
    root = data_copy('digits')
    image = sorted((root / 'val/3').iterdir())[1]
    damage(image)
    dataset = build(dataset_config, 'digits_bs32_32px', 'mmpretrain', root)
    with pytest.raises(DataFileError, match=f'img_path {image} cannot be read: {problem}$'):
        dataset[index_of(dataset, 'img_path', image)]
    assert dataset[0]['inputs'].shape == (3, 32, 32)  # the other images still load


def test_detection_names_the_malformed_annotation_file(dataset_config, data_copy):
    root = data_copy('coco_shapes')
    ann_file = root / 'annotations/instances_val2017.json'
    truncate(ann_file)
    with pytest.raises(
            DataFileError, match=f'annotation file {ann_file} cannot be loaded: '
            'JSONDecodeError'):
        build(dataset_config, 'coco_shapes_instance', 'mmdet', root)
    ann_file.write_text(json.dumps({'images': [], 'annotations': []}))  # no 'categories'
    with pytest.raises(
            DataFileError,
            match=f"annotation file {ann_file} cannot be loaded: "
            "KeyError: 'categories'"):
        build(dataset_config, 'coco_shapes_instance', 'mmdet', root)


def test_detection_names_the_corrupt_image(dataset_config, data_copy):
    root = data_copy('coco_shapes')
    image = sorted((root / 'val2017').iterdir())[0]
    truncate(image)
    dataset = build(dataset_config, 'coco_shapes_instance', 'mmdet', root)
    with pytest.raises(DataFileError, match=f'img_path {image} cannot be read'):
        dataset[index_of(dataset, 'img_path', image)]


@pytest.mark.parametrize('folder,key', [('annotations', 'seg_map_path'), ('images', 'img_path')])
def test_segmentation_names_the_corrupt_label_map_or_image(dataset_config, data_copy, folder, key):
    root = data_copy('ade_shapes')
    damaged = sorted((root / folder / 'training').iterdir())[2]
    truncate(damaged)
    dataset = build(dataset_config, 'ade_shapes', 'mmseg', root, loader='train_dataloader')
    with pytest.raises(DataFileError, match=f'{key} {damaged} cannot be read'):
        dataset[index_of(dataset, key, damaged)]


def test_errors_of_readable_files_pass_through_unchanged(dataset_config, data_copy):
    dataset = build(dataset_config, 'digits_bs32_32px', 'mmpretrain', data_copy('digits'))

    def broken_pipeline(results):
        raise KeyError('a transform bug')

    dataset.pipeline = broken_pipeline
    with pytest.raises(KeyError, match='a transform bug'):
        dataset[0]


def test_the_test_tool_names_the_image(data_workspace, tmp_path):
    """Through tools/test.py and its DataLoader worker processes."""
    shutil.copytree(data_workspace / 'data/digits', tmp_path / 'data/digits')
    image = sorted((tmp_path / 'data/digits/val/0').iterdir())[0]
    truncate(image)
    ckpt = tmp_path / 'empty.pth'
    torch.save(dict(state_dict={}), ckpt)
    args = ['--work-dir', tmp_path / 'work', '--cfg-options', 'test_dataloader.dataset.indices=8']
    proc = run_tool(['test.py', VIT_DIGITS_CFG, ckpt, *args], tmp_path, check=False)
    assert proc.returncode != 0
    relative = image.relative_to(tmp_path)
    assert f'DataFileError: img_path {relative} cannot be read' in proc.stderr, proc.stderr[-3000:]
