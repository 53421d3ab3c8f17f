"""A DyT ViT applied to the frames of a clip, the frames' tokens joined."""
from contextlib import contextmanager, nullcontext
from typing import Dict, Iterator, List, Optional, Union

import torch
from mmengine.model import BaseModule
from mmengine.registry import MODELS

from ..backbones import DynamicBackbone, ViT


@MODELS.register_module()
class DyTVideoViT(DynamicBackbone, BaseModule):
    """Clips (B, C, T, H, W) through an image ViT frame by frame, the frames'
    tokens joined per clip (docs/design_notes.md); the protocol is the ViT's.

    Args:
        vit (dict): Config of the frame backbone (``type`` 'DyTViT' when not
            given) with one output, the tokens (``out_type='raw'`` when not
            given): a :class:`DynamicBackbone`, or a plain ``ViT`` whose every
            token runs every block (full fine-tuning).
        init_cfg (dict | list, optional): Initialisation of the whole model (e.g.
            ``Pretrained`` of a video checkpoint). Defaults to None.
    """

    OBJECTIVE_MODELS = ('DyTRecognizer3D', )

    def __init__(self, vit: dict, init_cfg: Optional[Union[dict, List[dict]]] = None):
        super().__init__(init_cfg=init_cfg)
        if not isinstance(vit, dict):
            raise ValueError(f'vit={vit!r} must be the config dict of a ViT, '
                             "e.g. dict(type='DyTViT', arch='base')")
        vit = {'type': 'DyTViT', 'out_type': 'raw', **vit}
        if vit['out_type'] != 'raw':
            raise ValueError(f"vit.out_type={vit['out_type']!r}: the frames' tokens are joined "
                             "per clip, so the ViT must return them: out_type='raw'")
        vit_class = MODELS.get(vit['type'])
        if not (isinstance(vit_class, type) and issubclass(vit_class, ViT)):
            raise ValueError(f"vit.type={vit['type']!r} is not a ViT: use ViT (full "
                             'fine-tuning), AdapterViT (AdaptFormer), DyTViT or another ViT')
        self.vit = MODELS.build(vit)
        self.dynamic_frames = isinstance(self.vit, DynamicBackbone)
        if self.vit.out_indices != (self.vit.num_layers - 1, ):
            raise ValueError(f"vit.out_indices={vit.get('out_indices')!r}: the tokens of the "
                             'last block are joined, give out_indices=-1')

    @staticmethod
    def clip_frames(x: torch.Tensor) -> torch.Tensor:
        """Clips (B, C, T, H, W) -> frames (B*T, C, H, W), a clip's frames consecutive."""
        if x.dim() != 5:
            raise ValueError(f'{DyTVideoViT.__name__} takes clips (B, C, T, H, W), '
                             f'got a tensor of shape {tuple(x.shape)}')
        b, c, t, h, w = x.shape
        return x.transpose(1, 2).reshape(b * t, c, h, w)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Clips (B, C, T, H, W) -> tokens (B, T * N, C), N tokens per frame.

        Raises:
            RuntimeError: Training a dispatching ViT without an objective.
        """
        self.check_objective()
        b = x.shape[0]
        tokens = self.vit(self.clip_frames(x))[0]
        return tokens.reshape(b, -1, tokens.shape[-1])

    # The protocol is the frame ViT's; a plain ViT's is the defaults.

    def needs_objective(self) -> bool:
        return self.dynamic_frames and self.vit.needs_objective()

    def attach_objective(self, owner: str) -> None:
        super().attach_objective(owner)
        if self.dynamic_frames:
            self.vit.attach_objective(owner)

    @contextmanager
    def complete_mode(self) -> Iterator['DyTVideoViT']:
        with self.vit.complete_mode() if self.dynamic_frames else nullcontext():
            yield self

    def set_packed(self, packed: bool) -> None:
        if self.dynamic_frames:
            self.vit.set_packed(packed)

    def dispatch_masks(self) -> List[Dict[str, torch.Tensor]]:
        """Per dispatched block, part name -> patch-token mask (B*T, N_patches)
        of the last forward, one row per frame."""
        return self.vit.dispatch_masks() if self.dynamic_frames else []

    def activation_rates(self) -> Dict[str, float]:
        return self.vit.activation_rates() if self.dynamic_frames else {}

    def rate_loss(self) -> torch.Tensor:
        return self.vit.rate_loss() if self.dynamic_frames else super().rate_loss()
