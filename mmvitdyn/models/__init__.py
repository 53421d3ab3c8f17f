"""Backbones, layers, necks, token reduction, the video backbone; the task
models are imported with their library on first use (lazy_registry)."""
from ..lazy_registry import lazy_exports
from . import classifiers, detectors, recognizers, segmentors  # noqa: F401
from .backbones import *  # noqa: F401,F403
from .dyt_dense_losses import DyTDenseLossMixin  # noqa: F401
from .dyt_two_pass import DyTTwoPassMixin  # noqa: F401
from .layers import *  # noqa: F401,F403
from .necks import *  # noqa: F401,F403
from .token_reduction import *  # noqa: F401,F403
from .video import *  # noqa: F401,F403

__getattr__ = lazy_exports(__name__)
