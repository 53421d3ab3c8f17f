"""DyT on ViTDet's plain backbone: windowed attention, relative positions, feature maps."""
from functools import partial
from typing import Sequence, Tuple, Union

from mmengine.logging import MMLogger
from mmengine.registry import MODELS

from ...utils import check_bool, check_int
from ..layers import RelPosAttention
from .dyt_vit import DyTViT

# The relative-position tables of every block's attention (new to a classification checkpoint).
REL_POS_TABLES = ('rel_pos_h', 'rel_pos_w')


def _is_square(n: int) -> bool:
    return n > 0 and int(n**0.5)**2 == n


@MODELS.register_module()
class DyTViTDet(DyTViT):
    """DyT ViT as the plain backbone of ViTDet (Li et al., 2022).

    Tokens are the patch tokens only, (B, h * w, C) row-major over the patch
    grid (no class token: ``class_token = False``). Most blocks attend within
    ``window_size`` windows, the blocks in ``global_indices`` over the whole
    grid, all with a decomposed relative position bias. The absolute position
    embedding keeps the pre-training grid (``img_size / patch_size``) and is
    interpolated to each input's grid. Outputs are (B, C, h, w) maps of the
    blocks in ``out_indices``: the last block alone for ViTDet's simple
    feature pyramid (stride 16), several for UperNet. A grid that is not a
    multiple of the window (ViTDet's 1024 input: 64 tokens, windows of 14)
    is padded with zero tokens that the windows attend to (``window_padding``).

    Token dispatch works as in :class:`DyTViT` with MLP dispatch (the
    default): windowed and global attention run on every token, the MLP on
    the active ones, packed in evaluation. Dispatch variants that gate the
    attention raise (use :class:`DyTViT`, global attention, for those).
    ``dispatch=None`` is AdaptFormer on ViTDet, and
    ``dispatch=None, adapter_cfg=None, freeze_pretrained=False`` a plain ViTDet.

    Loading a classification checkpoint (timm, MAE, DyTViT): the class-token
    slot of its ``pos_embed`` is dropped and the grid resized, its
    ``cls_token`` (and final ``norm`` when ``final_norm=False``) is ignored,
    relative-position tables of another size are interpolated, and absent
    ones start at zero.

    Args:
        arch (str | dict): See :class:`ViT`. Defaults to 'base'.
        img_size (int): Pre-training input size the position embedding is
            made for. Defaults to 224.
        patch_size (int): Patch side. Defaults to 16.
        window_size (int): Window side in tokens of the windowed blocks.
            Defaults to 14.
        global_indices (Sequence[int]): Blocks with global attention
            (negative values count from the end). Defaults to (2, 5, 8, 11),
            ViTDet's choice for ViT-B.
        use_rel_pos (bool): Decomposed relative position bias in every block.
            Defaults to True.
        input_size (int): Input side the global blocks' relative-position
            tables are made for (ViTDet: 1024); others interpolate them.
            Defaults to 1024.
        window_padding (str): 'zero' (ViTDet, SAM: zero tokens after
            ``norm1``, attended to) or 'masked' (padded keys masked out).
            Defaults to 'zero'.
        train_rel_pos (bool): With ``freeze_pretrained``, train the
            relative-position tables too (a plain ViT checkpoint has none):
            they are added to ``unfreeze``. Defaults to True.
        out_indices (int | Sequence[int]): Blocks whose maps are returned.
            Defaults to -1.
        out_type (str): 'featmap' (B, C, h, w), 'raw' (B, h * w, C) or
            'avg_featmap' (B, C). Defaults to 'featmap'.
        final_norm (bool): Normalise the last block's tokens. Defaults to
            False (ViTDet normalises in its feature pyramid).
        **kwargs: Arguments of :class:`DyTViT` and :class:`ViT`.
    """
    OUT_TYPES = {'raw', 'featmap', 'avg_featmap'}
    class_token = False

    OBJECTIVE_MODELS = ('DyTMaskRCNN', 'DyTEncoderDecoder')

    def __init__(self,
                 arch: Union[str, dict] = 'base',
                 img_size: int = 224,
                 patch_size: int = 16,
                 window_size: int = 14,
                 global_indices: Sequence[int] = (2, 5, 8, 11),
                 use_rel_pos: bool = True,
                 input_size: int = 1024,
                 window_padding: str = 'zero',
                 train_rel_pos: bool = True,
                 out_indices: Union[int, Sequence[int]] = -1,
                 out_type: str = 'featmap',
                 final_norm: bool = False,
                 unfreeze: Sequence[str] = (),
                 layer_cfgs: Union[dict, Sequence[dict]] = dict(),
                 **kwargs):
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
        check_bool(train_rel_pos, 'train_rel_pos')
        check_int(patch_size, 'patch_size', minimum=1)
        check_int(input_size, 'input_size', minimum=patch_size)
        global_indices = tuple(sorted({i % num_layers for i in global_indices}))
        entries = []
        for index in range(num_layers):
            window = 0 if index in global_indices else window_size
            rel_pos_size = (window or input_size // patch_size) \
                if use_rel_pos else None
            entries.append(
                dict(
                    attn_layer=partial(
                        RelPosAttention,
                        window_size=window,
                        rel_pos_size=rel_pos_size,
                        window_padding=window_padding)))
        unfreeze = self.check_unfreeze(unfreeze)
        if use_rel_pos and train_rel_pos:
            unfreeze = (*unfreeze, *(f'blocks.{i}.attn.{table}' for i in range(num_layers)
                                     for table in REL_POS_TABLES))
        super().__init__(
            arch=arch,
            img_size=img_size,
            patch_size=patch_size,
            out_indices=out_indices,
            out_type=out_type,
            final_norm=final_norm,
            unfreeze=unfreeze,
            layer_cfgs=self.merge_layer_cfgs(layer_cfgs, entries, 'DyTViTDet (attention)'),
            **kwargs)
        self.window_size = window_size
        self.global_indices = global_indices
        self.use_rel_pos = use_rel_pos
        self.input_size = input_size
        self.window_padding = window_padding
        self.train_rel_pos = train_rel_pos

    def block_kwargs(self, grid: Tuple[int, int]) -> dict:
        return dict(grid=grid)

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
