"""Checks that a data set's annotations hold values its model can use.

OpenMMLab's data sets pass bad annotations on without a word: mmpretrain's
``CustomDataset`` a label outside the classes (scored as wrong, or a crash in
the loss), mmseg's ``LoadAnnotations`` a label value outside the class map, a
16-bit map cut to 8 bits and an RGB map as (H, W, 3); mmdet's ``CocoDataset``
drops an annotation of an unknown category or with a NaN box, and an image
whose declared size is not the file's has its boxes clipped to the wrong
size. The mixins below raise :class:`AnnotationError` naming the file and the
record instead; put them before :class:`~.file_errors.NameFilesOnError` in a
data set's bases. ``docs/data_checks.md`` lists what each one checks.
"""
import math
from typing import List, Optional, Sequence

import numpy as np
from mmengine import fileio
from mmengine.logging import MMLogger
from PIL import Image

# Pillow modes that decode to one channel of 8-bit values.
LABEL_MAP_MODES = ('1', 'L', 'P')
# Records named in full in an error; the rest are counted.
MAX_NAMED = 5


class AnnotationError(ValueError):
    """A readable annotation file or label map holds a record the data set
    cannot use."""


def packed_samples(results) -> list:
    """The data samples of a pipeline result: those packed, one or a list
    (TTA), or none when the pipeline does not pack."""
    samples = results.get('data_samples', [])
    return samples if isinstance(samples, Sequence) else [samples]


def label_map_problem(path: str, backend_args: Optional[dict] = None) -> Optional[str]:
    """Why the label map at ``path`` cannot be read as one 8-bit channel, or
    None.

    Only the header is read for 8-bit single-channel maps (Pillow modes
    ``1``, ``L``, ``P``). A map of 16- or 32-bit integers is decoded and
    refused if it holds a value outside 0..255 (mmseg's loader keeps the low
    8 bits); a map with several channels is refused.
    """
    with fileio.get_local_path(path, backend_args=backend_args) as local, \
            Image.open(local) as image:
        if image.mode in LABEL_MAP_MODES:
            return None
        bands = image.getbands()
        if len(bands) > 1:
            return (f'it has {len(bands)} channels ({image.mode}); a label map has one '
                    '(mode L or P)')
        values = np.unique(np.asarray(image))
    wide = values[(values < 0) | (values > 255)]
    if wide.size:
        return (f'its {image.mode} values {wide[:MAX_NAMED].tolist()} do not fit in 0..255, '
                'the 8 bits the loader keeps')
    return None


class CheckClassLabels:
    """Mixin for mmpretrain's ``CustomDataset``: every label is a class index.

    ``load_data_list`` raises :class:`AnnotationError` naming the annotation
    file, the lines (with their image and label) and the allowed range when a
    ``gt_label`` lies outside 0..num_classes-1, or when the file lists no
    sample.

    Args:
        num_classes (int, optional): The number of classes, for annotation
            files read without ``metainfo['classes']``; set it to the model
            head's ``num_classes``. When both are given they must agree.
            Without either, only negative labels are refused.
            Defaults to None.
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
    """Mixin for mmseg's ``BaseSegDataset``: every label map is one 8-bit
    channel of class indices.

    ``prepare_data`` checks each sample that the pipeline gave a
    ``gt_sem_seg`` (shape (1, H, W)): the file must pass
    :func:`label_map_problem`, and every value, as loaded (after
    ``reduce_zero_label`` and the class map), must be a class index
    0..num_classes-1, 255 (what ``reduce_zero_label`` and mmseg's class map
    write) or ``ignore_index``; the file is checked once. A failure raises
    :class:`AnnotationError` naming the label map, the values and the range.
    """

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
        path = self.get_data_info(idx)['seg_map_path']
        if path not in self.readable_label_maps:
            problem = label_map_problem(path, self.backend_args)
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
    """Mixin for mmdet's ``CocoDataset``: every annotation is used or left
    out on purpose.

    - ``parse_data_info``: an annotation (not flagged ``ignore``) whose
      ``category_id`` is not among the file's categories, or whose ``bbox``
      is not four finite numbers, raises :class:`AnnotationError` naming the
      file, the image and the annotation id. Crowd, empty and out-of-image
      boxes are left to mmdet, which skips them on purpose.
    - ``filter_data``: a file without images, or whose images are all
      filtered out, raises :class:`AnnotationError`; annotations of
      categories left out of ``metainfo['classes']`` are counted in one
      warning.
    - ``prepare_data``: an image whose decoded size (``ori_shape`` in the
      packed meta) differs from its declared height and width raises
      :class:`AnnotationError`.
    """

    def parse_data_info(self, raw_data_info: dict):
        image = raw_data_info['raw_img_info']
        for ann in raw_data_info['raw_ann_info']:
            if ann.get('ignore', False):
                continue
            bbox = ann.get('bbox')
            if ann.get('category_id') not in self.coco.cats:
                problem = (f"has category_id {ann.get('category_id')}, not among the file's "
                           f'category ids {sorted(self.coco.cats)}')
            elif not (isinstance(bbox, list) and len(bbox) == 4
                      and all(isinstance(v, (int, float)) and math.isfinite(v) for v in bbox)):
                problem = f'has bbox {bbox}; a bbox is four finite numbers [x, y, w, h]'
            else:
                continue
            raise AnnotationError(
                f"annotation file {self.ann_file}, image id {image['img_id']} "
                f"({image['file_name']}): annotation id {ann.get('id')} {problem}")
        return super().parse_data_info(raw_data_info)

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
