from .backbones import *  # noqa: F401,F403
from .classifiers import *  # noqa: F401,F403
from .detectors import *  # noqa: F401,F403
from .dyt_dense_losses import DyTDenseLossMixin  # noqa: F401
from .layers import *  # noqa: F401,F403
from .necks import *  # noqa: F401,F403
from .segmentors import *  # noqa: F401,F403
from .token_reduction import *  # noqa: F401,F403
