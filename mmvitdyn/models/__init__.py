"""Backbones, layers, necks and token reduction; the classifiers, detectors,
segmentors and ``QuickGELU``, which build on mmpretrain, mmdet and mmseg, are
imported with their library on first use (:mod:`mmvitdyn.lazy_registry`)."""
from ..lazy_registry import lazy_exports
from . import classifiers, detectors, segmentors  # noqa: F401
from .backbones import *  # noqa: F401,F403
from .dyt_dense_losses import DyTDenseLossMixin  # noqa: F401
from .layers import *  # noqa: F401,F403
from .necks import *  # noqa: F401,F403
from .token_reduction import *  # noqa: F401,F403
from .video import *  # noqa: F401,F403

__getattr__ = lazy_exports(__name__)
