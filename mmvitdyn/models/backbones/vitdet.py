"""ViTDet's plain backbone (Li et al., 2022) as a recipe for any ViT."""
from functools import partial
from typing import Sequence, Tuple, Union

from mmengine.logging import MMLogger
from mmengine.registry import MODELS

from ...checkpoint import REL_POS_TABLES
from ...utils import check_bool, check_int
from ..layers import RelPosAttention
from .adapter_vit import AdapterViT
from .vit import ViT


def _is_square(n: int) -> bool:
    return n > 0 and int(n**0.5)**2 == n


def rel_pos_table_names(num_layers: int) -> Tuple[str, ...]:
    """The relative-position tables of every block's attention."""
    return tuple(f'blocks.{i}.attn.{table}' for i in range(num_layers) for table in REL_POS_TABLES)


class ViTDetRecipe:
    """ViTDet's backbone (docs/backbones.md) for the ViT class after it in the
    MRO: ``class ViTDet(ViTDetRecipe, ViT)``. Tokens (B, h * w, C), no class token.

    Args:
        window_size (int): Window side of the windowed blocks (0: all global).
            Defaults to 14.
        global_indices (Sequence[int]): Blocks with global attention. Defaults
            to (2, 5, 8, 11).
        use_rel_pos (bool): Decomposed relative position bias. Defaults to True.
        input_size (int): Input side the global blocks' tables are made for.
            Defaults to 1024.
        window_padding (str): 'zero' (ViTDet, SAM) or 'masked'. Defaults to 'zero'.
        out_type (str): 'featmap' (default), 'raw' or 'avg_featmap'.
        final_norm (bool): Defaults to False (ViTDet's pyramid normalises).
        **kwargs: ``arch``, ``img_size``, ``patch_size``, ``out_indices``,
            ``layer_cfgs`` and the other arguments of the ViT class.
    """
    OUT_TYPES = {'raw', 'featmap', 'avg_featmap'}
    class_token = False

    def __init__(self,
                 arch: Union[str, dict] = 'base',
                 img_size: int = 224,
                 patch_size: int = 16,
                 window_size: int = 14,
                 global_indices: Sequence[int] = (2, 5, 8, 11),
                 use_rel_pos: bool = True,
                 input_size: int = 1024,
                 window_padding: str = 'zero',
                 out_indices: Union[int, Sequence[int]] = -1,
                 out_type: str = 'featmap',
                 final_norm: bool = False,
                 layer_cfgs: Union[dict, Sequence[dict]] = dict(),
                 **kwargs):
        if kwargs.get('token_reduction') is not None:
            raise ValueError(f"token_reduction={kwargs['token_reduction']}: "
                             f"{type(self).__name__}'s windows need the whole patch grid")
        arch = self._parse_arch(arch)
        num_layers = arch['num_layers']
        for index, value in enumerate(global_indices):
            check_int(value, f'global_indices[{index}]')
        bad = [i for i in global_indices if not -num_layers <= i < num_layers]
        if bad:
            raise ValueError(f'global_indices entries {bad} are out of range for {num_layers} '
                             f'layers (allowed: {-num_layers}..{num_layers - 1})')
        check_int(window_size, 'window_size (0: every block global)', minimum=0)
        check_bool(use_rel_pos, 'use_rel_pos')
        check_int(patch_size, 'patch_size', minimum=1)
        check_int(input_size, 'input_size', minimum=patch_size)
        global_indices = tuple(sorted({i % num_layers for i in global_indices}))
        entries = []
        for index in range(num_layers):
            window = 0 if index in global_indices else window_size
            rel_pos_size = (window or input_size // patch_size) if use_rel_pos else None
            entries.append(
                dict(
                    attn_layer=partial(
                        RelPosAttention,
                        window_size=window,
                        rel_pos_size=rel_pos_size,
                        window_padding=window_padding)))
        super().__init__(
            arch=arch,
            img_size=img_size,
            patch_size=patch_size,
            out_indices=out_indices,
            out_type=out_type,
            final_norm=final_norm,
            layer_cfgs=self.merge_layer_cfgs(layer_cfgs, entries,
                                             f'{type(self).__name__} (attention)'),
            **kwargs)
        self.window_size = window_size
        self.global_indices = global_indices
        self.use_rel_pos = use_rel_pos
        self.input_size = input_size
        self.window_padding = window_padding

    def block_kwargs(self, grid: Tuple[int, int]) -> dict:
        """The patch grid, which the windowed attention needs."""
        return dict(super().block_kwargs(grid), grid=grid)

    def _resize_pos_embed_on_load(self, state_dict, prefix, *args, **kwargs):
        """Drop a classification checkpoint's class-token slot, then resize the grid."""
        key = prefix + 'pos_embed'
        if key in state_dict:
            tokens = state_dict[key].shape[1]
            if not _is_square(tokens) and _is_square(tokens - 1):
                MMLogger.get_current_instance().info(f'Drop the class-token slot of {key} '
                                                     f'({type(self).__name__} has no class token)')
                state_dict[key] = state_dict[key][:, 1:]
        super()._resize_pos_embed_on_load(state_dict, prefix, *args, **kwargs)

    def is_new_param(self, name: str) -> bool:
        return name.rsplit('.', 1)[-1] in REL_POS_TABLES or super().is_new_param(name)

    def no_weight_decay(self) -> set:
        return {'pos_embed'} | {
            name
            for name, _ in self.named_parameters() if name.rsplit('.', 1)[-1] in REL_POS_TABLES
        }


class TunedViTDetRecipe(ViTDetRecipe):
    """:class:`ViTDetRecipe` for a frozen :class:`AdapterViT` base; with
    ``train_rel_pos`` (default True) the relative-position tables train."""

    def __init__(self,
                 arch: Union[str, dict] = 'base',
                 use_rel_pos: bool = True,
                 train_rel_pos: bool = True,
                 unfreeze: Sequence[str] = (),
                 **kwargs):
        check_bool(train_rel_pos, 'train_rel_pos')
        unfreeze = self.check_unfreeze(unfreeze)
        if check_bool(use_rel_pos, 'use_rel_pos') and train_rel_pos:
            unfreeze = (*unfreeze, *rel_pos_table_names(self._parse_arch(arch)['num_layers']))
        super().__init__(arch=arch, use_rel_pos=use_rel_pos, unfreeze=unfreeze, **kwargs)
        self.train_rel_pos = train_rel_pos


@MODELS.register_module()
class ViTDet(ViTDetRecipe, ViT):
    """ViTDet's plain backbone, every parameter trained (full fine-tuning)."""


@MODELS.register_module()
class AdapterViTDet(TunedViTDetRecipe, AdapterViT):
    """AdaptFormer on ViTDet's backbone: a frozen ViTDet with adapters."""
