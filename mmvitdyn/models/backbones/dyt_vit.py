"""DyT: a frozen ViT with adapters and token dispatchers (Dynamic Tuning)."""
from contextlib import contextmanager
from typing import Dict, Iterator, List, Optional, Sequence

import torch
from mmengine.registry import MODELS
from torch import nn

from ..layers import DISPATCH_PARTS, DyTBlock, is_dyt_param
from .vit import ViT


@MODELS.register_module()
class DyTViT(ViT):
    """Vision Transformer adapted by Dynamic Tuning.

    The pretrained weights are frozen; every block gets an adapter and token
    dispatchers that decide, per token, whether it runs the gated block part.
    In training the masked path keeps the dispatchers differentiable; in
    evaluation the packed path computes active tokens only. The paper's
    baselines are switches: ``dispatch=None`` is AdaptFormer (adapters only),
    and ``dispatch=None, adapter_cfg=None, freeze_pretrained=False`` is full
    fine-tuning.

    Args:
        dispatch (str, optional): 'mlp' (default), 'attn', 'attn_mlp',
            'layer', or None.
        target_rate (float): Wanted fraction of active patch tokens, in (0, 1].
            Defaults to 0.5.
        adapter_cfg (dict, optional): ``bottleneck`` (d), ``scale`` (s),
            ``dropout`` and ``num_experts`` (> 1 gives the MoE-adapter).
            Defaults to d=64, s=0.1, dropout 0.1, one expert. None: no adapter.
        dispatcher_cfg (dict): ``tau`` (Gumbel temperature, default 5) and
            ``gumbel`` (False trains with a plain sigmoid, "DyT-").
        freeze_pretrained (bool): Freeze everything but adapters and
            dispatchers. Defaults to True.
        unfreeze (Sequence[str]): Parameter names (or dotted prefixes, e.g.
            'norm', 'blocks.11') that train although frozen otherwise.
        **kwargs: Arguments of :class:`ViT`.
    """

    def __init__(self,
                 *args,
                 dispatch: Optional[str] = 'mlp',
                 target_rate: float = 0.5,
                 adapter_cfg: Optional[dict] = dict(
                     bottleneck=64, scale=0.1, dropout=0.1, num_experts=1),
                 dispatcher_cfg: dict = dict(tau=5.0, gumbel=True),
                 freeze_pretrained: bool = True,
                 unfreeze: Sequence[str] = (),
                 **kwargs):
        if dispatch is not None and dispatch not in DISPATCH_PARTS:
            raise ValueError(
                f'dispatch={dispatch!r} is not one of {sorted(DISPATCH_PARTS)} or None')
        if not 0 < target_rate <= 1:
            raise ValueError(f'target_rate={target_rate} must lie in (0, 1]')
        if adapter_cfg is not None:
            adapter_cfg = self._check_adapter_cfg(adapter_cfg)
        self.dispatch = dispatch
        self.target_rate = target_rate
        self.adapter_cfg = adapter_cfg
        self.dispatcher_cfg = dict(dispatcher_cfg)
        super().__init__(*args, **kwargs)
        self.unfreeze = tuple(unfreeze)
        self.freeze_pretrained = freeze_pretrained
        if freeze_pretrained:
            self._freeze()

    @staticmethod
    def _check_adapter_cfg(cfg: dict) -> dict:
        cfg = dict(cfg)
        allowed = {'bottleneck', 'scale', 'dropout', 'num_experts'}
        unknown = set(cfg) - allowed
        if unknown:
            raise ValueError(
                f'adapter_cfg has unknown keys {sorted(unknown)}; allowed: {sorted(allowed)}')
        if not isinstance(cfg.get('bottleneck'), int) or cfg['bottleneck'] <= 0:
            raise ValueError('adapter_cfg.bottleneck must be a positive int, '
                             f"got {cfg.get('bottleneck')!r}")
        if int(cfg.get('num_experts', 1)) < 1:
            raise ValueError(f"adapter_cfg.num_experts must be >= 1, got {cfg['num_experts']}")
        if not 0 <= cfg.get('dropout', 0.1) < 1:
            raise ValueError(f"adapter_cfg.dropout must lie in [0, 1), got {cfg['dropout']}")
        return cfg

    def build_block(self, index: int, **kwargs) -> nn.Module:
        return DyTBlock(
            dispatch=self.dispatch,
            adapter_cfg=self.adapter_cfg,
            dispatcher_cfg=self.dispatcher_cfg,
            num_extra_tokens=self.num_extra_tokens,
            **kwargs)

    def dyt_blocks(self) -> Iterator[DyTBlock]:
        return (m for m in self.modules() if isinstance(m, DyTBlock))

    def is_trainable_name(self, name: str) -> bool:
        """Whether parameter ``name`` trains while the pretrained weights are frozen."""
        if is_dyt_param(name):
            return True
        return any(name == u or name.startswith(u + '.') for u in self.unfreeze)

    def _freeze(self):
        names = [name for name, _ in self.named_parameters()]
        for pattern in self.unfreeze:
            if not any(n == pattern or n.startswith(pattern + '.') for n in names):
                raise ValueError(f'unfreeze entry {pattern!r} matches no parameter of '
                                 f'{type(self).__name__}')
        for name, param in self.named_parameters():
            param.requires_grad_(self.is_trainable_name(name))

    def init_weights(self):
        super().init_weights()
        # The ViT's default init (or a checkpoint) must not touch DyT's own
        # parts: zero-initialised up-projections keep the model unchanged at step 0.
        for block in self.dyt_blocks():
            block.reset_dyt_parts()

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
        extra = self.num_extra_tokens
        return [{
            part: m[:, extra:]
            for part, m in block.masks.items()
        } for block in self.dyt_blocks()]

    def activation_rates(self) -> Dict[str, float]:
        """Mean active fraction of patch tokens, overall and per block part."""
        rates, all_masks = {}, []
        for i, masks in enumerate(self.dispatch_masks()):
            for part, mask in masks.items():
                rates[f'act_rate/{i}.{part}'] = float(mask.detach().float().mean())
                all_masks.append(mask.detach().flatten())
        if all_masks:
            rates['act_rate'] = float(torch.cat(all_masks).float().mean())
        return rates

    def rate_loss(self) -> torch.Tensor:
        """``(mean straight-through mask - target_rate)^2`` of the last forward."""
        masks = [m.flatten() for masks in self.dispatch_masks() for m in masks.values()]
        if not masks:
            return self.pos_embed.new_zeros(())
        return (torch.cat(masks).mean() - self.target_rate)**2
