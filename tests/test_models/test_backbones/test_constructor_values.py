"""Every constructor argument of the ViT family is checked where it is taken:
a bad value is refused at build time naming the field, never a silent NaN or
a bare ZeroDivisionError / reshape error later."""
import math

import pytest
import torch

from mmvitdyn.models import DynamicViT, DyTViTDet, EViT, SimpleFPN, ToMe, ViT

TINY = dict(embed_dims=32, num_layers=2, num_heads=2, feedforward_channels=64)


def build_vit(**kwargs):
    return ViT(**{**dict(arch=dict(TINY), img_size=32, patch_size=8), **kwargs})


@pytest.mark.parametrize('kwargs, field', [
    (dict(layer_scale_init_value=math.nan), 'layer_scale_init_value=nan'),
    (dict(norm_cfg=dict(type='LN', eps=-1)), 'norm_cfg.eps=-1'),
    (dict(norm_cfg=dict(type='LN', eps=math.nan)), 'norm_cfg.eps=nan'),
    (dict(drop_path_rate=math.nan), 'drop_path_rate=nan'),
    (dict(drop_path_rate=-0.5), 'drop_path_rate=-0.5'),
    (dict(drop_rate=math.nan), 'drop_rate=nan'),
    (dict(num_reg_tokens=True), 'num_reg_tokens=True'),
    (dict(patch_size=0), 'patch_size=0'),
    (dict(img_size=4), 'img_size=4 must be an int >= 8'),
    (dict(arch=dict(TINY, num_heads=0)), 'arch.num_heads=0'),
    (dict(arch=dict(TINY, num_heads=True)), 'arch.num_heads=True'),
    (dict(arch=dict(TINY, embed_dims=32.0)), 'arch.embed_dims=32.0'),
    (dict(arch=dict(TINY, num_layers=-1)), 'arch.num_layers=-1'),
    (dict(qkv_bias='no'), "qkv_bias='no'"),
    (dict(final_norm=1), 'final_norm=1'),
    (dict(interpolate_mode='cubic'), "interpolate_mode='cubic'"),
])
def test_a_bad_vit_argument_is_refused_naming_it(kwargs, field):
    with pytest.raises(ValueError) as err:
        build_vit(**kwargs)
    assert field in str(err.value)


@pytest.mark.parametrize('reduction, kwargs, field', [
    (ToMe, dict(r=2, prop_attn='no'), "ToMe prop_attn='no'"),
    (EViT, dict(keep_rate=0.5, locations=(1, ), fuse='no'), "EViT fuse='no'"),
    (EViT, dict(keep_rate=0.5, locations=(True, )), 'EViT locations[0]=True'),
])
def test_a_bad_token_reduction_argument_is_refused_naming_it(reduction, kwargs, field):
    with pytest.raises(ValueError) as err:
        reduction(**kwargs)
    assert field in str(err.value)


def test_a_bad_dynamicvit_location_is_refused_naming_it():
    with pytest.raises(ValueError, match=r'prune_loc\[0\]=True'):
        DynamicViT(arch=dict(TINY, num_layers=4), prune_loc=(True, 2), img_size=32, patch_size=8)


def test_good_values_still_build_and_run():
    vit = build_vit(
        layer_scale_init_value=0.1,
        drop_path_rate=0.1,
        num_reg_tokens=2,
        norm_cfg=dict(type='LN', eps=1e-5))
    out = vit(torch.randn(2, 3, 32, 32))
    assert torch.isfinite(out[-1]).all()


@pytest.mark.parametrize('kwargs, field', [
    (dict(window_size=-1), 'window_size (0: every block global)=-1'),
    (dict(window_size=2.5), 'window_size (0: every block global)=2.5'),
    (dict(global_indices=(True, )), 'global_indices[0]=True'),
    (dict(use_rel_pos='yes'), "use_rel_pos='yes'"),
    (dict(input_size=4), 'input_size=4 must be an int >= 8'),
    (dict(global_indices=('1', )), "global_indices[0]='1'"),
    (dict(patch_size='8'), "patch_size='8'"),
])
def test_a_bad_vitdet_argument_is_refused_naming_it(kwargs, field):
    with pytest.raises(ValueError) as err:
        DyTViTDet(
            **{
                **dict(
                    arch=dict(TINY),
                    img_size=32,
                    patch_size=8,
                    input_size=32,
                    window_size=2,
                    global_indices=(1, )),
                **kwargs
            })
    assert field in str(err.value)


@pytest.mark.parametrize('kwargs, field', [
    (dict(out_channels=0), 'out_channels=0'),
    (dict(num_outs=True), 'num_outs=True'),
    (dict(scale_factors=(math.nan, )), 'scale factor=nan'),
    (dict(norm_cfg=dict(type='LN2d', eps=-1.0)), 'norm_cfg.eps=-1.0'),
])
def test_a_bad_simple_fpn_argument_is_refused_naming_it(kwargs, field):
    with pytest.raises(ValueError) as err:
        SimpleFPN(**{**dict(in_channels=32, out_channels=16), **kwargs})
    assert field in str(err.value)
