"""Check that the data a config reads exists, and say how to get what is not.

Paths are joined as mmengine's ``BaseDataset`` joins them: ``ann_file`` and
each ``data_prefix`` entry under ``data_root`` unless absolute.
"""
import os.path as osp
from pathlib import PurePath
from typing import Iterator, List, Optional, Tuple

from .generators import GENERATORS

DATALOADERS = ('train_dataloader', 'val_dataloader', 'test_dataloader')
EVALUATORS = ('val_evaluator', 'test_evaluator')

# How to obtain each real data set, by its default data root.
REAL_DATA_HINTS = {
    'data/coco':
    'download train2017.zip, val2017.zip and annotations_trainval2017.zip '
    'from https://cocodataset.org/#download and unzip them into data/coco',
    'data/ade/ADEChallengeData2016':
    'download http://data.csail.mit.edu/places/ADEchallenge/'
    'ADEChallengeData2016.zip and unzip it into data/ade',
    'data/imagenet':
    'download ILSVRC2012 from https://image-net.org and lay it out as '
    "mmpretrain's ImageNet expects (data/imagenet/{train,val}/ and "
    'meta/{train,val}.txt)',
    'data/cifar100':
    "mmpretrain's CIFAR100 downloads it on first use when online; offline, "
    'unpack https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz into '
    'data/cifar100',
    'data/vtab-1k':
    'get the VTAB-1K splits of the PEFT literature (as prepared by NOAH, '
    'https://github.com/ZhangYuanhan-AI/NOAH: <task>/images/, '
    'train800val200.txt, test.txt) into data/vtab-1k',
    'data/cifar10':
    "mmpretrain's CIFAR10 downloads it on first use when online; offline, "
    'unpack https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz into '
    'data/cifar10',
    'data/flowers102':
    'download 102flowers.tgz, imagelabels.mat and setid.mat from '
    'https://www.robots.ox.ac.uk/~vgg/data/flowers/102/ into data/flowers102 '
    '(jpg/, imagelabels.mat, setid.mat)',
    'data/stanford_cars':
    'get the Stanford Cars images and devkit into data/stanford_cars as '
    "mmpretrain's StanfordCars reads them (cars_train/, cars_test/, devkit/ "
    'with cars_train_annos.mat and cars_test_annos_withlabels.mat)',
    'data/CUB_200_2011':
    'download CUB_200_2011.tgz from '
    'https://www.vision.caltech.edu/datasets/cub_200_2011/ and unpack it into '
    'data/ (images/, images.txt, image_class_labels.txt, train_test_split.txt)',
    'data/food-101':
    'download food-101.tar.gz from '
    'https://data.vision.ee.ethz.ch/cvl/datasets_extra/food-101/ and unpack it '
    'into data/ (images/, meta/train.txt, meta/test.txt)',
    'data/inat2019':
    'download train_val2019.tar.gz, train2019.json and val2019.json of '
    'https://github.com/visipedia/inat_comp/tree/master/2019 into data/inat2019, '
    'unpack the images there and write meta/train2019.txt and '
    "meta/val2019.txt with one '<file_name> <category_id>' line per entry of "
    "the JSON files' images and annotations",
    'data/stanford_dogs':
    'download images.tar and lists.tar from '
    'http://vision.stanford.edu/aditya86/ImageNetDogs/ and unpack them into '
    'data/stanford_dogs (Images/, train_list.mat, test_list.mat), then write '
    "meta/train.txt and meta/test.txt with one '<file_list entry> <labels entry - 1>' "
    'line per entry of train_list.mat / test_list.mat',
    'data/nabirds':
    'download nabirds.tar.gz from https://dl.allaboutbirds.org/nabirds and unpack it '
    'into data/ (nabirds/images/, images.txt, image_class_labels.txt, '
    "train_test_split.txt), then write meta/train.txt and meta/test.txt with one "
    "'<images.txt path> <label>' line per image that train_test_split.txt marks 1 / 0, "
    "the label being the rank of the image's class id among the 555 sorted ids of "
    'image_class_labels.txt',
    'data/svhn':
    "save the 'train' and 'test' splits of torchvision's SVHN (it downloads them "
    'and maps the label 10 to 0) as image files in class folders, '
    'data/svhn/{train,test}/{0..9}/<index>.png',
    'data/dtd':
    'download dtd-r1.0.1.tar.gz from https://www.robots.ox.ac.uk/~vgg/data/dtd/ and '
    "unpack it into data/ (dtd/images/, dtd/imdb/imdb.mat, dtd/labels/), as mmpretrain's "
    'DTD reads it',
    'data/eurosat':
    'download EuroSAT_RGB.zip from https://zenodo.org/records/7711810 and unzip it into '
    "data/eurosat (EuroSAT_RGB/<class>/*.jpg), then write meta/train.txt (torchgeo's "
    'eurosat-train.txt and eurosat-val.txt images) and meta/test.txt (eurosat-test.txt) '
    "with one '<class>/<file>.jpg <label>' line per image, the label being the class "
    "folder's rank in sorted order",
    'data/resisc45':
    'download NWPU-RESISC45.rar (https://gcheng-nwpu.github.io/#Datasets) and unpack it '
    "into data/resisc45 (NWPU-RESISC45/<class>/*.jpg), then write meta/train.txt "
    "(torchgeo's resisc45-train.txt and resisc45-val.txt images) and meta/test.txt "
    "(resisc45-test.txt) with one '<class>/<file>.jpg <label>' line per image, the "
    "label being the class folder's rank in sorted order",
    'data/kinetics400':
    "get the Kinetics-400 videos as mmaction2's tools/data/kinetics prepares them: "
    'data/kinetics400/videos_{train,val}/ and kinetics400_{train,val}_list_videos.txt '
    "with one '<video file> <label>' line per video",
    'data/sthv2':
    'download Something-Something v2 (https://developer.qualcomm.com/software/ai-datasets/'
    "something-something) and prepare it as mmaction2's tools/data/sthv2 does: "
    'data/sthv2/videos/*.webm and sthv2_{train,val}_list_videos.txt with one '
    "'<video file> <label>' line per video",
}


def leaf_datasets(dataset: dict, where: str) -> Iterator[Tuple[str, dict]]:
    """Dataset configs inside wrappers (``RepeatDataset``'s ``dataset``,
    ``ConcatDataset``'s ``datasets``), each with its place in the config."""
    if 'dataset' in dataset:
        yield from leaf_datasets(dataset['dataset'], f'{where}.dataset')
    elif 'datasets' in dataset:
        for index, child in enumerate(dataset['datasets']):
            yield from leaf_datasets(child, f'{where}.datasets[{index}]')
    else:
        yield where, dataset


def dataset_paths(dataset: dict) -> List[Tuple[str, str]]:
    """(field, path) of what a dataset config reads: its ``data_root``, then
    its ``data_prefix`` folders and ``ann_file`` joined onto it."""
    root = dataset.get('data_root') or ''
    paths = [('data_root', root)] if root else []
    prefixes = dataset.get('data_prefix') or {}
    if isinstance(prefixes, str):
        prefixes = {'img_path': prefixes}
    paths += [(f'data_prefix.{key}', osp.join(root, prefix)) for key, prefix in prefixes.items()
              if prefix]
    if dataset.get('ann_file'):
        paths.append(('ann_file', osp.join(root, dataset['ann_file'])))
    return paths


def _end_of(parts: Tuple[str, ...], known: str) -> Optional[int]:
    """Index just past the first run of ``known``'s components in
    ``parts``, or None."""
    wanted = PurePath(known).parts
    for start in range(len(parts) - len(wanted) + 1):
        if parts[start:start + len(wanted)] == wanted:
            return start + len(wanted)
    return None


def how_to_get(path: str) -> str:
    """The command that generates the set ``path`` belongs to, or the hint
    on how to obtain the real set."""
    parts = PurePath(osp.normpath(path)).parts
    for generator in GENERATORS.values():
        end = _end_of(parts, generator.default_root)
        if end is not None:
            root = str(PurePath(*parts[:end]))
            return f'create it with: {generator.command(root)}'
    for root, hint in REAL_DATA_HINTS.items():
        if _end_of(parts, root) is not None:
            return hint
    known = [g.default_root for g in GENERATORS.values()] + list(REAL_DATA_HINTS)
    return f'it is none of the known data roots {known}'


def config_dataset_paths(cfg) -> Iterator[Tuple[str, str, str]]:
    """(dataset place, field, path) of each path a dataloader of ``cfg``
    reads (:func:`dataset_paths` of each leaf dataset)."""
    for loader in DATALOADERS:
        dataset = (cfg.get(loader) or {}).get('dataset')
        if dataset:
            for where, leaf in leaf_datasets(dataset, f'{loader}.dataset'):
                for field, path in dataset_paths(leaf):
                    yield where, field, path


def data_paths(cfg) -> List[str]:
    """The files and scanned folders the data of ``cfg`` is read from: each
    dataset's ``ann_file`` and ``data_prefix`` folders (its ``data_root``
    only when it has neither: then the root is scanned), its evaluators'
    ``ann_file``."""
    fields: dict = {}
    for where, field, path in config_dataset_paths(cfg):
        fields.setdefault(where, []).append((field, path))
    paths = []
    for entries in fields.values():
        read = [path for field, path in entries if field != 'data_root']
        paths += read or [path for _, path in entries]
    for key in EVALUATORS:
        evaluators = cfg.get(key) or []
        for evaluator in evaluators if isinstance(evaluators, (list, tuple)) else [evaluators]:
            if isinstance(evaluator, dict) and isinstance(evaluator.get('ann_file'), str):
                paths.append(evaluator['ann_file'])
    return paths


def check_data_roots(cfg) -> None:
    """Raise if a dataloader of ``cfg`` reads a path that does not exist.

    Args:
        cfg (mmengine.Config | dict): Config with any of
            ``train_dataloader``, ``val_dataloader``, ``test_dataloader``.

    Raises:
        FileNotFoundError: One line per missing path (the first missing one
            of each dataset), naming the config field, the path and how to
            create or obtain it.
    """
    missing, short = {}, set()
    for where, field, path in config_dataset_paths(cfg):
        if where not in short and not osp.exists(path):
            short.add(where)  # its first missing path only
            missing.setdefault(path, f'{where}.{field} {path!r} does not exist; '
                               f'{how_to_get(path)}')
    if missing:
        raise FileNotFoundError('\n'.join(missing.values()))
