"""A model's heads and its data sets have the same number of classes."""
from typing import Iterator, List, Optional, Tuple

from mmengine.config import Config

from .setup_error import SetupError

MAX_NAMED = 8

# Where each scope's models keep their class counts (paths under ``model``;
# a list on the way, e.g. several auxiliary heads, is followed into each).
CLASS_COUNT_FIELDS = {
    'mmpretrain': ('head.num_classes', ),
    'mmdet':
    ('roi_head.bbox_head.num_classes', 'roi_head.mask_head.num_classes', 'bbox_head.num_classes'),
    'mmseg': ('decode_head.num_classes', 'auxiliary_head.num_classes'),
    'mmaction': ('cls_head.num_classes', ),
}


def config_values(node, path: str, field: str) -> Iterator[Tuple[str, object]]:
    """(field, value) at the dotted ``path`` under ``node`` (named ``field``),
    into every element of a list on the way; nothing where a key is absent."""
    if isinstance(node, (list, tuple)):
        for index, item in enumerate(node):
            yield from config_values(item, path, f'{field}[{index}]')
        return
    if not path:
        yield field, node
        return
    key, _, rest = path.partition('.')
    if isinstance(node, dict) and key in node:
        yield from config_values(node[key], rest, f'{field}.{key}')


def head_class_counts(cfg: Config) -> List[Tuple[str, int]]:
    """(field, num_classes) of every head of ``cfg.model`` that has a class
    count, where its scope's models keep it (:data:`CLASS_COUNT_FIELDS`)."""
    return [(field, value) for path in CLASS_COUNT_FIELDS.get(cfg.get('default_scope'), ())
            for field, value in config_values(cfg.get('model'), path, 'model')
            if isinstance(value, int)]


def inner_dataset(dataset, field: str = 'dataset') -> Tuple[str, object]:
    """The data set config inside wrappers (``RepeatDataset(dataset=...)``
    ...) and its field, e.g. ``('dataset.dataset', {...})``."""
    while isinstance(dataset, dict) and isinstance(dataset.get('dataset'), dict):
        dataset, field = dataset['dataset'], field + '.dataset'
    return field, dataset


def dataset_class_count(dataset) -> Optional[Tuple[str, int]]:
    """(field, count) of the classes a data set config declares (its
    ``num_classes``, or the names in ``metainfo.classes`` / ``classes``),
    looking through wrappers (``dataset=``); None if it declares none."""
    field, dataset = inner_dataset(dataset)
    if not isinstance(dataset, dict):
        return None
    if isinstance(dataset.get('num_classes'), int):
        return f'{field}.num_classes', dataset['num_classes']
    for key, classes in (('metainfo.classes', (dataset.get('metainfo')
                                               or {}).get('classes')), ('classes',
                                                                        dataset.get('classes'))):
        if isinstance(classes, (list, tuple)):
            return f'{field}.{key}', len(classes)
    return None


def check_class_counts(cfg: Config) -> None:
    """Refuse a model head whose class count differs from the classes a
    dataloader's data set declares (e.g. an 80-class COCO head on 3 classes).

    Raises:
        SetupError: Naming both fields and their values.
    """
    heads = head_class_counts(cfg)
    for loader in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        declared = dataset_class_count((cfg.get(loader) or {}).get('dataset'))
        if declared is None:
            continue
        field, count = declared
        for head, num_classes in heads:
            if num_classes != count:
                raise SetupError(f'{head}={num_classes} but {loader}.{field} declares {count} '
                                 f'classes: set {head}={count} (and every other head\'s '
                                 'num_classes), or fix the classes')


def check_data_set_classes(cfg: Config, loader: str, dataset) -> None:
    """Refuse a head of ``cfg.model`` whose class count differs from the classes a
    built data set (of the dataloader ``loader``) read: class folders, the
    annotation file's or config's ``metainfo``, the type's own list; a data set
    that knows no class names passes.

    Raises:
        SetupError: Naming the head's field, the data set, its classes and
            their number.
    """
    classes = getattr(dataset, 'metainfo', {}).get('classes')
    if classes is None:
        return
    for head, num_classes in head_class_counts(cfg):
        if num_classes != len(classes):
            raise SetupError(f'{head}={num_classes} but the data set of {loader} '
                             f'({described_data_set(dataset)}) has {len(classes)} classes: '
                             f"{described(classes)}; set {head}={len(classes)} (and every "
                             "other head's num_classes), or fix the data")


def described(classes) -> str:
    """The first :data:`MAX_NAMED` class names, e.g. ``'zero', 'one', ...``."""
    named = ', '.join(repr(name) for name in classes[:MAX_NAMED])
    return named + (f', ... ({len(classes) - MAX_NAMED} more)' if len(classes) > MAX_NAMED else '')


def described_data_set(dataset) -> str:
    """A built data set's type and image folder, e.g.
    ``'CustomDataset under data/my_set/train'``."""
    prefix = getattr(dataset, 'data_prefix', None)
    folder = prefix.get('img_path', prefix.get('img')) if isinstance(prefix, dict) else None
    folder = folder or getattr(dataset, 'data_root', None)
    return type(dataset).__name__ + (f" under {folder.rstrip('/')}" if folder else '')
