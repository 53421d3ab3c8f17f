"""Every constructor argument of the ViT family is checked where it is taken:
a bad value is refused at build time naming the field, never a silent NaN or
a bare ZeroDivisionError / reshape error later."""
import math

import pytest
import torch

from mmvitdyn.models import DynamicViT, DyTViT, DyTViTDet, EViT, SimpleFPN, ToMe, ViT
from mmvitdyn.models.layers import Block, Mlp

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


# TINY has 2 blocks: the block indices are the ints in [-2, 2).
@pytest.mark.parametrize('out_indices, field', [
    ((True, ), 'out_indices[0]=True'),
    ((0, False), 'out_indices[1]=False'),
    (True, 'out_indices=True'),
    ((1.0, ), 'out_indices[0]=1.0'),
    (('1', ), "out_indices[0]='1'"),
    (None, 'out_indices=None'),
])
def test_an_out_indices_entry_that_is_not_an_int_is_refused_naming_the_allowed_indices(
        out_indices, field):
    with pytest.raises(ValueError) as err:
        build_vit(out_indices=out_indices)
    assert field in str(err.value)
    assert 'an int in [-2, 2)' in str(err.value)


def test_a_bool_out_indices_entry_is_refused_by_dynamicvit_too():
    with pytest.raises(ValueError, match=r'out_indices\[0\]=True must be an int in \[-4, 4\)'):
        DynamicViT(arch=dict(TINY, num_layers=4), out_indices=(True, ), img_size=32, patch_size=8)


@pytest.mark.parametrize('norm_cfg, field', [
    (dict(type='LN', elementwise_affine='no'), "norm_cfg.elementwise_affine='no'"),
    (dict(type='LN', elementwise_affine=1), 'norm_cfg.elementwise_affine=1'),
    (dict(type='LN', bias='no'), "norm_cfg.bias='no'"),
    (dict(type='LN', bias=None), 'norm_cfg.bias=None'),
    (dict(type='LN', requires_grad='no'), "norm_cfg.requires_grad='no'"),
])
def test_a_norm_flag_that_is_not_a_bool_is_refused_naming_it(norm_cfg, field):
    with pytest.raises(ValueError) as err:
        build_vit(norm_cfg=norm_cfg)
    assert f'{field} must be True or False' in str(err.value)


@pytest.mark.parametrize('act_cfg, message', [
    (dict(type='GELU',
          approximate='bogus'), "act_cfg.approximate='bogus' must be one of ('none', 'tanh')"),
    (dict(type=torch.nn.GELU,
          approximate='TANH'), "act_cfg.approximate='TANH' must be one of ('none', 'tanh')"),
    (dict(type='ReLU', inplace='no'), "act_cfg.inplace='no' must be True or False"),
    (None, 'act_cfg=None must be a dict with a type'),
    (dict(approximate='tanh'), "act_cfg={'approximate': 'tanh'} must be a dict with a type"),
])
def test_a_bad_act_cfg_is_refused_at_build_time_naming_the_field(act_cfg, message):
    with pytest.raises(ValueError) as err:
        build_vit(act_cfg=act_cfg)
    assert message in str(err.value)


@pytest.mark.parametrize('build', [
    lambda act_cfg: Mlp(8, 16, act_cfg=act_cfg),
    lambda act_cfg: Block(8, 2, 16, act_cfg=act_cfg),
    lambda act_cfg: build_vit(layer_cfgs=dict(act_cfg=act_cfg)),
    lambda act_cfg: DyTViT(arch=dict(TINY), img_size=32, patch_size=8, act_cfg=act_cfg),
])
def test_every_mlp_checks_its_act_cfg(build):
    with pytest.raises(
            ValueError, match=r"act_cfg\.approximate='bogus' must be one of "
            r"\('none', 'tanh'\)"):
        build(dict(type='GELU', approximate='bogus'))


@pytest.mark.parametrize('build, norm_cfg, field', [
    (lambda norm_cfg: build_vit(layer_cfgs=dict(norm_cfg=norm_cfg)),
     dict(type='LN', elementwise_affine='no'), "norm_cfg.elementwise_affine='no'"),
    (lambda norm_cfg: build_vit(pre_norm=True, final_norm=False, norm_cfg=norm_cfg),
     dict(type='LN', bias='no'), "norm_cfg.bias='no'"),
    (lambda norm_cfg: build_vit(
        out_type='featmap',
        out_indices=(0, 1),
        pyramid=dict(type='RescalePyramid', rescales=(4, 2), norm_cfg=norm_cfg)),
     dict(type='BN', affine='no'), "norm_cfg.affine='no'"),
    (lambda norm_cfg: SimpleFPN(in_channels=32, out_channels=16, norm_cfg=norm_cfg),
     dict(type='BN', track_running_stats='no'), "norm_cfg.track_running_stats='no'"),
])
def test_every_norm_built_checks_its_flags(build, norm_cfg, field):
    with pytest.raises(ValueError) as err:
        build(norm_cfg)
    assert f'{field} must be True or False' in str(err.value)


@pytest.mark.parametrize('kwargs', [
    dict(act_cfg=dict(type='GELU', approximate='tanh')),
    dict(act_cfg=dict(type='GELU', approximate='none')),
    dict(act_cfg=dict(type='ReLU', inplace=True)),
    dict(act_cfg=dict(type='QuickGELU')),
    dict(norm_cfg=dict(type='LN', eps=1e-6, elementwise_affine=False)),
    dict(norm_cfg=dict(type='LN', eps=1e-6, bias=False)),
    dict(out_indices=(0, -1)),
    dict(out_indices=1),
])
def test_good_norm_act_and_out_indices_values_still_build_and_run(kwargs):
    out = build_vit(**kwargs)(torch.randn(2, 3, 32, 32))
    assert all(torch.isfinite(o).all() for o in out)
