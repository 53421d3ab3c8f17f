import pytest
import torch

from mmvitdyn.models.layers import Attention, RelPosAttention

C, HEADS = 16, 2


def attention(**kwargs):
    torch.manual_seed(0)
    return RelPosAttention(C, HEADS, **kwargs).eval()


def randomise_rel_pos(module):
    torch.nn.init.normal_(module.rel_pos_h, std=0.5)
    torch.nn.init.normal_(module.rel_pos_w, std=0.5)


def test_window_covering_the_grid_equals_global_attention_with_rel_pos():
    grid = (5, 5)
    windowed = attention(window_size=5, rel_pos_size=5)
    randomise_rel_pos(windowed)
    global_ = attention(window_size=0, rel_pos_size=5)
    global_.load_state_dict(windowed.state_dict())
    x = torch.randn(2, 25, C)
    out = windowed(x, grid)
    torch.testing.assert_close(out, global_(x, grid))
    # ... and the relative position bias changes the result.
    plain = Attention(C, HEADS).eval()
    plain.load_state_dict(windowed.state_dict(), strict=False)
    assert not torch.allclose(out, plain(x), atol=1e-3)


@pytest.mark.parametrize('grid', [(3, 4), (4, 4)])
def test_padded_keys_are_masked(grid):
    """A window larger than the grid (padded) is global attention: padding never attends."""
    torch.manual_seed(1)
    windowed = attention(window_size=6, window_padding='masked')
    plain = Attention(C, HEADS).eval()
    plain.load_state_dict(windowed.state_dict())
    x = torch.randn(2, grid[0] * grid[1], C)
    torch.testing.assert_close(windowed(x, grid), plain(x))


@pytest.mark.parametrize('grid', [(3, 4), (4, 4)])
def test_grid_is_padded_with_zero_tokens_by_default(grid):
    """ViTDet / SAM: the window holds the grid and zero tokens, which are attended to."""
    torch.manual_seed(1)
    windowed = attention(window_size=6, rel_pos_size=6)
    randomise_rel_pos(windowed)
    x = torch.randn(2, *grid, C)
    padded = torch.zeros(2, 6, 6, C)
    padded[:, :grid[0], :grid[1]] = x
    # Plain attention over the 6 x 6 padded window, bias q . R_h[i - k] + q . R_w[j - l].
    qkv = windowed.qkv(padded.flatten(1, 2)).unflatten(-1, (3, HEADS, C // HEADS))
    q, k, v = qkv.permute(2, 0, 3, 1, 4)
    offsets = torch.arange(6)[:, None] - torch.arange(6)[None] + 5
    rel_h, rel_w = windowed.rel_pos_h[offsets], windowed.rel_pos_w[offsets]  # (6, 6, D)
    qg = q.unflatten(2, (6, 6))
    bias = torch.einsum('bnijd,ikd->bnijk', qg, rel_h)[..., None] + \
        torch.einsum('bnijd,jld->bnijl', qg, rel_w)[..., None, :]
    scores = q @ k.transpose(-2, -1) / (C // HEADS)**0.5 + bias.flatten(2, 3).flatten(-2)
    out = windowed.proj((scores.softmax(-1) @ v).transpose(1, 2).flatten(2))
    expected = out.view(2, 6, 6, C)[:, :grid[0], :grid[1]].flatten(1, 2)
    torch.testing.assert_close(windowed(x.flatten(1, 2), grid), expected)


def test_windows_do_not_see_each_other():
    module = attention(window_size=2, rel_pos_size=2)
    randomise_rel_pos(module)
    for grid in [(4, 6), (4, 5)]:  # 2 x 3 windows of 2 x 2, without and with padding
        x = torch.randn(1, grid[0] * grid[1], C)
        out = module(x, grid)
        x2 = x.clone()
        x2[0, -1] += 1.0  # bottom-right token, in the last window
        changed = (module(x2, grid) - out).abs().sum(-1)[0].view(grid) > 0
        expected = torch.zeros(grid, dtype=torch.bool)
        expected[2:, 4:] = True
        assert torch.equal(changed, expected)


def test_rel_pos_tables_of_another_size_are_interpolated_on_load():
    small = attention(window_size=3, rel_pos_size=3)
    randomise_rel_pos(small)
    large = attention(window_size=7, rel_pos_size=7)
    large.load_state_dict(small.state_dict())
    assert large.rel_pos_h.shape == (13, C // HEADS)
    torch.testing.assert_close(large.rel_pos_h[6], small.rel_pos_h[2])  # zero offset


def test_bad_arguments():
    with pytest.raises(ValueError, match='window_size'):
        RelPosAttention(C, HEADS, window_size=-1)
    message = r"window_padding='mask' is not one of \['zero', 'masked'\]"
    with pytest.raises(ValueError, match=message):
        RelPosAttention(C, HEADS, window_size=2, window_padding='mask')
    with pytest.raises(ValueError, match='fill the grid'):
        attention(window_size=2)(torch.randn(1, 10, C), (3, 3))
