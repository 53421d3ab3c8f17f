"""Bad annotations stop with an error naming the file and the record."""
import json
import logging

import cv2
import numpy as np
import pytest
from mmengine.logging import MMLogger
from mmengine.registry import DATASETS, DefaultScope

import mmvitdyn  # noqa: F401 (registers the data sets)
from mmvitdyn.datasets import AnnotationError
from mmvitdyn.datasets.data_roots import DATALOADERS


def build(scope: str, **cfg):
    with DefaultScope.overwrite_default_scope(scope):
        return DATASETS.build(cfg)


@pytest.fixture
def warnings_logged():
    """The messages of the warnings MMLogger logs during the test."""
    messages = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: messages.append(record.getMessage())
    logger = MMLogger.get_current_instance()
    logger.addHandler(handler)
    yield messages
    logger.removeHandler(handler)


# Classification: a list file of "path label" lines.


def list_file(root, labels) -> str:
    """Tiny images 0.png, 1.png, ... and a list file naming them with ``labels``."""
    for i in range(len(labels)):
        cv2.imwrite(str(root / f'{i}.png'), np.full((4, 4, 3), 10 * i, np.uint8))
    ann_file = root / 'list.txt'
    ann_file.write_text(''.join(f'{i}.png {label}\n' for i, label in enumerate(labels)))
    return str(ann_file)


def classification_set(root, ann_file, **kwargs):
    return build(
        'mmpretrain',
        type='FileCheckedCustomDataset',
        data_root=str(root),
        ann_file=ann_file,
        pipeline=[dict(type='LoadImageFromFile')],
        **kwargs)


TEN = dict(metainfo=dict(classes=[str(i) for i in range(10)]))


@pytest.mark.parametrize('label', [99, 10, -1])
@pytest.mark.parametrize('classes', [TEN, dict(num_classes=10)], ids=['metainfo', 'num_classes'])
def test_a_label_outside_the_classes_names_the_file_and_the_line(tmp_path, label, classes):
    ann_file = list_file(tmp_path, [3, 9, label, 0])
    image = tmp_path / '2.png'
    with pytest.raises(AnnotationError) as info:
        classification_set(tmp_path, ann_file, **classes)
    assert str(info.value) == (f'annotation file {ann_file}: 1 label outside 0..9 (10 classes): '
                               f'line 3 ({image} {label})')


def test_without_a_class_count_a_negative_label_is_refused(tmp_path):
    ann_file = list_file(tmp_path, [0, -1, 5, -2])
    with pytest.raises(
            AnnotationError,
            match=f'{ann_file}: 2 labels outside a label >= 0 '
            r'\(num_classes not given\): line 2 \(.*1.png -1\), line 4 '):
        classification_set(tmp_path, ann_file)


def test_labels_in_range_load(tmp_path):
    dataset = classification_set(tmp_path, list_file(tmp_path, [0, 9, 4]), num_classes=10)
    assert [dataset.get_data_info(i)['gt_label'] for i in range(3)] == [0, 9, 4]


def test_num_classes_must_agree_with_metainfo(tmp_path):
    with pytest.raises(ValueError, match='num_classes 12 differs from the 10 classes'):
        classification_set(tmp_path, list_file(tmp_path, [0]), num_classes=12, **TEN)


def test_an_empty_list_file_is_named(tmp_path):
    ann_file = tmp_path / 'list.txt'
    ann_file.write_text('')
    with pytest.raises(AnnotationError, match=f'^annotation file {ann_file} lists no sample$'):
        classification_set(tmp_path, str(ann_file), **TEN)


# Segmentation: ADE20K layout, images/ and annotations/ with the same stems.


def segmentation_set(root,
                     label_map: np.ndarray,
                     dataset_type: str = 'FileCheckedADE20KDataset',
                     **kwargs):
    """A one-sample ADE20K-layout set whose label map (uint8, uint16, or with
    channels) is ``label_map``; its test pipeline loads and packs it."""
    for folder in ('images/validation', 'annotations/validation'):
        (root / folder).mkdir(parents=True)
    cv2.imwrite(str(root / 'images/validation/a.jpg'), np.zeros((*label_map.shape[:2], 3)))
    cv2.imwrite(str(root / 'annotations/validation/a.png'), label_map)
    pipeline = [
        dict(type='LoadImageFromFile'),
        dict(type='LoadAnnotations'),
        dict(type='PackSegInputs')
    ]
    return build(
        'mmseg',
        type=dataset_type,
        data_root=str(root),
        data_prefix=dict(img_path='images/validation', seg_map_path='annotations/validation'),
        pipeline=pipeline,
        **kwargs)


def label_values(size=(6, 8), values=(0, 1, 2, 3)) -> np.ndarray:
    """A (H, W) uint8 map cycling through ``values``."""
    return np.resize(np.array(values, np.uint8), size)


THREE_ADE = dict(metainfo=dict(classes=('wall', 'building', 'sky')))  # ADE20K's first three


def test_a_valid_label_map_loads_reduced(tmp_path):
    dataset = segmentation_set(tmp_path, label_values(), **THREE_ADE)
    seg = dataset[0]['data_samples'].gt_sem_seg.data
    expected = np.resize(np.array([255, 0, 1, 2]), (1, 6, 8))  # file v -> v - 1, 0 -> 255
    assert seg.shape == (1, 6, 8) and (seg.numpy() == expected).all()


REDUCED = (', as loaded after reduce_zero_label (file value v becomes v - 1, and 0 becomes 255) '
           'and the class map of metainfo')


@pytest.mark.parametrize(
    'kwargs,value,named', [
        (THREE_ADE, 200, f'[199] outside 0..2 (3 classes) and the ignored [255]{REDUCED}'),
        (dict(reduce_zero_label=False), 150,
         '[150] outside 0..149 (150 classes) and the ignored [255]'),
    ],
    ids=['reduced-class-map', 'plain'])
def test_a_label_outside_the_classes_names_the_map_and_the_values(tmp_path, kwargs, value, named):
    dataset = segmentation_set(tmp_path, label_values(values=(1, 2, value)), **kwargs)
    path = tmp_path / 'annotations/validation/a.png'
    with pytest.raises(AnnotationError) as info:
        dataset[0]
    assert str(info.value) == f'label map {path} holds label values {named}'


OWN_CLASSES = dict(
    dataset_type='FileCheckedBaseSegDataset',
    metainfo=dict(classes=('road', 'car', 'tree')),
    reduce_zero_label=False,
    ignore_index=254)


def test_a_data_set_of_your_own_keeps_its_ignore_index_and_255(tmp_path):
    """BaseSegDataset (a user's classes) uses the values as they are; both its
    ignore_index and the 255 of mmseg's own "no class" are allowed."""
    dataset = segmentation_set(tmp_path / 'ok', label_values(values=(0, 1, 2, 254, 255)),
                               **OWN_CLASSES)
    assert set(dataset[0]['data_samples'].gt_sem_seg.data.unique().tolist()) == {0, 1, 2, 254, 255}
    dataset = segmentation_set(tmp_path / 'bad', label_values(values=(0, 3, 254)), **OWN_CLASSES)
    with pytest.raises(
            AnnotationError,
            match=r'values \[3\] outside 0..2 \(3 classes\) and '
            r'the ignored \[254, 255\]$'):
        dataset[0]


def test_a_16_bit_label_map_is_refused_with_its_wide_values(tmp_path):
    label_map = label_values(values=(1, 2)).astype(np.uint16)
    label_map[0, :2] = 300, 258  # would become 44 and 2, both valid classes
    dataset = segmentation_set(tmp_path, label_map)
    path = tmp_path / 'annotations/validation/a.png'
    with pytest.raises(
            AnnotationError,
            match=f'^label map {path} cannot be used: its I;16 '
            r'values \[258, 300\] do not fit in 0..255'):
        dataset[0]


def test_an_rgb_label_map_is_refused(tmp_path):
    dataset = segmentation_set(tmp_path, np.stack([label_values()] * 3, axis=-1))
    path = tmp_path / 'annotations/validation/a.png'
    with pytest.raises(
            AnnotationError,
            match=f'^label map {path} cannot be used: it has 3 channels \\(RGB\\)'):
        dataset[0]


def test_a_label_map_of_another_size_than_its_image_is_refused(tmp_path):
    dataset = segmentation_set(tmp_path, label_values(size=(64, 32)))
    cv2.imwrite(str(tmp_path / 'images/validation/a.jpg'), np.zeros((64, 64, 3)))
    with pytest.raises(
            AnnotationError,
            match=r'it is 32 x 64 \(width x height\) and its image '
            rf'{tmp_path}/images/validation/a.jpg 64 x 64'):
        dataset[0]


def test_an_image_with_an_exif_rotation_is_refused(tmp_path):
    from PIL import Image
    dataset = segmentation_set(tmp_path, label_values(size=(8, 8)))
    exif = Image.Exif()
    exif[0x0112] = 6  # turned 90 degrees when shown
    Image.new('RGB', (8, 8)).save(tmp_path / 'images/validation/a.jpg', exif=exif)
    with pytest.raises(AnnotationError, match='has EXIF orientation 6, so the image is decoded'):
        dataset[0]


def test_a_float_label_map_with_fractions_is_refused(tmp_path):
    from PIL import Image
    dataset = segmentation_set(tmp_path, label_values())
    values = label_values().astype(np.float32)
    values[0, 0] = 1.7  # would be read as class 1
    Image.fromarray(values, mode='F').save(tmp_path / 'annotations/validation/a.png', 'TIFF')
    with pytest.raises(AnnotationError, match=r'its F values \[1.7000000476837158\] are not whole'):
        dataset[0]


# Detection: a COCO json with images of 20 x 30 pixels.


def coco_json(root, annotations, images=None, categories=None, name='ann.json') -> str:
    """A COCO file whose categories default to circle (1) and square (2);
    images default to one declared 20 x 30 (a.jpg), written to ``root/img``."""
    (root / 'img').mkdir(exist_ok=True)
    cv2.imwrite(str(root / 'img/a.jpg'), np.zeros((20, 30, 3), np.uint8))
    images = [dict(id=1, file_name='a.jpg', height=20, width=30)] if images is None else images
    if categories is None:
        categories = [dict(id=1, name='circle'), dict(id=2, name='square')]
    ann_file = root / name
    ann_file.write_text(
        json.dumps(dict(images=images, annotations=annotations, categories=categories)))
    return str(ann_file)


def annotation(ann_id, category_id=1, bbox=(2, 2, 10, 8), area=80, **extra) -> dict:
    return dict(id=ann_id, image_id=1, category_id=category_id, bbox=list(bbox), area=area, **extra)


# A polygon inside the 30 x 20 image, of annotation()'s default box.
SQUARE = [[2, 2, 12, 2, 12, 10, 2, 10]]


def detection_set(root, ann_file, classes=('circle', 'square'), test_mode=True, with_mask=False):
    pipeline = [
        dict(type='LoadImageFromFile'),
        dict(type='LoadAnnotations', with_bbox=True, with_mask=with_mask),
        dict(type='PackDetInputs')
    ]
    return build(
        'mmdet',
        type='FileCheckedCocoDataset',
        data_root=str(root),
        ann_file=ann_file,
        data_prefix=dict(img='img/'),
        metainfo=dict(classes=classes),
        filter_cfg=dict(filter_empty_gt=True, min_size=4),
        test_mode=test_mode,
        pipeline=pipeline)


@pytest.mark.parametrize(
    'bad,problem', [
        (annotation(12, category_id=7), r'has category_id 7, not among the integer category ids '
         r'\[1, 2\] of the file'),
        (annotation(12, category_id=True), r'has category_id True, not among the integer'),
        (annotation(12, category_id=1.0), r'has category_id 1.0, not among the integer'),
        (annotation(12, bbox=(2, float('nan'), 10, 8)), r'has bbox \[2, nan, 10, 8\]'),
        (annotation(12, bbox=(2, 2, 10)), r'has bbox \[2, 2, 10\]'),
        (annotation(12, bbox=(True, 5, 20, 20)), r'has bbox \[True, 5, 20, 20\]'),
        (annotation(12, segmentation=[[2, 2, float('nan'), 2, 8, 8]]),
         r'has polygon coordinates \[nan\]; each must be a finite number'),
        (annotation(12, segmentation=[[2, 2, 1e9, 2, 8, 8]]),
         r'has a polygon reaching x 2..1000000000.0, y 2..8, beyond the 30 x 20 image'),
        (annotation(12, segmentation=[dict(x=2, y=2)
                                      ]), r'has a polygon that is not a list of coordinates'),
        (annotation(12, segmentation=dict(size=[40, 30], counts='abc')),
         r"has an RLE of size \[40, 30\], not the image's \[20, 30\]"),
        (annotation(12, segmentation=[[2, 2, 8, 2, 8, 8, 2]]),
         r'has a polygon of 7 coordinates; a polygon is \(x, y\) pairs'),
        (annotation(12, iscrowd=True), r'has iscrowd True; iscrowd is one of \(0, 1\)$'),
        (annotation(12, iscrowd=2), r'has iscrowd 2; iscrowd is one of \(0, 1\)$'),
        (annotation(12, iscrowd='1'), r"has iscrowd '1'; iscrowd is one of \(0, 1\)$"),
        (annotation(12, bbox=(10, 10, -5, 8)), r'has bbox \[10, 10, -5, 8\] of negative width '
         r'or height; a bbox is \[x, y, w, h\], w, h >= 0$'),
        (annotation(12, bbox=(10, 10, 5, -8)), r'has bbox \[10, 10, 5, -8\] of negative width'),
        (annotation(12, area=float('nan')), r'has area nan; an area is a finite number >= 0$'),
        (annotation(12, area=-80), r'has area -80; an area is a finite number >= 0$'),
        (dict(id=12, image_id=1, category_id=1,
              bbox=[2, 2, 10, 8]), r'has area None; an area is a finite number >= 0$'),
    ],
    ids=[
        'unknown-category', 'true-category', 'float-category', 'nan-box', 'three-number-box',
        'true-in-box', 'nan-polygon', 'huge-polygon', 'polygon-not-a-list', 'rle-size',
        'odd-polygon', 'true-crowd', 'crowd-2', 'string-crowd', 'negative-width', 'negative-height',
        'nan-area', 'negative-area', 'no-area'
    ])
def test_an_unusable_annotation_names_the_file_image_and_record(tmp_path, bad, problem):
    ann_file = coco_json(tmp_path, [annotation(11), bad])
    with pytest.raises(
            AnnotationError,
            match=f'^annotation file {ann_file}, image id 1 '
            rf'\(a.jpg\): annotation id 12 {problem}'):
        detection_set(tmp_path, ann_file)


@pytest.mark.parametrize(
    'images, annotations, problem', [
        ([dict(id=1, file_name='a.jpg', height=20, width=30)] * 2, [annotation(11)],
         r'image ids \[1\] are listed more than once'),
        (None, [annotation(11), dict(annotation(12), image_id=5)],
         r'1 annotations belong to no image the file lists: annotation id 12 \(image_id 5\)'),
    ],
    ids=['repeated-image-id', 'annotation-of-no-image'])
def test_images_and_annotations_that_disagree_name_the_file(tmp_path, images, annotations, problem):
    ann_file = coco_json(tmp_path, annotations, images=images)
    with pytest.raises(AnnotationError, match=f'^annotation file {ann_file}: {problem}'):
        detection_set(tmp_path, ann_file)


@pytest.mark.parametrize(
    'segmentation,shown', [(dict(segmentation=[]), r'\[\]'), (dict(), 'None')],
    ids=['empty-list', 'no-segmentation'])
def test_a_mask_annotation_without_a_polygon_names_the_record(tmp_path, segmentation, shown):
    """mmdet keeps no mask for it, and its mask loader stops on a KeyError."""
    ann_file = coco_json(tmp_path,
                         [annotation(11, segmentation=SQUARE),
                          annotation(12, **segmentation)])
    with pytest.raises(
            AnnotationError,
            match=f'^annotation file {ann_file}, image id 1 '
            rf'\(a.jpg\): annotation id 12 has segmentation {shown}, no polygon or RLE, while '
            r'the pipeline loads masks \(LoadAnnotations with_mask=True\)$'):
        detection_set(tmp_path, ann_file, with_mask=True)


@pytest.mark.parametrize(
    'field,problem', [
        (dict(height='20'), r"has height '20'; height and width are integers >= 1 \(pixels\)$"),
        (dict(width=None), r'has width None; height and width are integers >= 1 \(pixels\)$'),
        (dict(file_name='../a.jpg'), r"has file_name '../a.jpg'; a file_name is a relative path "
         r'inside the image folder \(data_prefix img\), without a leading / or ..$'),
        (dict(file_name='b/../../a.jpg'), r"has file_name 'b/../../a.jpg'; a file_name is a "),
        (dict(file_name='/tmp/a.jpg'), r"has file_name '/tmp/a.jpg'; a file_name is a "),
    ],
    ids=['string-height', 'no-width', 'parent-folder', 'climbing-subfolder', 'absolute'])
def test_an_unusable_image_names_the_file_and_the_image(tmp_path, field, problem):
    image = dict(dict(id=1, file_name='a.jpg', height=20, width=30), **field)
    ann_file = coco_json(tmp_path, [annotation(11)], images=[image])
    with pytest.raises(AnnotationError, match=f'^annotation file {ann_file}, image id 1 {problem}'):
        detection_set(tmp_path, ann_file)


@pytest.mark.parametrize(
    'categories,problem', [
        ([dict(id=1, name='circle'), dict(id=1, name='square')
          ], r'category ids \[1\] are listed more than once$'),
        ([dict(id=[1], name='circle')], r'category ids \[\[1\]\] are not integers$'),
    ],
    ids=['repeated-category-id', 'list-category-id'])
def test_unusable_category_ids_name_the_file(tmp_path, categories, problem):
    ann_file = coco_json(tmp_path, [annotation(11)], categories=categories)
    with pytest.raises(AnnotationError, match=f'^annotation file {ann_file}: {problem}'):
        detection_set(tmp_path, ann_file)


def test_a_declared_size_unlike_the_file_is_named(tmp_path):
    ann_file = coco_json(
        tmp_path, [annotation(11)], images=[dict(id=1, file_name='a.jpg', height=40, width=30)])
    dataset = detection_set(tmp_path, ann_file)
    with pytest.raises(
            AnnotationError,
            match=f'^annotation file {ann_file}, image id 1 '
            rf'\({tmp_path}/img/a.jpg\): declared height x width 40 x 30, but the '
            r'file decodes to 20 x 30 \(as detectron2'):
        dataset[0]


@pytest.mark.parametrize('test_mode', [True, False])
def test_a_file_without_images_is_named(tmp_path, test_mode):
    ann_file = coco_json(tmp_path, [], images=[])
    with pytest.raises(AnnotationError, match=f'^annotation file {ann_file} lists no image$'):
        detection_set(tmp_path, ann_file, test_mode=test_mode)


def test_a_training_file_without_annotations_is_named(tmp_path):
    ann_file = coco_json(tmp_path, [])
    with pytest.raises(
            AnnotationError,
            match=f'^annotation file {ann_file}: filter_cfg .* '
            'leaves none of its 1 images'):
        detection_set(tmp_path, ann_file, test_mode=False)


def test_categories_left_out_of_the_classes_give_one_warning(tmp_path, warnings_logged):
    squares = [annotation(i, category_id=2) for i in (12, 13, 14)]
    ann_file = coco_json(tmp_path, [annotation(11), *squares])
    dataset = detection_set(tmp_path, ann_file, classes=('circle', ))
    assert warnings_logged == [
        f'annotation file {ann_file}: 3 annotations of category ids [2], '
        'which metainfo classes leave out, are not used'
    ]
    assert len(dataset[0]['data_samples'].gt_instances) == 1


def test_mmdets_deliberate_skips_stay_silent(tmp_path, warnings_logged):
    """Crowd, zero-area and out-of-image boxes, polygons of under 3 points,
    no segmentation when masks are not loaded: mmdet's own rules, no error
    or warning."""
    kept = [
        annotation(11),
        annotation(12, iscrowd=1),
        annotation(15, segmentation=[[2, 2], [1, 1, 2, 2]]),
        annotation(16, segmentation=[])
    ]
    skipped = [annotation(13, bbox=(2, 2, 0, 8), area=0), annotation(14, bbox=(40, 2, 5, 5))]
    dataset = detection_set(tmp_path, coco_json(tmp_path, kept + skipped))
    instances = dataset[0]['data_samples']
    assert len(instances.gt_instances) + len(instances.ignored_instances) == len(kept)
    assert warnings_logged == []


def test_polygons_of_under_3_points_leave_an_ignored_instance(tmp_path, warnings_logged):
    """mmdet's mask loader drops a polygon of 1 or 2 points (no area) on
    purpose, and keeps an annotation left without one as ignored."""
    ann_file = coco_json(
        tmp_path,
        [annotation(11, segmentation=SQUARE),
         annotation(12, segmentation=[[2, 2], [1, 1, 2, 2]])])
    sample = detection_set(tmp_path, ann_file, with_mask=True)[0]['data_samples']
    assert (len(sample.gt_instances), len(sample.ignored_instances)) == (1, 1)
    assert warnings_logged == []


# The generated data sets of the configs pass every check.


@pytest.mark.parametrize('name,folder,scope', [('digits_bs32_32px', 'digits', 'mmpretrain'),
                                               ('coco_shapes_instance', 'coco_shapes', 'mmdet'),
                                               ('ade_shapes', 'ade_shapes', 'mmseg')])
def test_the_generated_sets_pass_silently(dataset_config, data_workspace, warnings_logged, name,
                                          folder, scope):
    cfg = dataset_config(name, data_workspace / 'data' / folder)
    for loader in DATALOADERS:
        dataset = build(scope, **cfg[loader].dataset)
        for i in range(len(dataset)):
            dataset[i]
    assert warnings_logged == []
