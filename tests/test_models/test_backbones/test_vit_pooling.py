"""A ViT without a class token (``class_token=False``), and the norm of the
pooled output (``fc_norm``): timm's ``class_token=False, global_pool='avg'``
written out in plain torch, and the settings that cannot go together refused
naming the field."""
import pytest
import torch
from torch import nn

from helpers.models import IMG_SIZE, PATCH_SIZE, TINY_ARCH, images, tiny
from mmvitdyn.models import DyTViT, DyTViTDet, ViT

C = TINY_ARCH['embed_dims']
GRID = (IMG_SIZE // PATCH_SIZE)**2


def test_without_a_class_token_the_tokens_are_the_patches():
    model = tiny(class_token=False, out_type='raw')
    assert model.cls_token is None and model.num_prefix_tokens == 0
    assert model.pos_embed.shape == (1, GRID, C) and 'cls_token' not in model.state_dict()
    assert model(images())[0].shape == (4, GRID, C)


def test_the_pooled_norm_normalises_the_mean_of_the_patch_tokens():
    pooled = tiny(class_token=False, out_type='avg_featmap', final_norm=False, fc_norm=True)
    with torch.no_grad():
        pooled.fc_norm.weight.normal_()
        pooled.fc_norm.bias.normal_()
    raw = tiny(class_token=False, out_type='raw', final_norm=False)
    missing, unexpected = raw.load_state_dict(pooled.state_dict(), strict=False)
    assert missing == [] and unexpected == ['fc_norm.weight', 'fc_norm.bias']
    with torch.no_grad():
        mean = raw(images())[0].mean(1)
        expected = nn.functional.layer_norm(
            mean, (C, ), pooled.fc_norm.weight, pooled.fc_norm.bias, eps=1e-6)
        torch.testing.assert_close(pooled(images())[0], expected)


def test_dyt_dispatch_leaves_no_prefix_token_out_without_a_class_token():
    model = DyTViT(
        arch=dict(TINY_ARCH),
        img_size=IMG_SIZE,
        patch_size=PATCH_SIZE,
        class_token=False,
        out_type='avg_featmap',
        allow_random_frozen=True)
    assert [block.num_prefix_tokens for block in model.blocks] == [0] * TINY_ARCH['num_layers']


@pytest.mark.parametrize('model_cls,options,message', [
    (ViT, dict(class_token=False), r"out_type='cls_token' needs the class token "
     r'\(class_token=False\)'),
    (ViT, dict(class_token=False, out_type='raw',
               dist_token=True), 'ViT has no class token: dist_token=True'),
    (ViT, dict(class_token='no'), "class_token='no' must be True or False"),
    (ViT, dict(fc_norm=True), r"fc_norm=True normalises the pooled output and needs "
     r"out_type='avg_featmap', got out_type='cls_token'"),
    (DyTViTDet, dict(class_token=True,
                     global_indices=(2, )), 'class_token=True: DyTViTDet has no class token'),
])
def test_settings_that_do_not_go_together_are_refused(model_cls, options, message):
    with pytest.raises(ValueError, match=message):
        model_cls(arch=dict(TINY_ARCH), **options)
