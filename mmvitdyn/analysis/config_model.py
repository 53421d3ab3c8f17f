"""A model in evaluation mode and its validation images, from a config.

What the analysis tools (FLOPs, dispatch maps) share: the model is built in
the config's registry scope, and images come through the config's
``val_dataloader`` and the model's data preprocessor, as in evaluation.
"""
from typing import Iterator, Optional

import torch
from mmengine.config import Config
from mmengine.registry import MODELS, init_default_scope
from mmengine.runner import Runner, load_checkpoint
from torch import nn

from mmvitdyn.datasets import check_data_roots


def build_eval_model(cfg: Config, checkpoint: Optional[str] = None) -> nn.Module:
    """``cfg.model`` built in ``cfg.default_scope``, in eval mode, with ``checkpoint``'s weights."""
    init_default_scope(cfg.get('default_scope', 'mmpretrain'))
    model = MODELS.build(cfg.model)
    if checkpoint is not None:
        load_checkpoint(model, checkpoint, map_location='cpu')
    return model.eval()


def val_images(cfg: Config, model: nn.Module, num_images: int) -> Iterator[torch.Tensor]:
    """Preprocessed batches (B, 3, H, W) of the first ``num_images`` validation images."""
    if num_images < 1:
        raise ValueError(f'num_images must be >= 1, got {num_images}')
    check_data_roots(dict(val_dataloader=cfg.val_dataloader))
    loader = Runner.build_dataloader(
        dict(cfg.val_dataloader, num_workers=0, persistent_workers=False))
    seen = 0
    for data in loader:
        inputs = model.data_preprocessor(data, False)['inputs'][:num_images - seen]
        seen += inputs.shape[0]
        yield inputs
        if seen >= num_images:
            return
