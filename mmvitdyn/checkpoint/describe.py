"""The architecture read off an mmvitdyn-format state dict."""
import re
from collections import Counter
from typing import Any, Dict, Mapping, Optional

import torch

from .vit_names import LEARNABLE_SCALE, PREDICTORS_PREFIX

PREDICTORS_EMBED = re.compile('^' + re.escape(PREDICTORS_PREFIX) + r'\d+\.embed\.weight$')


def describe_checkpoint(state_dict: Mapping[str, torch.Tensor],
                        num_heads: Optional[int] = None) -> Dict[str, Any]:
    """Architecture of a converted state dict: sizes, ``grid`` (None unless square
    plus a class token), the DyT parts and switches (``keep_layers``,
    ``adapter_scale``, ``adapter_layer_norm``) and ``num_predictors``.
    ``num_heads`` (a fused qkv does not show it) is passed through."""
    patch = state_dict['patch_embed.proj.weight']
    layers = sorted(
        {int(m.group(1))
         for k in state_dict
         for m in [re.match(r'^blocks\.(\d+)\.', k)] if m})
    grid = None
    if 'pos_embed' in state_dict:
        tokens = state_dict['pos_embed'].shape[1] - 1 - ('dist_token' in state_dict)
        side = int(round(tokens**0.5))
        grid = (side, side) if side * side == tokens else None
    fc1 = state_dict.get('blocks.0.mlp.fc1.weight')
    down = state_dict.get('blocks.0.adapter.down.weight')
    gates = [
        m for k in state_dict
        for m in [re.match(r'^blocks\.(\d+)\.dispatchers\.(\w+)\.gate\.weight$', k)] if m
    ]
    parts = Counter(m.group(2) for m in gates)
    return dict(
        num_tensors=len(state_dict),
        embed_dims=patch.shape[0],
        num_layers=len(layers),
        num_heads=num_heads,
        feedforward_channels=None if fc1 is None else fc1.shape[0],
        patch_size=patch.shape[-1],
        in_channels=patch.shape[1],
        grid=grid,
        adapter_bottleneck=None if down is None else down.shape[0],
        dispatch_parts=dict(parts),
        keep_layers=min((int(m.group(1)) for m in gates), default=None),
        adapter_scale=LEARNABLE_SCALE if 'blocks.0.adapter.scale' in state_dict else None,
        adapter_layer_norm='blocks.0.adapter.norm.weight' in state_dict,
        num_predictors=sum(bool(PREDICTORS_EMBED.match(k)) for k in state_dict),
    )
