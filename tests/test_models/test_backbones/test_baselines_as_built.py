"""The baselines are built as their methods: AdaptFormer (AdapterViT), full
fine-tuning (ViT) and ViTDet (the ViTDet recipe on any of ViT, AdapterViT, DyTViT)."""
import pytest
import torch
import torch.nn.functional as F

from helpers.dyt import dyt_param_names, rel_pos_names, trainable_names
from helpers.models import TINY_ARCH, images, tiny
from mmvitdyn.models import (AdapterViT, AdapterViTDet, DyTViT, DyTViTDet, TokenDispatcher, ViT,
                             ViTDet)

LAYERS = TINY_ARCH['num_layers']
GRID = (4, 4)  # a 32 x 32 image in 8 x 8 patches: four whole 2 x 2 windows
VITDET = dict(window_size=2, global_indices=(1, ), input_size=32)


def test_adaptformer_has_adapters_and_no_dispatch():
    model = tiny(AdapterViT, adapter_cfg=dict(bottleneck=4))
    assert not any(isinstance(m, TokenDispatcher) for m in model.modules())
    assert not any('dispatch' in name for name, _ in model.named_parameters())
    assert trainable_names(model) == dyt_param_names(LAYERS, dispatched=())
    assert not model.needs_objective() and model.rate_loss().item() == 0.0


@pytest.mark.parametrize('model_cls', [AdapterViT, AdapterViTDet])
@pytest.mark.parametrize('setting', [
    dict(dispatch='mlp'),
    dict(target_rate=0.5),
    dict(keep_layers=1),
    dict(dispatcher_cfg=dict(mode='topk')),
])
def test_dyt_settings_are_refused_naming_dyt(model_cls, setting):
    name, = setting
    with pytest.raises(TypeError, match=rf"has no token dispatch: \['{name}'\] are DyTViT's"):
        tiny(model_cls, **(VITDET if model_cls is AdapterViTDet else {}), **setting)


def test_full_fine_tuning_trains_every_parameter():
    model = tiny(ViT)
    assert all(p.requires_grad for p in model.parameters())
    assert not any(hasattr(b, 'adapter') or hasattr(b, 'dispatchers') for b in model.blocks)


def test_plain_vitdet_trains_every_parameter_and_adaptformer_its_parts():
    plain = tiny(ViTDet, **VITDET)
    assert all(p.requires_grad for p in plain.parameters())
    assert rel_pos_names(LAYERS) <= {n for n, _ in plain.named_parameters()}
    adapted = tiny(AdapterViTDet, **VITDET)
    expected = dyt_param_names(LAYERS, dispatched=()) | rel_pos_names(LAYERS)
    assert trainable_names(adapted) == expected
    assert trainable_names(tiny(AdapterViTDet, train_rel_pos=False, **VITDET)) == \
        dyt_param_names(LAYERS, dispatched=())


def reference_window_attention(attn, x, grid, window):
    """Plain-torch multi-head attention of (B, h * w, C) tokens within each
    ``window`` x ``window`` square of the ``grid`` (no relative positions)."""
    b, _, c = x.shape
    (h, w), heads = grid, attn.num_heads
    parts = x.view(b, h // window, window, w // window, window, c).permute(0, 1, 3, 2, 4, 5)
    parts = parts.reshape(-1, window * window, c)
    q, k, v = F.linear(parts, attn.qkv.weight, attn.qkv.bias).chunk(3, dim=-1)
    split = lambda t: t.unflatten(-1, (heads, -1)).transpose(1, 2)  # noqa: E731
    q, k, v = split(q), split(k), split(v)
    weights = (q @ k.transpose(-2, -1) / q.shape[-1]**0.5).softmax(-1)
    out = F.linear((weights @ v).transpose(1, 2).flatten(2), attn.proj.weight, attn.proj.bias)
    out = out.view(b, h // window, w // window, window, window, c).permute(0, 1, 3, 2, 4, 5)
    return out.reshape(b, h * w, c)


@pytest.mark.parametrize('model_cls', [ViTDet, AdapterViTDet, DyTViTDet])
def test_windowed_blocks_equal_a_window_partition_reference(model_cls):
    """Every class the recipe composes with gets the same windows: blocks 0 and 2
    attend within 2 x 2 windows, block 1 (global) over the whole 4 x 4 grid."""
    model = tiny(model_cls, use_rel_pos=False, **VITDET)
    x = torch.randn(2, GRID[0] * GRID[1], TINY_ARCH['embed_dims'])
    for block, window in zip(model.blocks, [2, GRID[0], 2]):
        with torch.no_grad():
            torch.testing.assert_close(
                block.attn(x, grid=GRID),
                reference_window_attention(block.attn, x, GRID, window),
                rtol=1e-5,
                atol=1e-5)


def test_vitdet_recipe_refuses_token_reduction():
    with pytest.raises(ValueError, match="AdapterViTDet's windows need the whole patch grid"):
        tiny(
            AdapterViTDet, token_reduction=dict(type='ToMe', r=2), out_type='avg_featmap', **VITDET)


def test_adaptformer_with_token_reduction_reduces():
    model = tiny(AdapterViT, token_reduction=dict(type='ToMe', r=2))
    model(images(2))
    assert model.last_reduction.token_counts == [15, 13, 11]


def test_dyt_with_a_gated_attention_refuses_token_reduction():
    with pytest.raises(ValueError, match="dispatch='attn' is not allowed with it"):
        tiny(DyTViT, dispatch='attn', token_reduction=dict(type='ToMe', r=2))
