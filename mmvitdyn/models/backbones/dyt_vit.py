"""DyT: a frozen ViT with adapters and token dispatchers (Dynamic Tuning)."""
from contextlib import contextmanager
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Union

import torch
from mmengine.registry import MODELS
from torch import nn

from ...utils import check_int, check_number
from ..layers import DISPATCH_PARTS, DyTBlock
from ..layers.token_dispatcher import TOPK_MODES
from .adapter_vit import AdapterViT


@MODELS.register_module()
class DyTViT(AdapterViT):
    """Dynamic Tuning: an :class:`AdapterViT` whose blocks get token dispatchers
    (masked path in training, packed path in evaluation).

    Args:
        dispatch (str, optional): 'mlp' (default), 'attn', 'attn_mlp', 'layer'
            or None (the model of :class:`AdapterViT`).
        target_rate (float): Wanted fraction of active patch tokens, in (0, 1].
            Defaults to 0.5.
        keep_layers (int): Blocks before this index have no dispatcher; rates,
            rate losses and FLOP savings come from blocks ``keep_layers`` to the
            last. Defaults to 0 (every block).
        dispatcher_cfg (dict): Arguments of
            :class:`~mmvitdyn.models.layers.TokenDispatcher` that differ from its
            defaults: ``tau`` (5), ``gumbel`` (True), ``mode`` ('threshold';
            'topk' and 'soft_topk' keep round(target_rate * N) patch tokens per
            dispatched part, 'soft_topk' with ``epsilon``, ``gumbel=False`` and
            MLP dispatch only). Defaults to ``dict()``.
        block_fn (callable): Builds the blocks; takes the arguments of
            :class:`~mmvitdyn.models.layers.DyTBlock`. Defaults to it.
        **kwargs: Arguments of :class:`AdapterViT` (``token_reduction`` with
            dispatch None or 'mlp') and :class:`ViT`.
    """

    OBJECTIVE_MODELS = ('DyTImageClassifier', 'DyTEncoderDecoder', 'DyTMaskRCNN')

    def __init__(self,
                 arch: Union[str, dict] = 'base',
                 dispatch: Optional[str] = 'mlp',
                 target_rate: float = 0.5,
                 keep_layers: int = 0,
                 dispatcher_cfg: dict = dict(),
                 block_fn: Callable[..., nn.Module] = DyTBlock,
                 layer_cfgs: Union[dict, Sequence[dict]] = dict(),
                 **kwargs):
        if dispatch is not None and dispatch not in DISPATCH_PARTS:
            raise ValueError(
                f'dispatch={dispatch!r} is not one of {sorted(DISPATCH_PARTS)} or None')
        check_number(target_rate, 'target_rate', 0, 1, low_open=True)
        check_int(keep_layers, 'keep_layers', minimum=0)
        if keep_layers and dispatch is None:
            raise ValueError(f'keep_layers={keep_layers} chooses the blocks that dispatch, '
                             'but dispatch=None: set dispatch or keep_layers=0')
        arch = self._parse_arch(arch)
        num_layers = arch['num_layers']
        if keep_layers and keep_layers >= num_layers:
            raise ValueError(f'keep_layers={keep_layers} must be < the {num_layers} blocks '
                             f'(allowed: 0..{num_layers - 1}); dispatch=None turns '
                             'dispatch off')
        dispatcher_cfg = dict(dispatcher_cfg)
        mode = dispatcher_cfg.get('mode')
        if mode in TOPK_MODES:
            if 'topk_rate' in dispatcher_cfg:
                raise ValueError(f"dispatcher_cfg.topk_rate={dispatcher_cfg['topk_rate']} "
                                 f'is not a setting: mode={mode!r} keeps target_rate of the tokens')
            dispatcher_cfg['topk_rate'] = target_rate
        if mode == 'soft_topk' and dispatch not in ('mlp', None):
            raise ValueError(f"dispatch={dispatch!r} with dispatcher_cfg.mode='soft_topk': the "
                             "soft top-k weights scale the MLP's outputs, an attention gate has "
                             "no such form; use dispatch='mlp'")
        reduction = kwargs.get('token_reduction')
        if reduction is not None and dispatch not in (None, 'mlp'):
            raise ValueError(f'token_reduction={reduction} needs an ungated attention: dispatch='
                             f"{dispatch!r} is not allowed with it (allowed: None, 'mlp')")
        num_prefix_tokens = self.prefix_token_count(
            kwargs.get('dist_token', False), kwargs.get('num_reg_tokens', 0),
            kwargs.get('class_token'))
        entries = [
            dict(
                dispatch=dispatch if index >= keep_layers else None,
                dispatcher_cfg=dispatcher_cfg,
                num_prefix_tokens=num_prefix_tokens) for index in range(num_layers)
        ]
        super().__init__(
            arch=arch,
            block_fn=block_fn,
            layer_cfgs=self.merge_layer_cfgs(layer_cfgs, entries, 'DyTViT (dispatch)'),
            **kwargs)
        self.dispatch = dispatch
        self.target_rate = target_rate
        self.keep_layers = keep_layers
        self.dispatcher_cfg = dispatcher_cfg

    def needs_objective(self) -> bool:
        """Token dispatch trains with DyT's rate loss."""
        return self.dispatch is not None

    def dyt_blocks(self) -> Iterator[DyTBlock]:
        return (m for m in self.modules() if isinstance(m, DyTBlock))

    @contextmanager
    def complete_mode(self):
        """Within the context every token runs every block part (the "complete model")."""
        blocks = list(self.dyt_blocks())
        previous = [b.complete for b in blocks]
        for block in blocks:
            block.complete = True
        try:
            yield self
        finally:
            for block, flag in zip(blocks, previous):
                block.complete = flag

    def set_packed(self, packed: bool) -> None:
        """Choose the packed (fast) or masked evaluation path."""
        for block in self.dyt_blocks():
            block.packed = packed

    def dispatch_masks(self) -> List[Dict[str, torch.Tensor]]:
        """Per block, part name -> patch-token mask (B, N_patches) of the last forward."""
        extra = self.num_prefix_tokens
        return [{
            part: m[:, extra:]
            for part, m in block.masks.items()
        } for block in self.dyt_blocks()]

    def activation_rates(self) -> Dict[str, float]:
        """Mean active fraction of patch tokens (nonzero mask), overall and per block part."""
        rates, all_active = {}, []
        for i, masks in enumerate(self.dispatch_masks()):
            for part, mask in masks.items():
                active = (mask.detach() != 0).float()
                rates[f'act_rate/{i}.{part}'] = float(active.mean())
                all_active.append(active.flatten())
        if all_active:
            rates['act_rate'] = float(torch.cat(all_active).mean())
        return rates

    def rate_loss(self) -> torch.Tensor:
        """``(mean straight-through mask - target_rate)^2`` of the last forward."""
        masks = [m.flatten() for masks in self.dispatch_masks() for m in masks.values()]
        if not masks:
            return self.pos_embed.new_zeros(())
        return (torch.cat(masks).mean() - self.target_rate)**2
