"""mmvitdyn: DyT and Cluster-Learngene Vision Transformers for OpenMMLab 2.x.

Importing the package registers its modules in MMEngine's root registries,
so configs of any scope (mmpretrain, mmdet, mmseg) find them through
``custom_imports=dict(imports=['mmvitdyn'], allow_failed_imports=False)``.
"""
from . import version_check  # noqa: F401  (first: stops on an unsupported torch/mmcv/mmengine)
from . import datasets, engine, learngene, models  # noqa: F401
from .utils import register_checkpoint_schemes
from .version import __version__  # noqa: F401

register_checkpoint_schemes()
