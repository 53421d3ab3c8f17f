"""Data sets whose errors name the unreadable file (docs/data_checks.md)."""
from typing import Optional

import mmcv
from mmengine import fileio

from .annotation_checks import AnnotationError

# The per-sample files of mmpretrain, mmdet and mmseg data infos.
FILE_KEYS = ('img_path', 'seg_map_path')


class DataFileError(ValueError):
    """A data set's annotation file, image or label map cannot be read."""


def image_file_problem(path: str) -> Optional[str]:
    """Why ``path`` is not a readable image (for OpenCV and Pillow), or None."""
    try:
        data = fileio.get(path)
    except OSError as err:
        return f'{type(err).__name__}: {err}'
    if not data:
        return 'the file is empty'
    for backend in ('cv2', 'pillow'):
        try:
            if mmcv.imfrombytes(data, flag='unchanged', backend=backend) is None:
                return f'{backend} cannot decode its {len(data)} bytes'
        except Exception as err:  # decoders raise many types for corrupt data
            return f'{backend}: {type(err).__name__}: {err}'.strip()
    return None


class NameFilesOnError:
    """Mixin (put first) for mmengine ``BaseDataset`` subclasses: a failing
    ``load_data_list`` or ``prepare_data`` raises :class:`DataFileError` naming the
    file that cannot be read; other errors pass unchanged."""

    def load_data_list(self):
        try:
            return super().load_data_list()
        except AnnotationError:
            raise
        except Exception as err:
            if not self.ann_file:
                raise
            raise DataFileError(f'annotation file {self.ann_file} cannot be loaded: '
                                f'{type(err).__name__}: {err}') from err

    def prepare_data(self, idx: int):
        try:
            return super().prepare_data(idx)
        except Exception as err:
            info = self.get_data_info(idx)
            for key in FILE_KEYS:
                path = info.get(key)
                problem = image_file_problem(path) if isinstance(path, str) else None
                if problem:
                    raise DataFileError(f'{key} {path} cannot be read: {problem}') from err
            raise
