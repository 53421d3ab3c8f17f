"""FLOPs that follow the token counts ToMe and EViT leave, and ToMe on a trained DyT model."""
import json
import math

import pytest
import torch

from helpers.configs import DYT_DIGITS_CFG
from helpers.models import IMG_SIZE, PATCH_SIZE, TINY_ARCH, images, tiny
from helpers.tools import load_tool, logged_test_scalars, run_tool
from mmvitdyn.analysis import DyTFlopCounter, count_flops
from mmvitdyn.models import DyTViT

C, HIDDEN = TINY_ARCH['embed_dims'], TINY_ARCH['feedforward_channels']
HEADS = TINY_ARCH['num_heads']
D = C // HEADS
BOTTLENECK = 64  # DyTViT's default adapter
PATCHES = (IMG_SIZE // PATCH_SIZE)**2


def block_flops(n_in, n_out, mlp_tokens=None, dispatch=False):
    """One block by the fvcore convention (one multiply-add = one FLOP, LayerNorm 5 per
    element): the attention on ``n_in`` tokens, MLP and adapter on the ``n_out`` left."""
    mlp_tokens = n_out if mlp_tokens is None else mlp_tokens
    attention = 5 * n_in * C + 4 * n_in * C * C + 2 * n_in**2 * C  # norm1, qkv + proj, matmuls
    mlp = 5 * mlp_tokens * C + 2 * mlp_tokens * C * HIDDEN  # norm2, fc1 + fc2
    return attention + mlp + 2 * n_out * C * BOTTLENECK + (n_out * C if dispatch else 0)


def embed_and_norm_flops(n_final):
    return PATCHES * 3 * PATCH_SIZE**2 * C + 5 * n_final * C


def test_tome_flops_equal_the_formula():
    model = tiny(DyTViT, dispatch=None, token_reduction=dict(type='ToMe', r=[3, 5, 0]))
    tokens = [17, 14, 9]  # attention inputs: 17 - 3 = 14, 14 - 5 = 9, then no merge
    expected = embed_and_norm_flops(9)
    for n_in, n_out in zip(tokens, tokens[1:] + [9]):
        expected += block_flops(n_in, n_out)
        if n_out < n_in:  # matching: mean keys of set A (ceil) against set B (floor)
            expected += math.ceil(n_in / 2) * (n_in // 2) * D
    assert count_flops(model, images(1)) == expected


def test_evit_flops_equal_the_formula():
    model = tiny(
        DyTViT, dispatch=None, token_reduction=dict(type='EViT', keep_rate=0.5, locations=(0, 2)))
    # 16 patches -> 8 kept + 1 fused; block 2: 9 -> 5 kept + 1 fused.
    expected = embed_and_norm_flops(7)
    for n_in, n_out, dropped in [(17, 10, 8), (10, 10, 0), (10, 7, 4)]:
        expected += block_flops(n_in, n_out)
        if dropped:  # the class token's logits (1 x n_in x C), the fusion (dropped x C)
            expected += n_in * C + dropped * C
    assert count_flops(model, images(1)) == expected


def test_dyt_tome_per_image_flops_follow_merging_and_dispatch():
    torch.manual_seed(0)
    model = tiny(DyTViT, dispatch='mlp', token_reduction=dict(type='ToMe', r=4))
    x = images(3)
    counter = DyTFlopCounter(model, x[:1])
    with torch.no_grad():
        model(x)
    flops = counter.from_last_forward()
    active = [1 + (m['mlp'] != 0).sum(1) for m in model.dispatch_masks()]
    tokens = [17, 13, 9, 5]  # 4 merged per block
    for i in range(3):
        expected = embed_and_norm_flops(5)
        for b in range(3):
            expected += block_flops(tokens[b], tokens[b + 1], int(active[b][i]), dispatch=True)
            expected += math.ceil(tokens[b] / 2) * (tokens[b] // 2) * D
        assert float(flops[i]) == expected
    assert len({float(f) for f in flops}) > 1  # dispatch makes the count data-dependent


def test_tome_at_test_time_on_a_trained_dyt_checkpoint(dyt_digits_checkpoint, data_workspace,
                                                       tmp_path):
    """ToMe needs no training: test.py and get_flops.py apply it by --cfg-options."""
    tome = ['model.backbone.token_reduction.type=ToMe', 'model.backbone.token_reduction.r=8']
    first = ['test_dataloader.dataset.indices=48', 'val_dataloader.dataset.indices=48']
    run_tool([
        'test.py', DYT_DIGITS_CFG, dyt_digits_checkpoint, '--work-dir', tmp_path, '--cfg-options',
        *first, *tome
    ], data_workspace)
    logged = logged_test_scalars(tmp_path)
    assert 0 <= logged['accuracy/top1'] <= 100 and 0 < logged['act_rate'] < 1
    run_tool([
        'analysis_tools/get_flops.py', DYT_DIGITS_CFG, '--checkpoint', dyt_digits_checkpoint,
        '--num-images', 16, '--out', tmp_path / 'flops.json', '--cfg-options', *first, *tome
    ], data_workspace)
    counted = json.loads((tmp_path / 'flops.json').read_text())
    # The digits DyT: 6 blocks of width 192, MLP 768, adapter 16, 64 patches + class token;
    # 8 merged per block: attention on 65, 57, ..., 25 tokens, MLP on 8 fewer.
    c, layers = 192, 6
    dense = 64 * c * 3 * 16 + c * 10  # patch embedding, head
    for n in range(65, 65 - 8 * layers, -8):
        dense += 4 * n * c * c + 2 * n**2 * c + (n - 8) * c * (2 * 768 + 2 * 16 + 1)
    assert counted['dense_flops'] == pytest.approx(dense, rel=0.02)  # + norms, matching
    assert counted['flops'] < counted['dense_flops']


def test_benchmark_rows_of_every_reduction_method_at_matched_flops(tmp_path):
    benchmark = load_tool('analysis_tools/benchmark.py')
    threads = torch.get_num_threads()
    try:
        benchmark.main([
            '--reduction', '--arch', 'tiny', '--img-size', '32', '--patch-size', '8',
            '--batch-sizes', '2', '--runs', '1', '--min-time', '0', '--threads', '1', '--json',
            str(tmp_path / 'rows.json')
        ])
    finally:
        torch.set_num_threads(threads)  # main() sets the process's threads
    rows = {row['model']: row for row in json.loads((tmp_path / 'rows.json').read_text())['rows']}
    assert set(rows) == {'AdaptFormer', *benchmark.REDUCTION_METHODS}
    gflops = {name: row['gflops'] for name, row in rows.items()}
    assert rows['DyT']['act_rate'] == rows['DyT top-K']['act_rate'] == 0.5
    assert rows['AdaptFormer + ToMe']['tome_r'] == rows['DyT + ToMe']['tome_r'] >= 1
    # ViT-tiny (12 x 192) on 17 tokens: ToMe's r is the one closest to DyT's FLOPs; one
    # token more or less merged per block moves the count by about 10 % here.
    assert gflops['AdaptFormer + ToMe'] == pytest.approx(gflops['DyT'], rel=0.15)
    assert gflops['DyT + ToMe'] < gflops['DyT'] < gflops['AdaptFormer']
    assert max(gflops.values()) == gflops['AdaptFormer']
