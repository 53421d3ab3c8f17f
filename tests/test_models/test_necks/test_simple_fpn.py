import pytest
import torch

from mmvitdyn.models import LayerNorm2d, SimpleFPN


def test_pyramid_strides_and_channels():
    neck = SimpleFPN(in_channels=32, out_channels=16).eval()
    x = torch.randn(2, 32, 8, 12)  # a stride-16 map of a 128 x 192 image
    outs = neck((x, ))
    assert [tuple(o.shape) for o in outs] == [(2, 16, 32, 48), (2, 16, 16, 24), (2, 16, 8, 12),
                                              (2, 16, 4, 6), (2, 16, 2, 3)]
    # 4x: two transposed convolutions (32 -> 16 -> 8 channels) with norm + GELU between.
    up4 = neck.resamplers[0]
    assert [type(m).__name__
            for m in up4] == ['ConvTranspose2d', 'LayerNorm2d', 'GELU', 'ConvTranspose2d']
    assert [conv.conv.in_channels for conv in neck.lateral_convs] == [8, 16, 32, 32]
    # The extra level max-pools the last one (ViTDet's P6).
    torch.testing.assert_close(outs[4], outs[3][..., ::2, ::2])


def test_layer_norm_2d_normalises_channels():
    norm = LayerNorm2d(6, eps=1e-6)
    torch.nn.init.normal_(norm.weight)
    x = torch.randn(2, 6, 3, 4)
    expected = torch.nn.functional.layer_norm(
        x.permute(0, 2, 3, 1), (6, ), norm.weight, norm.bias, 1e-6).permute(0, 3, 1, 2)
    torch.testing.assert_close(norm(x), expected)
    centred = LayerNorm2d(6)(x)
    torch.testing.assert_close(centred.mean(1), torch.zeros(2, 3, 4), atol=1e-5, rtol=0)


def test_ln2d_builds_in_mmdet_and_mmseg_scopes():
    from mmcv.cnn import build_norm_layer
    from mmengine.registry import DefaultScope
    for scope in ('mmdet', 'mmseg'):
        with DefaultScope.overwrite_default_scope(scope):
            assert isinstance(build_norm_layer(dict(type='LN2d'), 4)[1], LayerNorm2d)


def test_bad_arguments():
    with pytest.raises(ValueError, match='not a power of two'):
        SimpleFPN(8, 8, scale_factors=(3, 1))
    with pytest.raises(ValueError, match='num_outs=2'):
        SimpleFPN(8, 8, num_outs=2)
