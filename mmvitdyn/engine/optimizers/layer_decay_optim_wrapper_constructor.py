"""Layer-wise learning-rate decay for any model whose backbone tells parameter depths."""
from collections import defaultdict
from typing import Dict, List, Optional, Tuple

from mmengine.logging import MMLogger
from mmengine.optim import DefaultOptimWrapperConstructor
from mmengine.registry import OPTIM_WRAPPER_CONSTRUCTORS
from torch import nn

PARAMWISE_KEYS = {'layer_decay_rate', 'no_decay_keys'}


def layer_decay_scale(depth: int, num_depths: int, decay_rate: float) -> float:
    """Learning-rate multiplier of a parameter at ``depth`` (0 = embeddings) of
    ``num_depths``: ``decay_rate ** (num_depths - 1 - depth)``, so the last depth
    (heads, necks) keeps the base rate and each depth below it is ``decay_rate``
    times slower than the one above."""
    if not 0 <= depth < num_depths:
        raise ValueError(f'depth={depth} is outside 0..{num_depths - 1}')
    return decay_rate**(num_depths - 1 - depth)


@OPTIM_WRAPPER_CONSTRUCTORS.register_module()
class LayerDecayOptimWrapperConstructor(DefaultOptimWrapperConstructor):
    """Parameter groups by backbone depth and weight decay, frozen parameters left out.

    A parameter's depth is ``backbone.get_layer_depth(name, prefix='backbone.')``
    (``model.backbone``, or the model itself without one); necks and heads are at
    the last depth (the base rate). Parameters with ``requires_grad=False`` are not
    given to the optimiser. Weight decay is 0 for 1-D parameters, the backbone's
    ``no_weight_decay()`` names and names containing a ``no_decay_keys`` entry.

    ``paramwise_cfg``:
        layer_decay_rate (float): Decay per depth, in (0, 1]; 1 gives every
            depth the base rate. Defaults to 1.
        no_decay_keys (Sequence[str]): More name fragments without weight decay.

    Example::

        optim_wrapper = dict(
            optimizer=dict(type='AdamW', lr=1e-4, weight_decay=0.1),
            constructor='LayerDecayOptimWrapperConstructor',
            paramwise_cfg=dict(layer_decay_rate=0.7))
    """

    def __init__(self, optim_wrapper_cfg: dict, paramwise_cfg: Optional[dict] = None):
        paramwise_cfg = {'layer_decay_rate': 1.0, 'no_decay_keys': (), **(paramwise_cfg or {})}
        unknown = set(paramwise_cfg) - PARAMWISE_KEYS
        if unknown:
            raise ValueError(f'paramwise_cfg keys {sorted(unknown)} are not supported by '
                             'LayerDecayOptimWrapperConstructor; allowed: '
                             f'{sorted(PARAMWISE_KEYS)}')
        if not 0 < paramwise_cfg['layer_decay_rate'] <= 1:
            raise ValueError(f"paramwise_cfg.layer_decay_rate must lie in (0, 1], got "
                             f"{paramwise_cfg['layer_decay_rate']}")
        super().__init__(optim_wrapper_cfg, paramwise_cfg)

    def add_params(self,
                   params: List[dict],
                   module: nn.Module,
                   prefix: str = '',
                   is_dcn_module=None) -> None:
        """Append one parameter group per (depth, decay / no decay) to ``params``."""
        backbone = getattr(module, 'backbone', module)
        if not hasattr(backbone, 'get_layer_depth'):
            raise TypeError(f'LayerDecayOptimWrapperConstructor needs a backbone with '
                            f'get_layer_depth(); {type(backbone).__name__} has none')
        backbone_prefix = 'backbone.' if backbone is not module else ''
        no_decay_names = set(getattr(backbone, 'no_weight_decay', set)())
        decay_rate = self.paramwise_cfg['layer_decay_rate']
        groups: Dict[Tuple[int, bool], dict] = {}
        for name, param in module.named_parameters():
            if not param.requires_grad:
                continue
            depth, num_depths = backbone.get_layer_depth(name, prefix=backbone_prefix)
            decay = not self._no_decay(name, param.ndim, backbone_prefix, no_decay_names)
            if (depth, decay) not in groups:
                scale = layer_decay_scale(depth, num_depths, decay_rate)
                groups[depth, decay] = dict(
                    params=[],
                    layer_depth=depth,
                    lr_scale=scale,
                    lr=self.base_lr * scale,
                    weight_decay=(self.base_wd or 0.) if decay else 0.)
            groups[depth, decay]['params'].append(param)
        params.extend(groups[key] for key in sorted(groups))
        self._log_groups(groups, decay_rate)

    def _no_decay(self, name: str, ndim: int, backbone_prefix: str, no_decay_names: set) -> bool:
        short = name[len(backbone_prefix):] if name.startswith(backbone_prefix) else name
        return (ndim <= 1 or short in no_decay_names
                or any(key in name for key in self.paramwise_cfg['no_decay_keys']))

    @staticmethod
    def _log_groups(groups: Dict[Tuple[int, bool], dict], decay_rate: float) -> None:
        counts = defaultdict(lambda: [0, 0])
        for (depth, decay), group in groups.items():
            counts[depth, group['lr_scale']][not decay] += len(group['params'])
        lines = [
            f'  depth {depth:2d}: lr x {scale:.4g}, {decayed} decayed + {kept} not decayed'
            for (depth, scale), (decayed, kept) in sorted(counts.items())
        ]
        MMLogger.get_current_instance().info(
            f'Layer-wise lr decay {decay_rate}: {len(groups)} groups of trainable parameters\n' +
            '\n'.join(lines))
