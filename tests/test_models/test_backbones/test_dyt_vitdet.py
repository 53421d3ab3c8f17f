from functools import partial

import pytest
import torch
from timm.layers import resample_abs_pos_embed_nhwc
from timm.models import vision_transformer_sam

from helpers.dyt import dyt_param_names, rel_pos_names, spread_gates, trainable_names
from helpers.models import PATCH_SIZE, TINY_ARCH, images, tiny
from mmvitdyn.checkpoint import load_pretrained
from mmvitdyn.models import DyTViT, DyTViTDet, RelPosAttention, ViTDet

GRID = (6, 10)  # patch grid of a 48 x 80 image at patch 8: windows of 4 need padding
# Windowed, global, windowed blocks; global tables made for 48 px inputs.
VITDET = dict(window_size=4, global_indices=(1, ), input_size=48)


def build(**kwargs):
    model = tiny(DyTViTDet, **{**VITDET, **kwargs})
    for block in model.blocks:  # non-zero relative position tables
        torch.nn.init.normal_(block.attn.rel_pos_h, std=0.2)
        torch.nn.init.normal_(block.attn.rel_pos_w, std=0.2)
    return model


def grid_images(batch=3):
    return images(batch, size=(GRID[0] * PATCH_SIZE, GRID[1] * PATCH_SIZE))


def test_blocks_windows_and_feature_maps():
    model = build(out_indices=(1, 2))
    windows = [block.attn.window_size for block in model.blocks]
    assert windows == [4, 0, 4]
    assert all(isinstance(block.attn, RelPosAttention) for block in model.blocks)
    assert [tuple(b.attn.rel_pos_h.shape) for b in model.blocks] == [(7, 8), (11, 8), (7, 8)]
    assert model.cls_token is None and model.pos_embed.shape == (1, 16, 32)  # 4 x 4, no class slot
    outs = model.eval()(grid_images())
    assert [tuple(o.shape) for o in outs] == [(3, 32, *GRID)] * 2


@pytest.mark.parametrize('batch', [1, 3])
def test_packed_equals_masked_in_eval(batch):
    model = build(out_indices=(1, 2)).eval()
    spread_gates(model)
    x = grid_images(batch)
    model.set_packed(True)
    packed = model(x)
    packed_masks = model.dispatch_masks()
    model.set_packed(False)
    masked = model(x)
    for p, m in zip(packed, masked):
        torch.testing.assert_close(p, m, atol=1e-5, rtol=1e-5)
    # Every block's MLP skips some tokens and runs others in every image.
    for block_masks in packed_masks:
        active = block_masks['mlp'].float().mean(1)
        assert active.shape == (batch, ) and bool(((0 < active) & (active < 1)).all()), active


def test_every_token_active_equals_complete_mode():
    model = build().eval()
    spread_gates(model, std=0.0, bias=10.0)
    x = grid_images()
    with model.complete_mode():
        expected = model(x)[0]
    torch.testing.assert_close(model(x)[0], expected)
    assert model.activation_rates()['act_rate'] == 1.0


def test_training_rate_loss_reaches_the_dispatchers():
    model = build().train()
    model.attach_objective('this test, which adds its own loss terms')
    out = model(grid_images())[0]
    (out.mean() + model.rate_loss()).backward()
    gate = model.blocks[0].dispatchers['mlp'].gate.weight
    assert gate.grad is not None and gate.grad.abs().sum() > 0
    assert model.blocks[0].mlp.fc1.weight.grad is None  # frozen


def test_trainable_set():
    model = build()
    layers = TINY_ARCH['num_layers']
    assert trainable_names(model) == dyt_param_names(layers) | rel_pos_names(layers)
    frozen_tables = build(train_rel_pos=False)
    assert not frozen_tables.blocks[0].attn.rel_pos_h.requires_grad
    plain = tiny(ViTDet, **VITDET)
    assert all(p.requires_grad for p in plain.parameters())
    # The DyT model's tensors but its adapters and dispatchers, every one trained.
    assert {n
            for n, _ in plain.named_parameters()} == {
                n
                for n, _ in model.named_parameters()
                if not {'adapter', 'dispatchers'} & set(n.split('.'))
            }


@pytest.mark.parametrize('dispatch', ['attn', 'attn_mlp', 'layer'])
def test_attention_dispatch_is_refused(dispatch):
    message = f"dispatch='{dispatch}' gates the attention.*RelPosAttention"
    with pytest.raises(ValueError, match=message):
        build(dispatch=dispatch)


def test_bad_arguments():
    with pytest.raises(ValueError, match=r'global_indices entries \[4\]'):
        build(global_indices=(1, 4))  # 3 blocks
    with pytest.raises(ValueError, match='out_type'):
        build(out_type='cls_token')


def timm_style_vit_state(grid: int = 4) -> dict:
    """A timm / MAE ViT checkpoint of TINY_ARCH: class token and pos_embed with its slot,
    head, norm."""
    torch.manual_seed(3)
    vit = DyTViT(
        arch=TINY_ARCH,
        img_size=PATCH_SIZE * grid,
        patch_size=PATCH_SIZE,
        dispatch=None,
        adapter_cfg=None)
    state = {k: torch.randn_like(v) for k, v in vit.state_dict().items()}
    state.update({'head.weight': torch.zeros(10, 32), 'head.bias': torch.zeros(10)})
    return state


def test_timm_checkpoint_loads_with_a_clear_report(tmp_path):
    state = timm_style_vit_state(grid=7)  # pre-trained at 56 px: 7 x 7 + class slot
    torch.save(state, tmp_path / 'vit.pth')
    model = tiny(DyTViTDet, **VITDET)
    report = load_pretrained(model, str(tmp_path / 'vit.pth'))
    assert report.format == 'timm'
    assert sorted(
        report.unexpected) == ['cls_token', 'head.bias', 'head.weight', 'norm.bias', 'norm.weight']
    # Nothing is a gap: the rel-pos tables, adapters and dispatchers are parts ViTDet adds.
    assert report.missing == []
    assert {k.split('.', 2)[2].split('.')[0]
            for k in report.missing_new} == {'attn', 'adapter', 'dispatchers'}
    assert {k.rsplit('.', 1)[-1]
            for k in report.missing_new if '.attn.' in k} == {'rel_pos_h', 'rel_pos_w'}
    assert torch.equal(model.blocks[2].mlp.fc1.weight, state['blocks.2.mlp.fc1.weight'])
    # The class-token slot is dropped and the 7 x 7 grid resized to 4 x 4.
    grid = state['pos_embed'][:, 1:].reshape(1, 7, 7, 32).permute(0, 3, 1, 2)
    expected = torch.nn.functional.interpolate(
        grid, size=(4, 4), mode='bicubic', align_corners=False).flatten(2).transpose(1, 2)
    torch.testing.assert_close(model.pos_embed.data, expected)


@pytest.mark.parametrize('through_file', [False, True])
def test_rel_pos_tables_of_another_window_load(through_file, tmp_path):
    source = build()  # windows of 4, global tables for 48 px (11 offsets)
    target = tiny(DyTViTDet, **dict(VITDET, window_size=6, input_size=96))
    if through_file:
        torch.save(source.state_dict(), tmp_path / 'vitdet.pth')
        report = load_pretrained(target, str(tmp_path / 'vitdet.pth'))
        assert not report.missing and not report.unexpected
    else:
        missing, unexpected = target.load_state_dict(source.state_dict(), strict=True)
        assert not missing and not unexpected
    assert target.blocks[0].attn.rel_pos_h.shape == (11, 8)  # 2 * 6 - 1
    assert target.blocks[1].attn.rel_pos_h.shape == (23, 8)  # 2 * 96 / 8 - 1
    torch.testing.assert_close(target.blocks[1].attn.rel_pos_w[11],
                               source.blocks[1].attn.rel_pos_w[5])  # the zero offset


def test_global_dyt_vit_gives_multi_level_maps_for_upernet():
    model = tiny(DyTViT, out_indices=(0, 1, 2), out_type='featmap')
    spread_gates(model)
    x = grid_images(2)
    packed = model(x)
    model.set_packed(False)
    masked = model(x)
    assert [tuple(o.shape) for o in packed] == [(2, 32, *GRID)] * 3
    for p, m in zip(packed, masked):
        torch.testing.assert_close(p, m, atol=1e-5, rtol=1e-5)


def sam_and_ours(img_size: int, **kwargs):
    """timm's ViTDet/SAM backbone (48 wide, 3 heads, windows of 14, block 1 global)
    with random weights, and our plain ViTDet holding the same weights."""
    torch.manual_seed(0)
    sam = vision_transformer_sam.VisionTransformerSAM(
        img_size=img_size,
        embed_dim=48,
        depth=3,
        num_heads=3,
        norm_layer=partial(torch.nn.LayerNorm, eps=1e-6),
        use_rel_pos=True,
        window_size=14,
        global_attn_indexes=(1, ),
        neck_chans=None,
        num_classes=0).eval()
    for param in sam.parameters():  # every weight random, relative-position tables too
        torch.nn.init.normal_(param, std=0.2)
    ours = ViTDet(
        arch=dict(embed_dims=48, num_layers=3, num_heads=3, feedforward_channels=192),
        img_size=img_size,
        window_size=14,
        global_indices=(1, ),
        input_size=img_size,
        out_indices=(0, 1, 2),
        **kwargs).eval()
    state = {k: v for k, v in sam.state_dict().items() if not k.startswith(('neck.', 'head.'))}
    state['pos_embed'] = state['pos_embed'].flatten(1, 2)  # (1, h, w, C) -> (1, h * w, C)
    ours.load_state_dict(state, strict=True)
    return sam, ours


@pytest.mark.parametrize(
    'img_size,input_hw',
    [
        (224, (224, 224)),  # grid 14: whole windows
        (448, (448, 448)),  # grid 28
        (1024, (1024, 1024)),  # ViTDet's input: grid 64, windows padded to 70
        (1024, (1024, 768)),  # non-square: grid 64 x 48, padded to 70 x 56
    ])
def test_equals_timm_vitdet_sam_backbone(img_size, input_hw, monkeypatch):
    """Every block's output map equals timm's VisionTransformerSAM (before any neck)."""
    # ViTDet (detectron2's get_abs_pos) and we resize the position embedding by plain
    # bicubic interpolation; timm antialiases, which alone moves the 1024 x 768 maps by 1%.
    monkeypatch.setattr(vision_transformer_sam, 'resample_abs_pos_embed_nhwc',
                        partial(resample_abs_pos_embed_nhwc, antialias=False))
    sam, ours = sam_and_ours(img_size)
    x = images(1, size=input_hw)
    with torch.no_grad():
        expected = sam.forward_intermediates(x, intermediates_only=True)
        outs = ours(x)
    grid = (input_hw[0] // 16, input_hw[1] // 16)
    for out, ref in zip(outs, expected):
        assert out.shape == ref.shape == (1, 48, *grid)
        torch.testing.assert_close(out, ref, rtol=2e-6, atol=2e-6 * ref.abs().max().item())


def test_masked_window_padding_is_an_option():
    """window_padding='masked' changes only inputs whose grid needs padding."""
    sam, ours = sam_and_ours(448, window_padding='masked')
    assert {block.attn.window_padding for block in ours.blocks} == {'masked'}
    with torch.no_grad():
        whole = images(1, size=448)  # grid 28: no padding, equal to timm
        torch.testing.assert_close(
            ours(whole)[-1],
            sam.forward_intermediates(whole, intermediates_only=True)[-1])
        padded = images(1, size=(448, 320))  # grid 28 x 20: the windows of 14 padded to 28
        out, ref = ours(padded)[-1], sam.forward_intermediates(padded, intermediates_only=True)[-1]
    assert (out - ref).norm() > 1e-3 * ref.norm()
    message = r"window_padding='mask' is not one of \['zero', 'masked'\]"
    with pytest.raises(ValueError, match=message):
        build(window_padding='mask')
