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
    windowed = attention(window_size=6)
    plain = Attention(C, HEADS).eval()
    plain.load_state_dict(windowed.state_dict())
    x = torch.randn(2, grid[0] * grid[1], C)
    torch.testing.assert_close(windowed(x, grid), plain(x))


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
    with pytest.raises(ValueError, match='fill the grid'):
        attention(window_size=2)(torch.randn(1, 10, C), (3, 3))
