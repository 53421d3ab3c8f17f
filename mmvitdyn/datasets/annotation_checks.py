"""Mixins (put before :class:`~.file_errors.NameFilesOnError`) raising
:class:`AnnotationError` for annotations a model cannot use (docs/data_checks.md)."""
import math
import os
from collections import Counter
from typing import List, Optional, Sequence

import numpy as np
from mmengine import fileio
from mmengine.logging import MMLogger
from PIL import Image

# Pillow modes that decode to one channel of 8-bit values.
LABEL_MAP_MODES = ('1', 'L', 'P')
# The EXIF tag of an image's orientation (1: as stored).
EXIF_ORIENTATION = 0x0112
# Records named in full in an error; the rest are counted.
MAX_NAMED = 5
# The values of an annotation's iscrowd: 0 (an instance), 1 (a crowd).
ISCROWD_VALUES = (0, 1)


class AnnotationError(ValueError):
    """A readable annotation file or label map holds a record the data set
    cannot use."""


def is_real(value) -> bool:
    """Whether a JSON value is a finite number (``true`` is not one)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def id_problem(kind: str, ids: list, types: tuple, allowed: str) -> Optional[str]:
    """Why the ``kind`` ids of a COCO json cannot name its records, or None: an id
    not of ``types`` (``allowed`` names them) or listed more than once."""
    unusable = [i for i in ids if isinstance(i, bool) or not isinstance(i, types)]
    if unusable:
        return f'{kind} ids {unusable[:MAX_NAMED]} are not {allowed}'
    repeated = sorted((i for i, count in Counter(ids).items() if count > 1), key=repr)
    if repeated:
        return f'{kind} ids {repeated[:MAX_NAMED]} are listed more than once'
    return None


def coco_file_problem(dataset: dict) -> Optional[str]:
    """What makes a COCO json's images, categories and annotations disagree, or None
    (the rules: docs/data_checks.md)."""
    ids = [image.get('id') for image in dataset.get('images', [])]
    problem = (
        id_problem('image', ids, (int, str), 'integers or strings')
        or id_problem('category', [cat.get('id') for cat in dataset.get('categories', [])],
                      (int, ), 'integers'))
    if problem:
        return problem
    listed = set(ids)
    orphans = [ann for ann in dataset.get('annotations', []) if ann.get('image_id') not in listed]
    if orphans:
        named = ', '.join(f"annotation id {ann.get('id')} (image_id {ann.get('image_id')!r})"
                          for ann in orphans[:MAX_NAMED])
        return (f'{len(orphans)} annotations belong to no image the file lists: {named}')
    return None


def image_problem(image: dict) -> Optional[str]:
    """Why mmdet cannot read a COCO image record (its ``height``, ``width`` or
    ``file_name``), or None."""
    for field in ('height', 'width'):
        value = image.get(field)
        if type(value) is not int or value < 1:
            return f'has {field} {value!r}; height and width are integers >= 1 (pixels)'
    name = image.get('file_name')
    if (not isinstance(name, str) or os.path.isabs(name)
            or os.path.normpath(name).split(os.sep)[0] == os.pardir):
        return (f'has file_name {name!r}; a file_name is a relative path inside the image '
                'folder (data_prefix img), without a leading / or ..')
    return None


def box_problem(ann: dict) -> Optional[str]:
    """Why a COCO annotation's ``bbox`` or ``area`` is malformed, or None."""
    bbox, area = ann.get('bbox'), ann.get('area')
    if not (isinstance(bbox, list) and len(bbox) == 4 and all(map(is_real, bbox))):
        return f'has bbox {bbox}; a bbox is four finite numbers [x, y, w, h]'
    if min(bbox[2:]) < 0:
        return f'has bbox {bbox} of negative width or height; a bbox is [x, y, w, h], w, h >= 0'
    if not is_real(area) or area < 0:
        return f'has area {area!r}; an area is a finite number >= 0'
    return None


def polygon_problem(segmentation, height: int, width: int) -> Optional[str]:
    """Why an annotation's ``segmentation`` cannot be rasterised in bounded memory
    for an image of ``height`` x ``width``, or None (docs/data_checks.md)."""
    if segmentation is None or segmentation == []:
        return None
    if isinstance(segmentation, dict):
        if segmentation.get('size') != [height, width]:
            return (f"has an RLE of size {segmentation.get('size')}, not the image's "
                    f'[{height}, {width}]')
        return None
    if not isinstance(segmentation, list):
        return f'has segmentation of type {type(segmentation).__name__}: polygons or an RLE'
    for polygon in segmentation:
        if not isinstance(polygon, list):
            return f'has a polygon that is not a list of coordinates: {str(polygon)[:60]}'
        if len(polygon) % 2:
            return f'has a polygon of {len(polygon)} coordinates; a polygon is (x, y) pairs'
        if len(polygon) < 6:
            continue
        bad = [v for v in polygon if not is_real(v)]
        if bad:
            return f'has polygon coordinates {bad[:MAX_NAMED]}; each must be a finite number'
        xs, ys = polygon[0::2], polygon[1::2]
        if (min(xs) < -width or max(xs) > 2 * width or min(ys) < -height or max(ys) > 2 * height):
            return (f'has a polygon reaching x {min(xs)}..{max(xs)}, y {min(ys)}..{max(ys)}, '
                    f'beyond the {width} x {height} image widened by its size on each side')
    return None


def packed_samples(results) -> list:
    """The data samples of a pipeline result: those packed, one or a list
    (TTA), or none when the pipeline does not pack."""
    samples = results.get('data_samples', [])
    return samples if isinstance(samples, Sequence) else [samples]


def label_map_problem(path: str,
                      image_path: str,
                      backend_args: Optional[dict] = None) -> Optional[str]:
    """Why the label map at ``path`` is not one 8-bit channel of class indices of
    the size of its image at ``image_path`` (docs/data_checks.md), or None."""
    with fileio.get_local_path(path, backend_args=backend_args) as local, \
            Image.open(local) as label:
        size, mode, bands = label.size, label.mode, label.getbands()
        values = None if mode in LABEL_MAP_MODES or len(bands) > 1 else np.unique(np.asarray(label))
    if len(bands) > 1:
        return f'it has {len(bands)} channels ({mode}); a label map has one (mode L or P)'
    if values is not None:
        fractions = values[values != np.round(values)]
        if fractions.size:
            return (f'its {mode} values {fractions[:MAX_NAMED].tolist()} are not whole '
                    'numbers; a label map holds class indices')
        wide = values[(values < 0) | (values > 255)]
        if wide.size:
            return (f'its {mode} values {wide[:MAX_NAMED].tolist()} do not fit in 0..255, '
                    'the 8 bits the loader keeps')
    with fileio.get_local_path(image_path, backend_args=backend_args) as local, \
            Image.open(local) as image:
        image_size, orientation = image.size, image.getexif().get(EXIF_ORIENTATION, 1)
    if orientation != 1:
        return (f'its image {image_path} has EXIF orientation {orientation}, so the image is '
                'decoded turned and the label map not; save the image turned as it is shown '
                '(PIL.ImageOps.exif_transpose) without the tag')
    if image_size != size:
        return (f'it is {size[0]} x {size[1]} (width x height) and its image {image_path} '
                f'{image_size[0]} x {image_size[1]}; a label map has its image\'s size')
    return None


class CheckClassLabels:
    """Mixin for mmpretrain's ``CustomDataset``: ``load_data_list`` refuses a
    ``gt_label`` outside 0..num_classes-1 or a file of no sample.

    Args:
        num_classes (int, optional): For files read without
            ``metainfo['classes']``; both given, they must agree; neither, only
            negative labels are refused. Defaults to None.
    """

    def __init__(self, *args, num_classes: Optional[int] = None, **kwargs):
        self.num_classes = num_classes
        super().__init__(*args, **kwargs)

    def load_data_list(self) -> List[dict]:
        data_list = super().load_data_list()
        if not data_list:
            raise AnnotationError(f'annotation file {self.ann_file} lists no sample')
        classes = self.metainfo.get('classes')
        if classes is not None and self.num_classes not in (None, len(classes)):
            raise ValueError(f'num_classes {self.num_classes} differs from the {len(classes)} '
                             f'classes of metainfo {tuple(classes)}')
        num_classes = self.num_classes if classes is None else len(classes)
        upper = math.inf if num_classes is None else num_classes
        bad = [(line, info) for line, info in enumerate(data_list, 1)
               if not 0 <= info.get('gt_label', 0) < upper]
        if bad:
            allowed = ('a label >= 0 (num_classes not given)'
                       if num_classes is None else f'0..{num_classes - 1} ({num_classes} classes)')
            named = ', '.join(f"line {line} ({info['img_path']} {info['gt_label']})"
                              for line, info in bad[:MAX_NAMED])
            raise AnnotationError(f'annotation file {self.ann_file}: {len(bad)} '
                                  f"label{'s' if len(bad) > 1 else ''} outside {allowed}: {named}")
        return data_list


class CheckSegLabels:
    """Mixin for mmseg's ``BaseSegDataset``: ``prepare_data`` checks each
    ``gt_sem_seg`` (1, H, W), its file once (:func:`label_map_problem`) and every
    value a class index, 255 or ``ignore_index``."""

    def __init__(self, *args, **kwargs):
        # Label maps whose file passed label_map_problem (checked once each).
        self.readable_label_maps = set()
        super().__init__(*args, **kwargs)

    def prepare_data(self, idx: int):
        results = super().prepare_data(idx)
        if results is None:
            return results
        maps = [s.gt_sem_seg.data.numpy() for s in packed_samples(results) if 'gt_sem_seg' in s]
        if not maps:
            return results
        info = self.get_data_info(idx)
        path = info['seg_map_path']
        if path not in self.readable_label_maps:
            problem = label_map_problem(path, info['img_path'], self.backend_args)
            if problem:
                raise AnnotationError(f'label map {path} cannot be used: {problem}')
            self.readable_label_maps.add(path)
        num_classes = len(self.metainfo['classes'])
        # 255: what reduce_zero_label and mmseg's class map write for "no class"
        ignored = sorted({255, self.ignore_index})
        for seg in maps:
            bad = ((seg < 0) | (seg >= num_classes)) & ~np.isin(seg, ignored)
            if bad.any():
                raise AnnotationError(
                    f'label map {path} holds label values {np.unique(seg[bad]).tolist()} '
                    f'outside 0..{num_classes - 1} ({num_classes} classes) and the ignored '
                    f'{ignored}{self.loaded_values_note()}')
        return results

    def loaded_values_note(self) -> str:
        """How the loader changed the file's values before the check ('' if
        not)."""
        steps = ['reduce_zero_label (file value v becomes v - 1, and 0 becomes 255)'
                 ] if self.reduce_zero_label else []
        if self.label_map:
            steps.append('the class map of metainfo')
        return f", as loaded after {' and '.join(steps)}" if steps else ''


class CheckCocoRecords:
    """Mixin for mmdet's ``CocoDataset``: every annotation is used or left out on
    purpose (checks in ``COCOAPI``, ``parse_data_info``, ``filter_data`` and
    ``prepare_data``); left-out categories are counted in one warning."""

    def parse_data_info(self, raw_data_info: dict):
        image = raw_data_info['raw_img_info']
        problem = image_problem(image)
        if problem:
            raise AnnotationError(
                f"annotation file {self.ann_file}, image id {image['img_id']} {problem}")
        loads_masks = any(getattr(t, 'with_mask', False) for t in self.pipeline.transforms)
        for ann in raw_data_info['raw_ann_info']:
            if ann.get('ignore', False):
                continue
            problem = self.annotation_problem(ann, image, loads_masks)
            if problem:
                raise AnnotationError(
                    f"annotation file {self.ann_file}, image id {image['img_id']} "
                    f"({image['file_name']}): annotation id {ann.get('id')} {problem}")
        return super().parse_data_info(raw_data_info)

    def annotation_problem(self, ann: dict, image: dict, loads_masks: bool) -> Optional[str]:
        """Why mmdet cannot use the annotation ``ann`` of ``image`` (the pipeline loads
        masks: ``loads_masks``), or None."""
        category, crowd = ann.get('category_id'), ann.get('iscrowd', 0)
        segmentation = ann.get('segmentation')
        if type(category) is not int or category not in self.coco.cats:
            return (f'has category_id {category!r}, not among the integer category ids '
                    f'{sorted(self.coco.cats)} of the file')
        if type(crowd) is not int or crowd not in ISCROWD_VALUES:
            return f'has iscrowd {crowd!r}; iscrowd is one of {ISCROWD_VALUES}'
        problem = box_problem(ann)
        if problem is None and loads_masks and not segmentation:
            problem = (f'has segmentation {segmentation!r}, no polygon or RLE, while the '
                       'pipeline loads masks (LoadAnnotations with_mask=True)')
        return problem or polygon_problem(segmentation, image['height'], image['width'])

    def filter_data(self) -> List[dict]:
        if not self.data_list:
            raise AnnotationError(f'annotation file {self.ann_file} lists no image')
        data_list = super().filter_data()
        if not data_list:
            raise AnnotationError(
                f'annotation file {self.ann_file}: filter_cfg {self.filter_cfg} leaves none of '
                f"its {len(self.data_list)} images (none has an annotation of the classes "
                f"{self.metainfo['classes']} and is at least min_size)")
        unused = {
            cat: len(images)
            for cat, images in self.cat_img_map.items() if cat not in self.cat_ids and images
        }
        if unused:
            MMLogger.get_current_instance().warning(
                f'annotation file {self.ann_file}: {sum(unused.values())} annotations of '
                f'category ids {sorted(unused)}, which metainfo classes leave out, are not used')
        return data_list

    def prepare_data(self, idx: int):
        results = super().prepare_data(idx)
        if results is None:
            return results
        info = self.get_data_info(idx)
        declared = (info['height'], info['width'])
        for sample in packed_samples(results):
            decoded = sample.metainfo.get('ori_shape')
            if decoded is not None and tuple(decoded[:2]) != declared:
                raise AnnotationError(
                    f"annotation file {self.ann_file}, image id {info['img_id']} "
                    f"({info['img_path']}): declared height x width {declared[0]} x "
                    f'{declared[1]}, but the file decodes to {decoded[0]} x {decoded[1]} (as '
                    'detectron2 also refuses; a photo with an EXIF orientation tag is decoded '
                    "turned: fix the json's size, or the image)")
        return results
