"""Registry entries and package exports of the modules that import mmpretrain,
mmdet, mmseg or mmaction, imported when first used (docs/backbones.md,
"Imported on first use"). Names exported lazily (:func:`lazy_exports`, PEP
562) stay out of ``__all__``, so ``from .layers import *`` imports no library.
"""
from importlib import import_module
from typing import Callable, Dict, Optional

from mmengine.registry import DATASETS, METRICS, MODELS, Registry

LIBRARY_MODULES: Dict[str, Dict[str, Optional[Registry]]] = {
    'mmvitdyn.datasets.segmentation': {
        'FileCheckedADE20KDataset': DATASETS,
        'FileCheckedBaseSegDataset': DATASETS
    },
    'mmvitdyn.datasets.coco': {
        'FileCheckedCocoDataset': DATASETS
    },
    'mmvitdyn.datasets.custom': {
        'FileCheckedCustomDataset': DATASETS
    },
    'mmvitdyn.evaluation.coco_metric': {
        'EmptyAwareCocoMetric': METRICS
    },
    'mmvitdyn.learngene.ancestries.levit': {
        'LeViTAncestry': None,
        'LeViTAttentionDistanceRecorder': None
    },
    'mmvitdyn.learngene.ancestries.swin': {
        'SwinAncestry': None,
        'WindowAttentionDistanceRecorder': None
    },
    'mmvitdyn.learngene.descendants.levit': {
        'LearngeneLeViT': MODELS,
        'levit_arch': None
    },
    'mmvitdyn.learngene.descendants.swin': {
        'LearngeneSwin': MODELS
    },
    'mmvitdyn.models.classifiers.distillation_classifier': {
        'DistillationImageClassifier': MODELS
    },
    'mmvitdyn.models.classifiers.dynamicvit_classifier': {
        'DynamicViTClassifier': MODELS
    },
    'mmvitdyn.models.classifiers.dyt_classifier': {
        'DyTImageClassifier': MODELS
    },
    'mmvitdyn.models.detectors.dyt_mask_rcnn': {
        'DyTMaskRCNN': MODELS
    },
    'mmvitdyn.models.layers.quick_gelu': {
        'QuickGELU': MODELS
    },
    'mmvitdyn.models.segmentors.dyt_encoder_decoder': {
        'DyTEncoderDecoder': MODELS
    },
    'mmvitdyn.models.recognizers.dyt_recognizer3d': {
        'DyTRecognizer3D': MODELS
    },
    'mmvitdyn.models.video.attentive_pooling_head': {
        'AttentivePoolingHead': MODELS
    },
}


class LazyModuleDict(dict):
    """A registry's ``_module_dict`` (name -> class) that also holds pending names
    (name -> the module that registers it), imported when the name is looked up or
    set, all of them when the dict is listed; a failed import keeps it pending.

    Args:
        entries (dict): The registered names -> classes (or functions).
        pending (dict): Names not registered yet -> module that registers them.
    """

    def __init__(self, entries: Dict[str, Callable], pending: Dict[str, str]):
        super().__init__(entries)
        self.pending = {name: module for name, module in pending.items() if name not in entries}

    def load(self, name) -> None:
        """Import the module of ``name`` if it is pending."""
        module = self.pending.pop(name, None)
        if module is None:
            return
        try:
            import_module(module)
        except BaseException:
            self.pending[name] = module
            raise

    def load_all(self) -> None:
        """Import the modules of every pending name."""
        for name in list(self.pending):
            self.load(name)

    def __contains__(self, name) -> bool:
        self.load(name)
        return super().__contains__(name)

    def __getitem__(self, name):
        self.load(name)
        return super().__getitem__(name)

    def __setitem__(self, name, value) -> None:
        self.load(name)
        super().__setitem__(name, value)

    def get(self, name, default=None):
        self.load(name)
        return super().get(name, default)

    def __iter__(self):
        self.load_all()
        return super().__iter__()

    def __len__(self) -> int:
        self.load_all()
        return super().__len__()

    def keys(self):
        self.load_all()
        return super().keys()

    def values(self):
        self.load_all()
        return super().values()

    def items(self):
        self.load_all()
        return super().items()


def install_lazy_entries() -> None:
    """Add the registered names of :data:`LIBRARY_MODULES` to their root
    registries as pending (see :class:`LazyModuleDict`)."""
    registries = {owner for names in LIBRARY_MODULES.values() for owner in names.values() if owner}
    for registry in registries:
        pending = {
            name: module
            for module, names in LIBRARY_MODULES.items()
            for name, owner in names.items() if owner is registry
        }
        if not isinstance(registry._module_dict, LazyModuleDict):
            registry._module_dict = LazyModuleDict(registry._module_dict, pending)


def lazy_exports(package: str) -> Callable[[str], object]:
    """The PEP 562 ``__getattr__`` of ``package``: the names of
    :data:`LIBRARY_MODULES` below it, each imported from its module on access."""
    modules = {
        name: module
        for module, names in LIBRARY_MODULES.items() if module.startswith(f'{package}.')
        for name in names
    }

    def __getattr__(name: str):
        if name not in modules:
            raise AttributeError(f'module {package!r} has no attribute {name!r}')
        return getattr(import_module(modules[name]), name)

    return __getattr__
