"""DyT: a frozen ViT with adapters and token dispatchers (Dynamic Tuning)."""
from contextlib import contextmanager
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import torch
from mmengine.registry import MODELS
from torch import nn

from ...utils import check_int, check_number
from ..layers import DISPATCH_PARTS, DyTBlock
from ..layers.token_dispatcher import TOPK_MODES
from .adapter_vit import AdapterViT


@MODELS.register_module()
class DyTViT(AdapterViT):
    """Vision Transformer adapted by Dynamic Tuning.

    An :class:`AdapterViT` whose blocks also get token dispatchers that decide,
    per token, whether it runs the gated block part: the masked path in training,
    the packed path (active tokens only) in evaluation.

    Args:
        dispatch (str, optional): 'mlp' (default), 'attn', 'attn_mlp',
            'layer', or None (AdaptFormer: adapters only).
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
        token_reduction (dict, optional): Config of a token reduction that
            shrinks the sequence inside the blocks (``dict(type='ToMe', r=8)``,
            ``dict(type='EViT', keep_rate=0.7)``; see
            :mod:`mmvitdyn.models.token_reduction`), with dispatch None or 'mlp',
            ``out_type`` 'cls_token' or 'avg_featmap' and the last block as
            output. Defaults to None.
        block_fn (callable): Builds the blocks; takes the arguments of
            :class:`~mmvitdyn.models.layers.DyTBlock`. Defaults to it.
        layer_cfgs (dict | Sequence[dict]): See :class:`ViT`.
        **kwargs: Arguments of :class:`AdapterViT` (``adapter_cfg``,
            ``freeze_pretrained``, ``unfreeze``) and :class:`ViT`.
    """

    OBJECTIVE_MODELS = ('DyTImageClassifier', 'DyTEncoderDecoder', 'DyTMaskRCNN')

    def __init__(self,
                 arch: Union[str, dict] = 'base',
                 dispatch: Optional[str] = 'mlp',
                 target_rate: float = 0.5,
                 keep_layers: int = 0,
                 dispatcher_cfg: dict = dict(),
                 token_reduction: Optional[dict] = None,
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
            if 'keep_rate' in dispatcher_cfg:
                raise ValueError(f"dispatcher_cfg.keep_rate={dispatcher_cfg['keep_rate']} "
                                 f'is not a setting: mode={mode!r} keeps target_rate of the tokens')
            dispatcher_cfg['keep_rate'] = target_rate
        if mode == 'soft_topk' and dispatch not in ('mlp', None):
            raise ValueError(f"dispatch={dispatch!r} with dispatcher_cfg.mode='soft_topk': the "
                             "soft top-k weights scale the MLP's outputs, an attention gate has "
                             "no such form; use dispatch='mlp'")
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
        self.token_reduction = self._build_token_reduction(token_reduction)
        self.last_reduction = None

    def _build_token_reduction(self, cfg: Optional[dict]) -> Optional[nn.Module]:
        if cfg is None:
            return None
        if self.dispatch not in (None, 'mlp'):
            raise ValueError(f'token_reduction={cfg} needs an ungated attention: dispatch='
                             f"{self.dispatch!r} is not allowed with it (allowed: None, 'mlp')")
        if self.out_type not in ('cls_token', 'avg_featmap') or \
                self.out_indices != (self.num_layers - 1, ):
            raise ValueError(f'token_reduction={cfg} changes the token grid: it needs '
                             f"out_type='cls_token' or 'avg_featmap' (got {self.out_type!r}) "
                             f'and out_indices=-1 (got {self.out_indices})')
        reduction = MODELS.build(cfg)
        reduction.check(self.num_layers, self.num_prefix_tokens,
                        self.patch_resolution[0] * self.patch_resolution[1])
        return reduction

    def average_patches(self, patches: torch.Tensor) -> torch.Tensor:
        """Patch tokens (B, M, C) -> (B, C): with a token reduction, the mean
        over the input patches (:meth:`ReductionPass.average`)."""
        if self.token_reduction is None:
            return super().average_patches(patches)
        return self.last_reduction.average(patches)

    def needs_objective(self) -> bool:
        """Token dispatch trains with DyT's rate loss."""
        return self.dispatch is not None

    def block_kwargs(self, grid: Tuple[int, int]) -> dict:
        """A fresh :class:`ReductionPass` for the blocks of this forward (kept as
        :attr:`last_reduction`) when there is a token reduction."""
        kwargs = super().block_kwargs(grid)
        if self.token_reduction is not None:
            self.last_reduction = self.token_reduction.start(self.num_layers,
                                                             self.num_prefix_tokens)
            kwargs['reduction'] = self.last_reduction
        return kwargs

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
