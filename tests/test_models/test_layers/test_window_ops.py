import pytest
import torch

from mmvitdyn.models.layers import (decomposed_rel_pos_bias, get_rel_pos, resize_rel_pos,
                                    window_partition, window_token_mask, window_unpartition)


@pytest.mark.parametrize('grid,window,padded', [((6, 6), 3, (6, 6)), ((5, 7), 3, (6, 9)),
                                                ((4, 4), 6, (6, 6))])
def test_partition_round_trip_with_padding(grid, window, padded):
    x = torch.randn(2, *grid, 5)
    windows, padded_grid = window_partition(x, window)
    assert padded_grid == padded
    n_windows = padded[0] // window * padded[1] // window
    assert windows.shape == (2 * n_windows, window, window, 5)
    torch.testing.assert_close(window_unpartition(windows, window, padded_grid, grid), x)
    # The first window of the second image starts at its top-left token.
    torch.testing.assert_close(windows[n_windows, 0, 0], x[1, 0, 0])
    # Padding is zeros, and the token mask marks exactly the grid's tokens.
    mask = window_token_mask(grid, window)
    assert mask.shape == (n_windows, window * window) and int(mask.sum()) == grid[0] * grid[1]
    assert torch.all(windows[:n_windows].flatten(1, 2)[~mask] == 0)


def test_windows_are_contiguous_squares():
    x = torch.arange(16.).view(1, 4, 4, 1)
    windows, _ = window_partition(x, 2)
    assert windows[1].flatten().tolist() == [2., 3., 6., 7.]  # top-right square


def test_get_rel_pos_indexes_by_offset():
    table = torch.arange(5.)[:, None]  # offsets -2..2 of a side-3 axis
    rel = get_rel_pos(3, table)[..., 0]
    assert rel.tolist() == [[2., 1., 0.], [3., 2., 1.], [4., 3., 2.]]  # table[i - k + 2]


def test_rel_pos_tables_are_interpolated_to_the_axis():
    table = torch.randn(7, 4)
    assert resize_rel_pos(table, 7) is table
    resized = resize_rel_pos(table, 13)
    assert resized.shape == (13, 4)
    torch.testing.assert_close(resized[6], table[3])  # the zero offset stays the centre row
    assert get_rel_pos(7, table).shape == (7, 7, 4)


def test_decomposed_bias_matches_its_definition():
    h, w, d = 3, 4, 6
    q = torch.randn(2, 2, h * w, d)
    rel_h, rel_w = torch.randn(2 * h - 1, d), torch.randn(2 * w - 1, d)
    bias = decomposed_rel_pos_bias(q, (h, w), rel_h, rel_w)
    assert bias.shape == (2, 2, h * w, h * w)
    i, j, k, m = 2, 1, 0, 3  # query (i, j), key (k, m)
    expected = q[1, 0, i * w + j] @ (rel_h[i - k + h - 1] + rel_w[j - m + w - 1])
    torch.testing.assert_close(bias[1, 0, i * w + j, k * w + m], expected)
