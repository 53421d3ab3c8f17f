"""AdaptFormer: a frozen ViT with a bottleneck adapter beside every MLP."""
from typing import Callable, Iterator, List, Optional, Sequence, Set, Tuple, Union

import torch
from mmengine.registry import MODELS
from torch import nn

from ...checkpoint import LEARNABLE_SCALE, PYRAMID_PREFIX, is_dyt_param
from ...utils import check_bool, check_int, check_number
from ..layers import AdapterBlock, supplied_head_name
from ..layers.adapter import ADAPTER_LAYER_NORMS, EXPERT_ADAPTERS
from .dynamic_backbone import DynamicBackbone
from .vit import ViT

ADAPTER_KEYS = ('bottleneck', 'scale', 'dropout', 'num_experts', 'layer_norm', 'mixing', 'share_up')
# DyTViT's token-dispatch arguments, refused by the classes without dispatch.
DISPATCH_ARGUMENTS = ('dispatch', 'target_rate', 'keep_layers', 'dispatcher_cfg')


def check_adapter_cfg(cfg: dict) -> dict:
    """A copy of ``cfg`` (the arguments of :func:`~mmvitdyn.models.layers.build_adapter`
    but ``dim``), or a ``ValueError`` naming the bad field and what is allowed."""
    cfg = dict(cfg)
    unknown = set(cfg) - set(ADAPTER_KEYS)
    if unknown:
        raise ValueError(
            f'adapter_cfg has unknown keys {sorted(unknown)}; allowed: {sorted(ADAPTER_KEYS)}')
    check_int(cfg.get('bottleneck'), 'adapter_cfg.bottleneck', minimum=1)
    check_int(cfg.get('num_experts', 1), 'adapter_cfg.num_experts', minimum=1)
    check_number(cfg.get('dropout', 0.1), 'adapter_cfg.dropout', 0, 1, high_open=True)
    scale = cfg.get('scale', 0.1)
    if scale != LEARNABLE_SCALE:
        try:
            check_number(scale, 'adapter_cfg.scale')
        except ValueError as err:
            raise ValueError(f'{err} or {LEARNABLE_SCALE!r}') from None
    if cfg.get('layer_norm') not in ADAPTER_LAYER_NORMS:
        raise ValueError(f"adapter_cfg.layer_norm={cfg['layer_norm']!r} is not one of "
                         f'{ADAPTER_LAYER_NORMS}')
    mixing = cfg.get('mixing', 'router')
    if mixing not in EXPERT_ADAPTERS or (mixing == 'adamix' and cfg.get('num_experts', 1) < 2):
        raise ValueError(f'adapter_cfg.mixing={mixing!r} is not one of {tuple(EXPERT_ADAPTERS)} '
                         "('adamix' mixes num_experts >= 2 experts, got "
                         f"num_experts={cfg.get('num_experts', 1)})")
    if 'share_up' in cfg:
        check_bool(cfg['share_up'], 'adapter_cfg.share_up')
        if mixing != 'adamix':
            raise ValueError("adapter_cfg.share_up is an AdaMix setting (mixing='adamix'), "
                             f'got mixing={mixing!r}')
    return cfg


def _is_under(name: str, prefix: str) -> bool:
    """Whether parameter ``name`` is ``prefix`` or lies under it (a dotted prefix)."""
    return name == prefix or name.startswith(prefix + '.')


@MODELS.register_module()
class AdapterViT(DynamicBackbone, ViT):
    """A ViT tuned by AdaptFormer: frozen pretrained weights, an adapter beside
    every block's MLP (:class:`~mmvitdyn.models.layers.AdapterBlock`).

    The trainable set is decided once, at the end of construction (docs/backbones.md,
    "What trains"). Full fine-tuning is a :class:`ViT`.

    Args:
        arch (str | dict): See :class:`ViT`. Defaults to 'base'.
        adapter_cfg (dict, optional): ``bottleneck`` (d), ``scale`` (a float or
            'learnable'), ``dropout``, ``num_experts`` (> 1: the MoE-adapter, or
            AdaMix with ``mixing='adamix'``) and ``layer_norm`` (None, 'in' or
            'out'; see :class:`~mmvitdyn.models.layers.Adapter`). Defaults to d=64,
            s=0.1, dropout 0.1, one expert, no LayerNorm. None: no adapter.
        freeze_pretrained (bool): Freeze everything but the parts tuning adds
            (:func:`~mmvitdyn.checkpoint.is_dyt_param`) and the ``pyramid``.
            Defaults to True.
        unfreeze (Sequence[str]): Parameter names or dotted prefixes ('norm',
            'blocks.11', tied heads as ``blocks.1.attn.qkv``) that train too.
        allow_random_frozen (bool): Train frozen weights that no checkpoint
            filled (e.g. in tests). Defaults to False.
        token_reduction (dict, optional): A ToMe or EViT config
            (:mod:`mmvitdyn.models.token_reduction`); needs ``out_type``
            'cls_token' or 'avg_featmap', ``out_indices=-1``. Defaults to None.
        block_fn (callable): Builds the blocks; takes ``adapter_cfg``.
            Defaults to :class:`~mmvitdyn.models.layers.AdapterBlock`.
        **kwargs: Arguments of :class:`ViT` (``layer_cfgs`` ...).
    """

    def __init__(self,
                 arch: Union[str, dict] = 'base',
                 adapter_cfg: Optional[dict] = dict(
                     bottleneck=64, scale=0.1, dropout=0.1, num_experts=1),
                 freeze_pretrained: bool = True,
                 unfreeze: Sequence[str] = (),
                 allow_random_frozen: bool = False,
                 token_reduction: Optional[dict] = None,
                 block_fn: Callable[..., nn.Module] = AdapterBlock,
                 layer_cfgs: Union[dict, Sequence[dict]] = dict(),
                 **kwargs):
        dispatch_settings = sorted(set(kwargs) & set(DISPATCH_ARGUMENTS))
        if dispatch_settings:
            raise TypeError(f'{type(self).__name__} has no token dispatch: {dispatch_settings} '
                            "are DyTViT's arguments (type='DyTViT')")
        unfreeze = self.check_unfreeze(unfreeze)
        arch = self._parse_arch(arch)
        adapter_cfg = check_adapter_cfg(adapter_cfg) if adapter_cfg is not None else None
        entries = [dict(adapter_cfg=adapter_cfg)] * arch['num_layers']
        super().__init__(
            arch=arch,
            block_fn=block_fn,
            layer_cfgs=self.merge_layer_cfgs(layer_cfgs, entries, 'AdapterViT (adapter_cfg)'),
            **kwargs)
        self.adapter_cfg = adapter_cfg
        self.freeze_pretrained = freeze_pretrained
        self.unfreeze = unfreeze
        self.allow_random_frozen = check_bool(allow_random_frozen, 'allow_random_frozen')
        # Frozen parameters a state dict (or a learngene) has filled.
        self.filled_frozen: Set[str] = set()
        if freeze_pretrained:
            self._freeze()
        self._register_load_state_dict_pre_hook(self._note_frozen_weights)
        self.token_reduction = self._build_token_reduction(token_reduction)
        self.last_reduction = None

    def _build_token_reduction(self, cfg: Optional[dict]) -> Optional[nn.Module]:
        if cfg is None:
            return None
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

    def block_kwargs(self, grid: Tuple[int, int]) -> dict:
        """A fresh :class:`ReductionPass` for the blocks of this forward (kept as
        :attr:`last_reduction`) when there is a token reduction."""
        kwargs = super().block_kwargs(grid)
        if self.token_reduction is not None:
            self.last_reduction = self.token_reduction.start(self.num_layers,
                                                             self.num_prefix_tokens)
            kwargs['reduction'] = self.last_reduction
        return kwargs

    @staticmethod
    def check_unfreeze(unfreeze: Sequence[str]) -> Tuple[str, ...]:
        """``unfreeze`` as a tuple of names, or a ``ValueError`` for a bare string."""
        if isinstance(unfreeze, str):
            raise ValueError(f'unfreeze={unfreeze!r} must be a list of parameter names or '
                             f'prefixes, e.g. [{unfreeze!r}]')
        return tuple(unfreeze)

    def _note_frozen_weights(self, state_dict, prefix, *args, **kwargs) -> None:
        """Load-state-dict pre-hook: note in :attr:`filled_frozen` the frozen
        parameters ``state_dict`` holds as dense real values of their shape."""
        for name, param in self.named_parameters():
            value = state_dict.get(prefix + name)
            if not param.requires_grad and self._fills(value, param):
                self.filled_frozen.add(name)

    @staticmethod
    def _fills(value, param: nn.Parameter) -> bool:
        return (isinstance(value, torch.Tensor) and value.layout == torch.strided
                and not value.is_meta and not value.is_complex() and value.shape == param.shape)

    def unfilled_frozen(self) -> List[str]:
        """Frozen parameters that no state dict (nor learngene) filled, but
        those the model creates on purpose (``is_new_param``)."""
        return [
            name for name, param in self.named_parameters() if not param.requires_grad
            and name not in self.filled_frozen and not self.is_new_param(name)
        ]

    def check_frozen_weights(self) -> None:
        """Raise ``RuntimeError`` naming the frozen weights that are still
        random (see ``allow_random_frozen``)."""
        if not self.freeze_pretrained or self.allow_random_frozen:
            return
        unfilled = self.unfilled_frozen()
        if unfilled:
            frozen = sum(not p.requires_grad for p in self.parameters())
            raise RuntimeError(
                f'{type(self).__name__} would tune its adapters on frozen weights that no '
                f'checkpoint filled: {len(unfilled)} of its {frozen} frozen tensors keep their '
                f"random initialisation ({', '.join(unfilled[:5])}"
                f"{', ...' if len(unfilled) > 5 else ''}). Give it pretrained weights of its "
                "shape and names with load_from=CKPT, model.backbone.init_cfg=dict(type="
                "'Pretrained', checkpoint=CKPT) or --resume, or set "
                'model.backbone.allow_random_frozen=True to train on random frozen weights on '
                'purpose (a test)')

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        """See :class:`ViT`; raises ``RuntimeError`` in training on random frozen
        weights (:meth:`check_frozen_weights`) or without a needed objective."""
        if self.training:
            self.check_frozen_weights()
        self.check_objective()
        return super().forward(x)

    def tuning_blocks(self) -> Iterator[AdapterBlock]:
        """The blocks with tuning parts (adapter, dispatchers)."""
        return (m for m in self.modules() if isinstance(m, AdapterBlock))

    def is_new_param(self, name: str) -> bool:
        return is_dyt_param(name) or super().is_new_param(name)

    def is_trainable_name(self, name: str) -> bool:
        """Whether parameter ``name`` trains with frozen pretrained weights: the
        tuning parts, the ``pyramid`` and what ``unfreeze`` names."""
        if is_dyt_param(name) or name.startswith(PYRAMID_PREFIX):
            return True
        return any(
            _is_under(known, entry) for entry in self.unfreeze
            for known in {name, supplied_head_name(name)})

    def _freeze(self) -> None:
        names = [
            known for name, _ in self.named_parameters()
            for known in (name, supplied_head_name(name))
        ]
        for pattern in self.unfreeze:
            if not any(_is_under(n, pattern) for n in names):
                raise ValueError(f'unfreeze entry {pattern!r} matches no parameter of '
                                 f'{type(self).__name__}')
        for name, param in self.named_parameters():
            param.requires_grad_(self.is_trainable_name(name))

    def init_weights(self):
        super().init_weights()
        # The ViT's default init (or a checkpoint) must not touch the tuning
        # parts: zero-initialised up-projections keep the model unchanged at step 0.
        for block in self.tuning_blocks():
            block.reset_tuning_parts()
