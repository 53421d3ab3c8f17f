"""The official DyT code's layout (NUS-HPC-AI-Lab/Dynamic-Tuning)."""
import re
from typing import Any, List, Mapping

import torch

from ..vit_names import PYRAMID_PREFIX
from .keys import check_supported, rename
from .registry import CHECKPOINT_FORMATS, CheckpointFormat, StateDict
from .timm import convert_timm

DYT_REL_POS = "relative position bias (its segmentation backbone's use_rel_pos_bias)"
DYT_UNSUPPORTED = {
    '.relative_position_bias_table': DYT_REL_POS,
    '.relative_position_index': DYT_REL_POS,
}
DYT_RENAMES = (
    (r'^blocks\.(\d+)\.adaptmlp\.down_proj\.', r'blocks.\1.adapter.down.'),
    (r'^blocks\.(\d+)\.adaptmlp\.up_proj\.', r'blocks.\1.adapter.up.'),
    (r'^blocks\.(\d+)\.adaptmlp\.adapter_layer_norm_before\.', r'blocks.\1.adapter.norm.'),
    (r'^blocks\.(\d+)\.adaptmlp\.scale$', r'blocks.\1.adapter.scale'),
    (r'^blocks\.(\d+)\.mlp_token_select\.mlp_head\.', r'blocks.\1.dispatchers.mlp.gate.'),
    # The segmentation backbone's pyramid, ViT(pyramid=dict(type='RescalePyramid')).
    *((rf'^fpn{j + 1}\.', f'{PYRAMID_PREFIX}resamplers.{j}.') for j in range(4)),
)


def _blocks_with(state_dict: Mapping[str, Any], suffix: str) -> List[int]:
    """Sorted indices i of the keys ``blocks.{i}.{suffix}``."""
    pattern = re.compile(r'^blocks\.(\d+)\.' + re.escape(suffix) + '$')
    return sorted({int(m.group(1)) for k in state_dict for m in [pattern.match(k)] if m})


def _check_dyt_parts(state_dict: Mapping[str, torch.Tensor]) -> None:
    """Refuse renamed DyT parts that DyTViT cannot hold, naming keys and switches."""
    unknown = [k for k in state_dict if '.adaptmlp.' in f'.{k}' or '.mlp_token_select.' in f'.{k}']
    if unknown:
        raise ValueError(
            f'DyT checkpoint keys {unknown} are not parts mmvitdyn maps: the adapter '
            '(adaptmlp.{down_proj, up_proj, adapter_layer_norm_before, scale}) and the MLP '
            'dispatcher (mlp_token_select.mlp_head)')
    gates = {k: v for k, v in state_dict.items() if re.match(r'^blocks\.\d+\.dispatchers\.', k)}
    wide = [k for k, v in gates.items() if k.endswith('.weight') and v.shape[0] != 1]
    if wide:
        raise ValueError(f'DyT checkpoint keys {wide} are dispatchers with more than one output '
                         '(TokenSelect num_sub_layer > 1); a DyTViT dispatcher has one')
    adapters = _blocks_with(state_dict, 'adapter.down.weight')
    switches = (('adapter.norm.weight', "adapter_cfg.layer_norm='in' or 'out'"),
                ('adapter.scale', "adapter_cfg.scale='learnable'"))
    for suffix, switch in switches:
        present = _blocks_with(state_dict, suffix)
        if present and present != adapters:
            raise ValueError(f'DyT checkpoint has blocks.*.{suffix} in blocks {present} but '
                             f'adapters in blocks {adapters}: {switch} applies to every adapter')
    dispatched = _blocks_with(state_dict, 'dispatchers.mlp.gate.weight')
    depth = len(_blocks_with(state_dict, 'norm1.weight'))
    if dispatched and dispatched != list(range(dispatched[0], depth)):
        raise ValueError(f'DyT checkpoint has dispatchers (blocks.*.mlp_token_select) in blocks '
                         f'{dispatched} of {depth}: keep_layers=k dispatches blocks k to '
                         f'{depth - 1}, every one of them')


def convert_dyt(state_dict: Mapping[str, torch.Tensor]) -> StateDict:
    """Official DyT checkpoint (``model`` wrapper removed) -> mmvitdyn.

    The switches the result needs are in :func:`~mmvitdyn.checkpoint.describe_checkpoint`.

    Raises:
        ValueError: A key DyTViT has no place for (named, with the official
            switch that makes it), or a pattern of DyT parts no setting of
            ``keep_layers`` / ``adapter_cfg`` gives.
    """
    check_supported(state_dict, DYT_UNSUPPORTED, 'DyT')
    renamed = {rename(k, DYT_RENAMES): v for k, v in state_dict.items()}
    _check_dyt_parts(renamed)
    return convert_timm(renamed)


@CHECKPOINT_FORMATS.register_module(name='dyt')
class DyTFormat(CheckpointFormat):
    """A timm ViT plus ``blocks.{i}.adaptmlp`` / ``blocks.{i}.mlp_token_select``."""
    PRIORITY = 30

    def detect(self, state_dict: Mapping[str, Any]) -> bool:
        return any('.adaptmlp.' in k or '.mlp_token_select.' in k for k in state_dict)

    def convert(self, state_dict: Mapping[str, Any], **options) -> StateDict:
        return convert_dyt(state_dict)
