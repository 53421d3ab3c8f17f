"""BEiT's pyramid (RescalePyramid) on its own and inside the backbone (ViT's ``pyramid``)."""
import math

import pytest
import timm
import torch
from mmseg.models.necks import Feature2Pyramid

from helpers.models import IMG_SIZE, PATCH_SIZE, TINY_ARCH, images, tiny
from mmvitdyn.models import DyTViT, RescalePyramid, ViT

# Four blocks, one per pyramid level (TINY_ARCH has three).
ARCH4 = dict(TINY_ARCH, num_layers=4)
C = TINY_ARCH['embed_dims']


def randomize(module, seed=0):
    """Every parameter (biases too) and BN statistic drawn at random, so misplaced tensors show."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, tensor in [*module.named_parameters(), *module.named_buffers()]:
            if 'running_var' in name:
                tensor.copy_(torch.rand(tensor.shape, generator=gen) + 0.5)
            elif tensor.is_floating_point():
                tensor.copy_(torch.randn(tensor.shape, generator=gen) * 0.3)
    return module


def up2(x, weight, bias):
    """2x2 stride-2 transposed convolution written out: out[o, 2i+k, 2j+l] =
    sum_c x[c, i, j] * weight[c, o, k, l] + bias[o]."""
    b, _, h, w = x.shape
    y = torch.einsum('bcij,cokl->boikjl', x, weight).reshape(b, -1, 2 * h, 2 * w)
    return y + bias[:, None, None]


def gelu(x):
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))


def reference_pyramid(maps, w):
    """The public DyT pyramid (no norm) in plain tensor ops, weights ``w`` by name."""
    b, c, h, width = maps[3].shape
    x4 = up2(gelu(up2(maps[0], w['0.0.weight'], w['0.0.bias'])), w['0.2.weight'], w['0.2.bias'])
    x2 = up2(maps[1], w['1.0.weight'], w['1.0.bias'])
    x05 = maps[3].reshape(b, c, h // 2, 2, width // 2, 2).amax(dim=(3, 5))
    return x4, x2, maps[2], x05


def test_levels_equal_a_reference_written_out():
    torch.manual_seed(0)
    pyramid = randomize(RescalePyramid(C))
    assert [type(m).__name__ for m in pyramid.resamplers[0]] == \
        ['ConvTranspose2d', 'GELU', 'ConvTranspose2d']  # no norm, as the public DyT code
    maps = [torch.randn(2, C, 4, 6) for _ in range(4)]  # stride-16 maps of a 64 x 96 image
    outs = pyramid(maps)
    assert [tuple(o.shape) for o in outs] == [(2, C, 16, 24), (2, C, 8, 12), (2, C, 4, 6),
                                              (2, C, 2, 3)]  # strides 4, 8, 16, 32
    expected = reference_pyramid(maps, {
        k[len('resamplers.'):]: v
        for k, v in pyramid.state_dict().items()
    })
    for out, ref in zip(outs, expected):
        torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)


def test_with_a_norm_it_equals_mmseg_feature2pyramid():
    """BEiT's original pyramid (BN after the first transposed convolution) is mmseg's
    Feature2Pyramid; with the same weights both give the same maps."""
    torch.manual_seed(0)
    ours = randomize(RescalePyramid(C, norm_cfg=dict(type='BN'))).eval()
    theirs = Feature2Pyramid(C, rescales=[4, 2, 1, 0.5], norm_cfg=dict(type='BN')).eval()
    renamed = {'resamplers.0.': 'upsample_4x.', 'resamplers.1.': 'upsample_2x.'}
    theirs.load_state_dict({
        renamed[k[:len('resamplers.0.')]] + k[len('resamplers.0.'):]: v
        for k, v in ours.state_dict().items()
    })
    maps = [torch.randn(2, C, 4, 4) for _ in range(4)]
    for out, ref in zip(ours(maps), theirs(maps)):
        torch.testing.assert_close(out, ref)


def test_backbone_pyramid_rescales_the_unnormalised_block_outputs():
    """ViT with ``pyramid`` = timm's block outputs (no final norm) through the reference
    pyramid, on identical random weights."""
    torch.manual_seed(0)
    ours = ViT(
        arch=ARCH4,
        img_size=IMG_SIZE,
        patch_size=PATCH_SIZE,
        out_indices=(0, 1, 2, 3),
        out_type='featmap',
        final_norm=False,
        pyramid=dict(type='RescalePyramid'))
    ours.init_weights()
    randomize(ours).eval()
    ref = timm.models.VisionTransformer(
        img_size=IMG_SIZE,
        patch_size=PATCH_SIZE,
        embed_dim=C,
        depth=4,
        num_heads=TINY_ARCH['num_heads'],
        mlp_ratio=TINY_ARCH['feedforward_channels'] / C,
        num_classes=0).eval()
    state = {k: v for k, v in ours.state_dict().items() if not k.startswith('pyramid.')}
    missing, unexpected = ref.load_state_dict(state, strict=False)
    assert not unexpected and set(missing) == {'norm.weight', 'norm.bias'}
    x = images(2)
    with torch.no_grad():
        outs = ours(x)
        blocks = ref.forward_intermediates(
            x, indices=[0, 1, 2, 3], norm=False, output_fmt='NCHW', intermediates_only=True)
    weights = {
        k[len('pyramid.resamplers.'):]: v
        for k, v in ours.state_dict().items() if k.startswith('pyramid.')
    }
    grid = IMG_SIZE // PATCH_SIZE
    assert [o.shape[-1] for o in outs] == [4 * grid, 2 * grid, grid, grid // 2]
    for out, expected in zip(outs, reference_pyramid(blocks, weights)):
        torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-5)


def test_gradients_reach_pyramid_and_dyt_parts_only():
    backbone = tiny(
        DyTViT,
        arch=ARCH4,
        out_indices=(0, 1, 2, 3),
        out_type='featmap',
        final_norm=False,
        pyramid=dict(type='RescalePyramid')).train()
    backbone.attach_objective('this test, which adds its own loss terms')
    with torch.no_grad():  # non-zero adapter outputs, so every adapter weight gets a gradient
        for block in backbone.dyt_blocks():
            block.adapter.up.weight.normal_(std=0.1)
    outs = backbone(images(2))
    (sum(o.square().mean() for o in outs) + backbone.rate_loss()).backward()
    grads = {n: p.grad for n, p in backbone.named_parameters()}
    trainable = {n for n, p in backbone.named_parameters() if p.requires_grad}
    pyramid = {n for n in grads if n.startswith('pyramid.')}
    assert len(pyramid) == 6  # 3 transposed convolutions
    dyt = {n for n in grads if '.adapter.' in n or '.dispatchers.' in n}
    assert trainable == pyramid | dyt
    for name in trainable:
        assert grads[name] is not None and grads[name].abs().sum() > 0, name
    assert all(grads[n] is None for n in grads if n not in trainable)  # frozen ViT weights


def test_bad_arguments():
    with pytest.raises(ValueError, match='scale factor 3 is not a power of two'):
        RescalePyramid(C, rescales=(4, 3))
    with pytest.raises(ValueError, match=r'got 3 maps for its 4 rescales \(4, 2, 1, 0.5\)'):
        RescalePyramid(C)([torch.zeros(1, C, 2, 2)] * 3)
    with pytest.raises(ValueError, match="needs out_type='featmap', got out_type='cls_token'"):
        tiny(pyramid=dict(type='RescalePyramid'))
