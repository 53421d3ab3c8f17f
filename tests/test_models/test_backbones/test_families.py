"""DyT on the ViT families in use today: DINOv2, CLIP, MAE and DeiT.

Each family's backbone (dispatch off, and AdaptFormer with its zero-initialised
adapters) equals timm's model on the same random weights, loaded through our
converters; DyT's four dispatch variants run their packed path = masked path
with the extra tokens (class, distillation, registers) never dispatched; the
family configs change only what the family needs and load timm's weights.
"""
import copy
import re

import pytest
import timm
import torch
from mmengine.model.weight_init import trunc_normal_
from mmengine.registry import init_default_scope
from mmengine.structures import PixelData
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample
from mmseg.registry import MODELS as SEG_MODELS
from mmseg.structures import SegDataSample
from timm.models.vision_transformer import checkpoint_filter_fn
from torch import nn

from helpers.configs import dyt_config
from helpers.models import TINY_ARCH, images
from helpers.tools import load_tool
from mmvitdyn.analysis import DyTFlopCounter, calibrate_gates
from mmvitdyn.checkpoint import convert_checkpoint, detect_format, load_pretrained
from mmvitdyn.models import DyTViT, DyTViTDet, ViT

C, DEPTH, HEADS, HIDDEN = (
    TINY_ARCH[k] for k in ('embed_dims', 'num_layers', 'num_heads', 'feedforward_channels'))
TINY_TIMM = dict(embed_dim=C, depth=DEPTH, num_heads=HEADS, mlp_ratio=HIDDEN / C)
CLIP = dict(pre_norm=True, norm_cfg=dict(type='LN', eps=1e-5))
# name: (timm model, our ViT's options, extra tokens); grids of 4 x 4 patches.
FAMILIES = {
    'dinov2': ('vit_small_patch14_dinov2', dict(patch_size=14, layer_scale_init_value=1e-5), 1),
    'dinov2-reg4': ('vit_small_patch14_reg4_dinov2',
                    dict(patch_size=14, layer_scale_init_value=1e-5, num_reg_tokens=4), 5),
    'clip-b16': ('vit_base_patch16_clip_224', dict(patch_size=16, **CLIP), 1),
    'clip-b16-quickgelu': ('vit_base_patch16_clip_quickgelu_224',
                           dict(patch_size=16, act_cfg=dict(type='QuickGELU'), **CLIP), 1),
    'clip-l14': ('vit_large_patch14_clip_224', dict(patch_size=14, **CLIP), 1),
    'mae': ('vit_base_patch16_224.mae', dict(patch_size=16), 1),
    'deit': ('deit_base_patch16_224', dict(patch_size=16), 1),
    'deit-distilled': ('deit_base_distilled_patch16_224', dict(patch_size=16, dist_token=True), 2),
}
VARIANTS = ['mlp', 'attn', 'attn_mlp', 'layer']


def timm_model(name: str, img_size: int, seed: int = 0, **kwargs) -> nn.Module:
    """timm's ``name`` at the tiny shape, every weight drawn at random (layer
    scales and norms included, so each one matters), in eval mode."""
    torch.manual_seed(seed)
    model = timm.create_model(
        name, pretrained=False, img_size=img_size, num_classes=5, **TINY_TIMM, **kwargs)
    with torch.no_grad():
        for param in model.parameters():
            param.copy_(torch.randn_like(param) * 0.3)
    return model.eval()


def family(name: str, model_cls=ViT, **kwargs):
    """(timm model, our model of ``model_cls`` with the converted weights, extra tokens)."""
    timm_name, options, extra = FAMILIES[name]
    img_size = 4 * options['patch_size']
    reference = timm_model(timm_name, img_size)
    torch.manual_seed(1)
    ours = model_cls(arch=dict(TINY_ARCH), img_size=img_size, out_type='raw', **options, **kwargs)
    ours.init_weights()
    state, fmt = convert_checkpoint(reference.state_dict())
    assert fmt == 'timm'
    missing, unexpected = ours.load_state_dict(state, strict=False)
    assert all('adapter' in k or 'dispatchers' in k for k in missing), missing
    assert all(k.startswith('head') for k in unexpected), unexpected
    return reference, ours.eval(), extra


def assert_features_equal(ours, reference, x):
    with torch.no_grad():
        expected = reference.forward_features(x)
        got = ours(x)[0]
    assert got.shape == expected.shape
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-5)


@pytest.mark.parametrize('name', list(FAMILIES))
def test_backbone_equals_timm_on_the_same_weights(name):
    reference, ours, extra = family(name)
    assert ours.num_prefix_tokens == extra
    assert_features_equal(ours, reference, images(2, 4 * ours.patch_size))


@pytest.mark.parametrize('name', ['dinov2', 'dinov2-reg4', 'clip-l14', 'deit-distilled'])
def test_adaptformer_with_zero_adapters_equals_timm(name):
    reference, ours, _ = family(name, DyTViT, dispatch=None, adapter_cfg=dict(bottleneck=8))
    assert all(not b.adapter.up.weight.any() for b in ours.dyt_blocks())
    assert_features_equal(ours, reference, images(2, 4 * ours.patch_size))


@pytest.mark.parametrize('name', ['dinov2', 'dinov2-reg4'])
def test_dinov2_position_embedding_follows_any_input_as_timm(name):
    """timm's dynamic_img_size resamples bicubic with anti-aliasing: 5 x 6 and 3 x 3 grids."""
    timm_name, options, _ = FAMILIES[name]
    reference = timm_model(timm_name, 56, dynamic_img_size=True)
    ours = ViT(
        arch=dict(TINY_ARCH), img_size=56, out_type='raw', interpolate_antialias=True, **options)
    ours.load_state_dict(convert_checkpoint(reference.state_dict())[0], strict=False)
    for size in ((70, 84), (42, 42)):
        assert_features_equal(ours.eval(), reference, images(2, size))
    # Without anti-aliasing the bicubic kernel differs: the option is what makes them equal.
    ours.interpolate_antialias = False
    with torch.no_grad():
        gap = (ours(images(1, (70, 84)))[0] - reference.forward_features(images(1, (70, 84))))
    assert float(gap.abs().max()) > 1e-3


@pytest.mark.parametrize('name', ['dinov2', 'dinov2-reg4'])
def test_loading_a_checkpoint_of_another_grid_resizes_as_timm(name):
    """DINOv2's checkpoints are for 518 (37 x 37): loading one for another input
    resamples the position embedding as timm's checkpoint filter does (4 x 4 -> 3 x 3)."""
    timm_name, options, _ = FAMILIES[name]
    source = timm_model(timm_name, 56)
    target = timm_model(timm_name, 42)
    target.load_state_dict(checkpoint_filter_fn(source.state_dict(), target))
    ours = ViT(
        arch=dict(TINY_ARCH), img_size=42, out_type='raw', interpolate_antialias=True, **options)
    ours.load_state_dict(convert_checkpoint(source.state_dict())[0], strict=False)
    assert_features_equal(ours.eval(), target, images(2, 42))


@pytest.mark.parametrize('options, message', [
    (dict(num_reg_tokens=-1), 'num_reg_tokens=-1 must be an int >= 0'),
    (dict(num_reg_tokens=2.0), 'num_reg_tokens=2.0 must be an int >= 0'),
])
def test_bad_token_options_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        ViT(arch=dict(TINY_ARCH), **options)


def test_a_backbone_without_class_token_refuses_extra_tokens():
    with pytest.raises(ValueError, match='DyTViTDet has no class token: dist_token=True'):
        DyTViTDet(arch=dict(TINY_ARCH), global_indices=(2, ), dist_token=True)


def test_distilled_deit_outputs_both_tokens_and_the_averaged_head_matches_timm():
    reference, ours, _ = family('deit-distilled')
    ours.out_type = 'cls_token'
    x = images(2, 64)
    with torch.no_grad():
        cls_token, dist_token = ours(x)[0]
        logits = reference(x)  # eval: the mean of the class and distillation heads
    features = reference.forward_features(x)
    torch.testing.assert_close(cls_token, features[:, 0], rtol=0, atol=1e-5)
    torch.testing.assert_close(dist_token, features[:, 1], rtol=0, atol=1e-5)
    from mmpretrain.models.heads import DeiTClsHead
    head = DeiTClsHead(num_classes=5, in_channels=C).eval()
    head.layers.head.load_state_dict(reference.head.state_dict())
    head.layers.head_dist.load_state_dict(reference.head_dist.state_dict())
    with torch.no_grad():
        torch.testing.assert_close(head(((cls_token, dist_token), )), logits, rtol=0, atol=1e-5)


def test_distilled_checkpoint_needs_dist_token_or_drop(tmp_path):
    reference = timm_model('deit_base_distilled_patch16_224', 64)
    torch.save(reference.state_dict(), tmp_path / 'deit.pth')
    plain = ViT(arch=dict(TINY_ARCH), img_size=64, patch_size=16)
    with pytest.raises(ValueError, match='dist_token=True.*drop_dist_token=True'):
        load_pretrained(plain, str(tmp_path / 'deit.pth'))
    distilled = ViT(arch=dict(TINY_ARCH), img_size=64, patch_size=16, dist_token=True)
    report = load_pretrained(distilled, str(tmp_path / 'deit.pth'))
    assert not report.missing and sorted(
        report.unexpected) == ['head.bias', 'head.weight', 'head_dist.bias', 'head_dist.weight']


@pytest.mark.parametrize('name,options', [
    ('dinov2-reg4', ['layer_scale_init_value=<float>', 'num_reg_tokens=<registers>']),
    ('clip-b16', ['pre_norm=True']),
])
def test_a_family_checkpoint_into_a_plain_vit_is_refused_naming_the_options(
        tmp_path, name, options):
    timm_name, family_options, _ = FAMILIES[name]
    img_size = 4 * family_options['patch_size']
    torch.save(timm_model(timm_name, img_size).state_dict(), tmp_path / 'family.pth')
    plain = ViT(arch=dict(TINY_ARCH), img_size=img_size, patch_size=family_options['patch_size'])
    with pytest.raises(ValueError, match=re.escape(str(options))):
        load_pretrained(plain, str(tmp_path / 'family.pth'))


def to_dinov2_original(state: dict) -> dict:
    """timm's DINOv2-with-registers keys -> facebookresearch/dinov2's layout:
    the class token's position row back in ``pos_embed``, ``register_tokens``,
    a ``mask_token``, and blocks in chunks of 2 (``blocks.{chunk}.{i}``)."""
    out = {}
    for key, value in state.items():
        match = re.match(r'^blocks\.(\d+)\.(.*)$', key)
        if match:
            out[f'blocks.{int(match.group(1)) // 2}.{match.group(1)}.{match.group(2)}'] = value
        elif key == 'reg_token':
            out['register_tokens'] = value
        elif key == 'pos_embed':
            out['pos_embed'] = torch.cat([torch.randn(1, 1, C), value], dim=1)
        elif not key.startswith('head'):
            out[key] = value
    # timm folds the class token's position into the token; the original adds it.
    out['cls_token'] = state['cls_token'] - out['pos_embed'][:, :1]
    out['mask_token'] = torch.zeros(1, C)
    return out


def test_dinov2_original_layout_converts():
    reference, _, _ = family('dinov2-reg4')
    original = to_dinov2_original(reference.state_dict())
    state, fmt = convert_checkpoint(original)
    assert fmt == 'dinov2' and 'mask_token' not in state
    ours = ViT(arch=dict(TINY_ARCH), img_size=56, out_type='raw', **FAMILIES['dinov2-reg4'][1])
    assert ours.load_state_dict(state, strict=True)
    assert_features_equal(ours.eval(), reference, images(2, 56))


def test_converter_tool_writes_the_original_dinov2_as_mmvitdyn(tmp_path):
    reference, _, _ = family('dinov2-reg4')
    torch.save(to_dinov2_original(reference.state_dict()), tmp_path / 'dinov2.pth')
    tool = load_tool('model_converters/timm2mmvitdyn.py')
    text = tool.main([str(tmp_path / 'dinov2.pth'), str(tmp_path / 'out.pth')])
    assert 'dinov2 -> mmvitdyn' in text and 'patch_size=14' in text and 'grid=4x4' in text
    ours = ViT(arch=dict(TINY_ARCH), img_size=56, out_type='raw', **FAMILIES['dinov2-reg4'][1])
    report = load_pretrained(ours, str(tmp_path / 'out.pth'))
    # A plain ViT's mmvitdyn keys are timm's: nothing is left to convert.
    assert report.format == 'timm' and not report.missing and not report.unexpected
    assert_features_equal(ours.eval(), reference, images(2, 56))


def test_dinov2_giant_swiglu_is_refused():
    with pytest.raises(ValueError, match=r"'blocks.0.mlp.w12.weight'.*SwiGLU"):
        convert_checkpoint({'mask_token': torch.zeros(1, C), 'blocks.0.mlp.w12.weight': 0})


def to_openai_clip(state: dict) -> dict:
    """timm's CLIP image tower -> OpenAI's ``visual.*`` layout (plus a text-tower key)."""
    renames = [('patch_embed.proj', 'conv1'), ('norm_pre', 'ln_pre'),
               ('blocks.', 'transformer.resblocks.'), ('norm1', 'ln_1'), ('norm2', 'ln_2'),
               ('attn.qkv.weight', 'attn.in_proj_weight'), ('attn.qkv.bias', 'attn.in_proj_bias'),
               ('attn.proj', 'attn.out_proj'), ('mlp.fc1', 'mlp.c_fc'), ('mlp.fc2', 'mlp.c_proj')]
    out = {'positional_embedding': torch.zeros(7, C), 'visual.proj': torch.randn(C, 12)}
    for key, value in state.items():
        if key == 'cls_token':
            out['visual.class_embedding'] = value.flatten()
        elif key == 'pos_embed':
            out['visual.positional_embedding'] = value[0]
        elif key == 'norm.weight' or key == 'norm.bias':
            out['visual.ln_post.' + key.split('.')[1]] = value
        elif not key.startswith('head'):
            for old, new in renames:
                key = key.replace(old, new)
            out['visual.' + key] = value
    return out


def test_openai_clip_layout_converts():
    reference, _, _ = family('clip-b16-quickgelu')
    original = to_openai_clip(reference.state_dict())
    assert detect_format(original) == 'openai_clip'
    state, _ = convert_checkpoint(original)
    torch.testing.assert_close(state.pop('head.weight'), original['visual.proj'].T)
    ours = ViT(
        arch=dict(TINY_ARCH), img_size=64, out_type='raw', **FAMILIES['clip-b16-quickgelu'][1])
    assert ours.load_state_dict(state, strict=True)
    assert_features_equal(ours.eval(), reference, images(2, 64))


def dyt(name: str, dispatch: str) -> DyTViT:
    """The family's DyT model with nonzero adapters and gates set to about half
    the patch tokens (rates differ per token and image)."""
    _, model, _ = family(name, DyTViT, dispatch=dispatch, adapter_cfg=dict(bottleneck=8))
    torch.manual_seed(2)
    for block in model.dyt_blocks():
        for dispatcher in block.dispatchers.values():
            trunc_normal_(dispatcher.gate.weight, std=0.3)
        trunc_normal_(block.adapter.up.weight, std=0.1)
    calibrate_gates(model, images(4, 4 * model.patch_size, seed=5), 0.5)
    return model


@pytest.mark.parametrize('dispatch', VARIANTS)
@pytest.mark.parametrize('name', ['dinov2-reg4', 'clip-l14', 'deit-distilled'])
def test_dyt_packed_path_equals_masked_path_and_keeps_extra_tokens(name, dispatch):
    model = dyt(name, dispatch)
    extra, x = model.num_prefix_tokens, images(3, 4 * model.patch_size)
    with torch.no_grad():
        packed = model(x)[0]
        masks = [dict(block.masks) for block in model.dyt_blocks()]
        model.set_packed(False)
        masked = model(x)[0]
    torch.testing.assert_close(packed, masked, rtol=0, atol=1e-5)
    for block_masks in masks:
        for mask in block_masks.values():
            assert mask.shape == (3, extra + 16)
            assert bool((mask[:, :extra] == 1).all())
            assert 0 < float(mask[:, extra:].mean()) < 1  # some patch tokens skip, some run
    # Even gates that switch every token off leave the extra tokens running.
    for block in model.dyt_blocks():
        for dispatcher in block.dispatchers.values():
            nn.init.constant_(dispatcher.gate.bias, -1e4)
    with torch.no_grad():
        model(x)
    for block in model.dyt_blocks():
        for mask in block.masks.values():
            assert bool((mask[:, :extra] == 1).all()) and float(mask[:, extra:].sum()) == 0


def layer_norm_flops(tokens: int) -> int:
    """mmengine counts a LayerNorm as 5 FLOPs per element (affine)."""
    return 5 * tokens * C


@pytest.mark.parametrize('dispatch', ['mlp', 'attn'])
def test_flops_of_a_dinov2_dyt_model_follow_a_formula(dispatch):
    """Patch 14, 1 class + 4 register tokens: per image, from the active tokens."""
    model = dyt('dinov2-reg4', dispatch)
    x = images(3, 56)
    counter = DyTFlopCounter(model, x[:1])
    with torch.no_grad():
        model(x)
    flops = counter.from_last_forward()
    patches, extra, bottleneck = 16, 5, 8
    tokens = patches + extra
    expected = torch.full((3, ), float(patches * C * 3 * 14 * 14 + layer_norm_flops(tokens)))
    for block in model.dyt_blocks():
        active = block.masks[dispatch].sum(1).double()  # extra tokens included
        mlp_tokens = active if dispatch == 'mlp' else tokens
        attn_tokens = active if dispatch == 'attn' else tokens
        expected += (
            layer_norm_flops(tokens) + tokens * C  # norm1 and the gate, on every token
            + attn_tokens * 4 * C * C + 2 * attn_tokens**2 * C  # q/k/v, proj; two matmuls
            + mlp_tokens * 2 * C * HIDDEN + 5 * mlp_tokens * C  # the MLP and norm2
            + tokens * 2 * C * bottleneck)  # the adapter on every token
    assert flops.tolist() == expected.tolist()
    assert len(set(flops.tolist())) == 3  # each image its own count


CIFAR_BASE = 'vit-b-p16-dyt_d64_8xb128-100e_cifar100-224px.py'
ADE_BASE = 'upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py'
IMAGENET_STATS = ([123.675, 116.28, 103.53], [58.395, 57.12, 57.375])
CLIP_STATS = ([122.770938, 116.7460125, 104.09373615], [68.5005327, 66.6321579, 70.32316305])
# family -> (CIFAR-100 config, UperNet ADE20K config, mean/std, backbone options beyond
# FAMILIES' that the configs set)
CONFIGS = {
    'dinov2': ('vit-b-p14-dinov2-dyt_d64_8xb128-100e_cifar100-224px.py',
               'upernet_vit-b-p14-dinov2-dyt_d64_8xb2-160k_ade20k-512x512.py', IMAGENET_STATS,
               dict(interpolate_antialias=True)),
    'clip-b16-quickgelu':
    ('vit-b-p16-clip-dyt_d64_8xb128-100e_cifar100-224px.py',
     'upernet_vit-b-p16-clip-dyt_d64_8xb2-160k_ade20k-512x512.py', CLIP_STATS, {}),
    'mae': ('vit-b-p16-mae-dyt_d64_8xb128-100e_cifar100-224px.py',
            'upernet_vit-b-p16-mae-dyt_d64_8xb2-160k_ade20k-512x512.py', IMAGENET_STATS, {}),
    'deit-distilled':
    ('vit-b-p16-deit-distilled-dyt_d64_8xb128-100e_cifar100-224px.py',
     'upernet_vit-b-p16-deit-distilled-dyt_d64_8xb2-160k_ade20k-512x512.py', IMAGENET_STATS, {}),
}


@pytest.mark.parametrize('name', list(CONFIGS))
def test_family_configs_change_only_what_the_family_needs(name):
    cifar, ade, (mean, std), more = CONFIGS[name]
    options = {**FAMILIES[name][1], **more}
    for config, base in ((cifar, CIFAR_BASE), (ade, ADE_BASE)):
        cfg, base = dyt_config(config), dyt_config(base)
        backbone, base_backbone = cfg.model.backbone, base.model.backbone
        changed = {k for k in backbone if backbone[k] != base_backbone.get(k)}
        assert changed == {k for k in options if options[k] != base_backbone.get(k)} | {'init_cfg'}
        assert all(backbone[k] == v for k, v in options.items())
        assert backbone.init_cfg.checkpoint != base_backbone.init_cfg.checkpoint
        assert cfg.model.data_preprocessor.mean == mean and cfg.model.data_preprocessor.std == std
    head = dyt_config(cifar).model.head
    assert head.type == ('DeiTClsHead' if name == 'deit-distilled' else 'LinearClsHead')
    assert head.num_classes == 100


@pytest.mark.parametrize('name', list(CONFIGS))
def test_family_configs_load_timm_weights_and_train(name, tmp_path):
    """Through init_cfg, the configs' backbones hold timm's weights: in complete
    mode (every token, zero adapters) the class token is timm's (and the maps of
    the segmentation backbone its patch tokens); the classifier's losses are finite."""
    timm_name, options, extra = FAMILIES[name]
    size = 4 * options['patch_size']
    reference = timm_model(timm_name, size)
    torch.save(reference.state_dict(), tmp_path / 'timm.pth')
    tiny_options = dict(arch=dict(TINY_ARCH), img_size=size)
    x = images(2, size)
    with torch.no_grad():
        expected = reference.forward_features(x)

    cfg = copy.deepcopy(dyt_config(CONFIGS[name][0]))
    cfg.model.backbone.update(tiny_options)
    cfg.model.backbone.init_cfg.checkpoint = str(tmp_path / 'timm.pth')
    cfg.model.head.in_channels = C
    init_default_scope('mmpretrain')
    classifier = MODELS.build(cfg.model)
    classifier.init_weights()
    with classifier.backbone.complete_mode(), torch.no_grad():
        tokens = classifier.eval().extract_feat(x)[-1]
    tokens = tokens if isinstance(tokens, tuple) else (tokens, )
    for i, token in enumerate(tokens):
        torch.testing.assert_close(token, expected[:, i], rtol=0, atol=1e-5)
    assert len(tokens) == (2 if name == 'deit-distilled' else 1)
    losses = classifier.train().loss(x, [DataSample().set_gt_label(i) for i in range(2)])
    assert losses and all(torch.isfinite(v) for v in losses.values())

    cfg = copy.deepcopy(dyt_config(CONFIGS[name][1]))
    cfg.model.backbone.update(tiny_options, out_indices=(DEPTH - 1, ))
    cfg.model.backbone.init_cfg.checkpoint = str(tmp_path / 'timm.pth')
    backbone = MODELS.build(cfg.model.backbone)
    backbone.init_weights()
    with backbone.complete_mode(), torch.no_grad():
        maps = backbone.eval()(x)[0]
    patches = expected[:, extra:].transpose(1, 2).reshape(2, C, 4, 4)
    torch.testing.assert_close(maps, patches, rtol=0, atol=1e-5)


def test_dinov2_segmentation_pads_crops_to_multiples_of_14():
    cfg = dyt_config(CONFIGS['dinov2'][1])
    init_default_scope('mmseg')
    preprocessor = SEG_MODELS.build(copy.deepcopy(cfg.model.data_preprocessor))

    def batch(h, w):
        sample = SegDataSample(gt_sem_seg=PixelData(data=torch.zeros(1, h, w, dtype=torch.long)))
        sample.set_metainfo(dict(img_shape=(h, w), ori_shape=(h, w)))
        return dict(inputs=[torch.zeros(3, h, w, dtype=torch.uint8)], data_samples=[sample])

    train = preprocessor(batch(512, 512), training=True)
    assert train['inputs'].shape[-2:] == (518, 518)
    assert int((train['data_samples'][0].gt_sem_seg.data == 255).sum()) == 518**2 - 512**2
    assert preprocessor(batch(512, 683), training=False)['inputs'].shape[-2:] == (518, 686)
    assert tuple(cfg.model.test_cfg.crop_size) == (518, 518)
