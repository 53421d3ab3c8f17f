import pytest
import torch

from helpers.models import tiny
from mmvitdyn.models import ViT, resize_pos_embed


@pytest.mark.parametrize('out_type,shape', [('raw', (2, 17, 32)), ('cls_token', (2, 32)),
                                            ('featmap', (2, 32, 4, 4)), ('avg_featmap', (2, 32))])
def test_out_types(out_type, shape):
    outs = tiny(out_type=out_type, out_indices=(0, -1))(torch.randn(2, 3, 32, 32))
    assert len(outs) == 2 and all(o.shape == shape for o in outs)


def test_outputs_are_consistent_views_of_the_same_tokens():
    x = torch.randn(2, 3, 32, 32)
    raw = tiny(out_type='raw')(x)[0]  # the same seed: the same weights
    featmap = tiny(out_type='featmap')(x)[0]
    cls = tiny(out_type='cls_token')(x)[0]
    torch.testing.assert_close(cls, raw[:, 0])
    torch.testing.assert_close(featmap.flatten(2).transpose(1, 2), raw[:, 1:])


def test_final_norm_only_on_last_block():
    model = tiny(out_type='raw', out_indices=(1, 2))
    mid, last = model(torch.randn(1, 3, 32, 32))
    # LayerNorm without affine change: per-token mean 0 and unit variance.
    assert last.mean(-1).abs().max() < 1e-5
    assert mid.mean(-1).abs().max() > 1e-3


def test_matches_manual_forward():
    """The block structure is pre-norm attention + MLP with residuals."""
    model = tiny(out_type='raw')
    img = torch.randn(2, 3, 32, 32)
    x = model.patch_embed.proj(img).flatten(2).transpose(1, 2)
    x = torch.cat([model.cls_token.expand(2, -1, -1), x], 1) + model.pos_embed
    for blk in model.blocks:
        h = blk.norm1(x)
        q, k, v = blk.attn.qkv(h).reshape(2, 17, 3, 4, 8).permute(2, 0, 3, 1, 4)
        attn = (q @ k.transpose(-2, -1) / 8**0.5).softmax(-1)
        x = x + blk.attn.proj((attn @ v).transpose(1, 2).reshape(2, 17, 32))
        x = x + blk.mlp.fc2(torch.nn.functional.gelu(blk.mlp.fc1(blk.norm2(x))))
    torch.testing.assert_close(model(img)[0], model.norm(x), atol=1e-5, rtol=1e-5)


def test_other_input_size_interpolates_pos_embed():
    model = tiny(out_type='featmap')
    assert model(torch.randn(1, 3, 48, 64))[0].shape == (1, 32, 6, 8)


def test_checkpoint_pos_embed_is_resized_on_load():
    src = tiny()
    dst = tiny(img_size=64, seed=1)
    dst.load_state_dict(src.state_dict())
    expected = resize_pos_embed(src.pos_embed.detach(), (4, 4), (8, 8))
    torch.testing.assert_close(dst.pos_embed.detach(), expected)
    # Same grid -> identity.
    torch.testing.assert_close(resize_pos_embed(src.pos_embed, (4, 4), (4, 4)), src.pos_embed)


def test_gradients_reach_every_parameter():
    model = tiny().train()
    # A random projection: the plain sum of a LayerNorm output is constant.
    (model(torch.randn(2, 3, 32, 32))[0] * torch.randn(2, 32)).sum().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters())


def test_layer_depth():
    model = tiny()
    assert model.get_layer_depth('backbone.pos_embed', 'backbone.') == (0, 5)
    assert model.get_layer_depth('backbone.patch_embed.proj.weight', 'backbone.') == (0, 5)
    assert model.get_layer_depth('backbone.blocks.2.mlp.fc1.weight', 'backbone.') == (3, 5)
    assert model.get_layer_depth('backbone.norm.weight', 'backbone.') == (4, 5)
    assert model.get_layer_depth('head.fc.weight', 'backbone.') == (4, 5)


def test_arch_zoo_aliases():
    assert ViT(arch='deit-s', img_size=32).embed_dims == 384
    model = ViT(arch='tiny', img_size=32)
    assert (model.embed_dims, model.num_layers, model.blocks[0].attn.num_heads) == (192, 12, 3)


@pytest.mark.parametrize('kwargs,field', [
    (dict(arch='giant'), 'arch'),
    (dict(arch=dict(embed_dims=8)), 'arch'),
    (dict(out_type='tokens'), 'out_type'),
    (dict(out_indices=(5, )), 'out_indices'),
])
def test_bad_arguments_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        tiny(**kwargs)


def test_input_not_divisible_by_patch():
    with pytest.raises(ValueError, match='patch_size=8'):
        tiny()(torch.randn(1, 3, 30, 32))
