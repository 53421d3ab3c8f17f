"""mmvitdyn: DyT and Cluster-Learngene Vision Transformers for OpenMMLab 2.x.

Importing the package registers its modules in MMEngine's root registries,
so configs of any scope (mmpretrain, mmdet, mmseg) find them through
``custom_imports=dict(imports=['mmvitdyn'], allow_failed_imports=False)``.
The modules that build on mmpretrain, mmdet or mmseg are registered by name
and imported, with their library, when a config first uses one
(:mod:`mmvitdyn.lazy_registry`).
"""
from .openmp_wait import prefer_passive_wait

prefer_passive_wait()  # before anything imports torch (mmvitdyn/openmp_wait.py)

from . import version_check  # noqa: E402,F401  (stops on an unsupported torch/mmcv/mmengine)
from . import datasets, engine, evaluation, learngene, models  # noqa: E402,F401
from .checkpoint import register_checkpoint_schemes  # noqa: E402
from .lazy_registry import install_lazy_entries  # noqa: E402
from .version import __version__  # noqa: E402,F401

install_lazy_entries()
register_checkpoint_schemes()
