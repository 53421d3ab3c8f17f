"""A DyT ViT applied to the frames of a clip, the frames' tokens joined."""
from contextlib import contextmanager
from typing import Dict, Iterator, List, Optional, Union

import torch
from mmengine.model import BaseModule
from mmengine.registry import MODELS

from ..backbones import DynamicBackbone


@MODELS.register_module()
class DyTVideoViT(DynamicBackbone, BaseModule):
    """Clips through an image ViT frame by frame.

    Clips (B, C, T, H, W), mmaction2's ``NCTHW``, become B*T frames (the T
    frames of a clip consecutive); the ViT (a :class:`DyTViT` by default,
    frozen, with adapters and token dispatchers) runs on them as on images,
    and its final-normed tokens of every frame, class token included,
    are joined per clip, frame after frame: (B, T * N, C). No temporal
    embedding is added. Frames are dispatched like images: each frame's patch
    tokens get their own masks, its class token is never dispatched.

    The :class:`DynamicBackbone` protocol is the ViT's: masks, rates and
    the rate loss cover all frames of the last forward (masks per frame,
    (B*T, N_patches)), and the variants are the ViT's switches
    (``dispatch=None``: AdaptFormer; an ``adapter_cfg`` with experts: MoE-adapter
    or AdaMix; ``dispatch=None, adapter_cfg=None, freeze_pretrained=False``:
    full fine-tuning). The wrapper holds no parameters of its own.

    Args:
        vit (dict): Config of the frame backbone, ``type`` 'DyTViT' when not
            given; it must be a :class:`DynamicBackbone` with one output, the
            tokens (``out_type='raw'``, set when not given; ``out_indices``
            the last block).
        init_cfg (dict | list, optional): Initialisation config of the whole
            model (e.g. ``Pretrained`` of a video checkpoint); the ViT's own
            ``init_cfg`` loads image checkpoints. Defaults to None.
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
        self.vit = MODELS.build(vit)
        if not isinstance(self.vit, DynamicBackbone):
            raise ValueError(f"vit.type={vit['type']!r} is not a DynamicBackbone ViT; use "
                             "DyTViT (its switches give AdaptFormer and full fine-tuning) or "
                             'another DynamicBackbone')
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
        """Clips (B, C, T, H, W) -> the frames' tokens (B, T * N, C), N = tokens per frame.

        Raises:
            RuntimeError: Training a dispatching ViT that no model or loop
                attached an objective to (see :meth:`check_objective`).
        """
        self.check_objective()
        b = x.shape[0]
        tokens = self.vit(self.clip_frames(x))[0]
        return tokens.reshape(b, -1, tokens.shape[-1])

    def needs_objective(self) -> bool:
        return self.vit.needs_objective()

    def attach_objective(self, owner: str) -> None:
        super().attach_objective(owner)
        self.vit.attach_objective(owner)

    @contextmanager
    def complete_mode(self) -> Iterator['DyTVideoViT']:
        with self.vit.complete_mode():
            yield self

    def set_packed(self, packed: bool) -> None:
        self.vit.set_packed(packed)

    def dispatch_masks(self) -> List[Dict[str, torch.Tensor]]:
        """Per dispatched block, part name -> patch-token mask (B*T, N_patches)
        of the last forward, one row per frame."""
        return self.vit.dispatch_masks()

    def activation_rates(self) -> Dict[str, float]:
        return self.vit.activation_rates()

    def rate_loss(self) -> torch.Tensor:
        return self.vit.rate_loss()
