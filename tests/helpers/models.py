"""The tiny ViT the tests build, its backbones and its inputs.

One setting for every test: 3 blocks of 4 heads of 8 dims on 32 x 32 images in
8 x 8 patches, a 4 x 4 grid (17 tokens with the class token). A test that
needs another shape overrides one argument and says why. Backbones with
frozen weights (AdapterViT and its subclasses) train on random ones on
purpose: ``allow_random_frozen=True`` unless a test says otherwise.
"""
from typing import Tuple, Union

import torch
from mmengine.registry import MODELS

from mmvitdyn.models import AdapterViT, ViT

TINY_ARCH = dict(embed_dims=32, num_layers=3, num_heads=4, feedforward_channels=64)
IMG_SIZE, PATCH_SIZE = 32, 8


def tiny_backbone_cfg(type: str = 'ViT', **kwargs) -> dict:
    """The config dict of a ``type`` backbone (ViT, DyTViT ...) of TINY_ARCH on
    32 x 32 images; ``kwargs`` add or override arguments."""
    return {
        'type': type,
        'arch': dict(TINY_ARCH),
        'img_size': IMG_SIZE,
        'patch_size': PATCH_SIZE,
        **random_frozen(MODELS.get(type)),
        **kwargs
    }


def shrink_to_tiny(backbone: dict) -> None:
    """Make a config's ViT ``backbone`` dict the tiny ViT, random (no checkpoint)."""
    backbone.update(
        arch=dict(TINY_ARCH),
        img_size=IMG_SIZE,
        patch_size=PATCH_SIZE,
        init_cfg=None,
        **random_frozen(MODELS.get(backbone['type'])))


def random_frozen(model_cls) -> dict:
    """``allow_random_frozen=True`` for a backbone class with frozen weights."""
    frozen = isinstance(model_cls, type) and issubclass(model_cls, AdapterViT)
    return dict(allow_random_frozen=True) if frozen else {}


def tiny(model_cls=ViT, seed: int = 0, **kwargs):
    """A ``model_cls`` backbone of TINY_ARCH on 32 x 32 images, built and
    initialised (``init_weights``) from ``seed``, in eval mode; ``kwargs``
    add or override arguments."""
    torch.manual_seed(seed)
    model = model_cls(
        **{
            'arch': dict(TINY_ARCH),
            'img_size': IMG_SIZE,
            'patch_size': PATCH_SIZE,
            **random_frozen(model_cls),
            **kwargs
        })
    model.init_weights()
    return model.eval()


def images(n: int = 4, size: Union[int, Tuple[int, int]] = IMG_SIZE, seed: int = 1):
    """(n, 3, H, W) standard-normal images, ``size`` H = W or (H, W), from their own
    seeded generator (the global RNG is left alone)."""
    h, w = (size, size) if isinstance(size, int) else size
    return torch.randn(n, 3, h, w, generator=torch.Generator().manual_seed(seed))
