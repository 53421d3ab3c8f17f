"""Video recognisers on mmaction2's (imported with mmaction2 on first use)."""
from ...lazy_registry import lazy_exports

__getattr__ = lazy_exports(__name__)

__all__ = ['DyTRecognizer3D']
