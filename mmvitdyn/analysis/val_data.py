"""Validation images of a config, preprocessed as in evaluation (``val_dataloader``,
then the model's data preprocessor)."""
from typing import Iterator

import torch
from mmengine.config import Config
from mmengine.runner import Runner
from torch import nn

from mmvitdyn.datasets import check_data_roots


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
