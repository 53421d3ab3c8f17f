from .resample import build_resampler
from .rescale_pyramid import RescalePyramid
from .simple_fpn import SimpleFPN

__all__ = ['RescalePyramid', 'SimpleFPN', 'build_resampler']
