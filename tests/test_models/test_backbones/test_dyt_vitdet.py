import pytest
import torch

from helpers.dyt import dyt_param_names, rel_pos_names, spread_gates, trainable_names
from helpers.models import PATCH_SIZE, TINY_ARCH, images, tiny
from mmvitdyn.models import DyTViT, DyTViTDet, RelPosAttention
from mmvitdyn.models.utils import load_pretrained

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
    rate = model.activation_rates()['act_rate']
    model.set_packed(False)
    masked = model(x)
    for p, m in zip(packed, masked):
        torch.testing.assert_close(p, m, atol=1e-5, rtol=1e-5)
    assert 0.1 < rate < 0.9


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
    plain = build(dispatch=None, adapter_cfg=None, freeze_pretrained=False)
    assert all(p.requires_grad for p in plain.parameters())
    assert not plain.blocks[0].dispatchers and plain.blocks[0].adapter is None


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
    assert sorted({k.rsplit('.', 1)[-1] for k in report.missing}) == ['rel_pos_h', 'rel_pos_w']
    assert all('adapter' in k or 'dispatchers' in k for k in report.missing_dyt)
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
