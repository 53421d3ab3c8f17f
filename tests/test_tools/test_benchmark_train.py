"""tools/analysis_tools/benchmark_train.py: the activation memory it counts (the tensors
autograd saves for the backward pass), against byte counts written out by hand."""
import json

import torch
from torch import nn

from helpers.tools import load_tool

FLOAT = 4  # bytes


def test_saved_tensors_count_once_per_storage_while_the_graph_holds_them():
    """sigmoid saves its output, h * h saves h twice (one storage), h2 @ w saves h2 and w
    (a parameter: not counted), exp saves its output; the backward lets all of them go. A
    second graph after it is not added to the first one's peak."""
    tool = load_tool('analysis_tools/benchmark_train.py')
    linear = nn.Linear(8, 5, bias=False)
    x = torch.randn(7, 8, requires_grad=True)
    counter = tool.SavedActivations(linear)
    with counter:
        h = x.sigmoid()
        assert counter.live == 7 * 8 * FLOAT
        out = ((h * h) @ linear.weight.t()).exp()
        assert counter.live == counter.peak == (7 * 8 + 7 * 8 + 7 * 5) * FLOAT
        out.sum().backward()
        assert counter.live == 0
        second = x[:3].sigmoid()
        assert counter.live == 3 * 8 * FLOAT
        second.sum().backward()
    assert counter.live == 0 and counter.peak == (7 * 8 + 7 * 8 + 7 * 5) * FLOAT


class Chain(nn.Module):
    """A backbone of blocks that run 1, 3 and 2 sigmoids on a scaled input (the scale
    trains, so each sigmoid saves its output)."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(()))
        self.blocks = nn.ModuleList(
            nn.Sequential(*[nn.Sigmoid() for _ in range(depth)]) for depth in (1, 3, 2))
        self.with_cp = True

    def forward(self, x):
        assert not self.with_cp  # the count runs the blocks without checkpointing
        x = x * self.scale
        for block in self.blocks:
            x = block(x)
        return x


def test_largest_block_saved_is_the_deepest_block():
    """The 3-sigmoid block saves three (2, 3, 5, 5) outputs; the input the scaling saves
    lies outside every block; ``with_cp`` is set back."""
    tool = load_tool('analysis_tools/benchmark_train.py')
    chain = Chain()
    assert tool.largest_block_saved(chain, torch.randn(2, 3, 5, 5)) == 3 * 2 * 3 * 5 * 5 * FLOAT
    assert chain.with_cp


def test_checkpointing_shrinks_the_counted_activations(tmp_path):
    """The DyT classifier on ViT-tiny (12 blocks of 192 dims; 2 images of 32 x 32, 17
    tokens): with ``with_cp`` a block keeps only its input (2 x 17 x 192 floats) and the
    backward recomputes one block at a time. Without it, the 11 blocks after the first keep
    what one recomputed block keeps (block 0, whose input needs no gradient, keeps less)."""
    tool = load_tool('analysis_tools/benchmark_train.py')
    threads = torch.get_num_threads()
    try:
        tool.main([
            '--arch', 'tiny', '--img-size', '32', '--patch-size', '8', '--batch-sizes', '2',
            '--runs', '0', '--memory', 'in-process', '--threads', '1', '--device', 'cpu', '--modes',
            'dyt dynamic only', 'dyt dynamic only +cp', '--json',
            str(tmp_path / 'rows.json')
        ])
    finally:
        torch.set_num_threads(threads)  # main() sets the process's threads
    plain, cp = json.loads((tmp_path / 'rows.json').read_text())['rows']
    assert plain['recompute_mb'] is None and plain['activation_mb'] == plain['saved_mb']
    assert cp['activation_mb'] == cp['saved_mb'] + cp['recompute_mb']
    assert cp['activation_vs_no_cp'] == cp['activation_mb'] / plain['activation_mb'] < 0.25
    inputs = 12 * 2 * 17 * 192 * FLOAT / 2**20
    kept = plain['saved_mb'] - (cp['saved_mb'] - inputs)  # what the blocks keep without cp
    assert 11 * cp['recompute_mb'] < kept < 12 * cp['recompute_mb']
