"""tools/analysis_tools: get_flops.py and visualize_dispatch.py end to end."""
import json
import re

import pytest
import torch

from helpers.tools import REPO, run_tool

VIT_CFG = REPO / 'configs/vit/vit-mini-p4_1xb32-20e_digits-32px.py'
DYT_CFG = REPO / 'configs/dyt/vit-mini-p4-dyt_1xb32-8e_digits-32px.py'


def reported(text, label):
    return float(re.search(rf'{label}:\s+([\d.]+)', text).group(1))


def test_get_flops_of_a_static_vit(data_workspace):
    out = run_tool(['analysis_tools/get_flops.py', VIT_CFG], data_workspace).stdout
    # 6 blocks of 65 tokens, width 192, MLP 768: linears, attention matmuls and patch embedding.
    tokens, c, layers = 65, 192, 6
    analytic = (layers * (tokens * (4 * c * c + 2 * c * 768) + 2 * tokens**2 * c)
                + 64 * c * 3 * 16 + c * 10)
    assert reported(out, 'FLOPs') * 1e9 == pytest.approx(analytic, rel=0.01)  # + norms
    assert 'Input shape:      (3, 32, 32)' in out
    assert reported(out, 'Params') > 2


def test_get_flops_of_a_dyt_model_averages_val_images(data_workspace):
    out = run_tool(['analysis_tools/get_flops.py', DYT_CFG, '--num-images', 40,
                    '--cfg-options', 'val_dataloader.batch_size=16'], data_workspace).stdout
    assert 'mean over 40 val images' in out
    dense, dyt = reported(out, 'Dense FLOPs'), reported(out, 'DyT FLOPs')
    rate = reported(out, 'Activation rate')
    assert 0 < rate < 1 and dyt < dense
    assert reported(out, 'DyT / dense') == pytest.approx(dyt / dense, abs=1e-3)


@pytest.mark.parametrize('config', [
    'configs/dyt/mask-rcnn_vitdet-mini-dyt_1xb4-12e_coco-shapes-128px.py',
    'configs/dyt/upernet_vit-mini-dyt_mln_1xb4-400i_ade-shapes-128px.py',
])
def test_get_flops_of_dense_prediction_configs(config, data_workspace):
    """Per-image DyT GFLOPs for a detector (backbone + neck) and a segmentor."""
    out = run_tool(['analysis_tools/get_flops.py', REPO / config, '--num-images', 4],
                   data_workspace).stdout
    assert 'mean over 4 val images' in out
    assert 0 < reported(out, 'Activation rate') < 1
    assert reported(out, 'DyT FLOPs') < reported(out, 'Dense FLOPs')


def test_visualize_dispatch_writes_pngs(data_workspace, tmp_path):
    from mmengine.config import Config
    from mmengine.registry import MODELS, init_default_scope

    cfg = Config.fromfile(str(DYT_CFG))
    init_default_scope('mmpretrain')
    import mmvitdyn  # noqa: F401
    ckpt = tmp_path / 'dyt.pth'
    torch.save({'state_dict': MODELS.build(cfg.model).state_dict()}, ckpt)
    images = sorted((data_workspace / 'data/digits/val/3').glob('*.png'))[:2]
    out_dir = tmp_path / 'maps'
    run_tool(['analysis_tools/visualize_dispatch.py', DYT_CFG, ckpt, *images, '--out-dir',
              out_dir], data_workspace)
    written = sorted(p.name for p in out_dir.glob('*.png'))
    assert written == sorted(['activation_rates.png'] + [f'{p.stem}_dispatch.png' for p in images])
    assert all((out_dir / name).read_bytes()[:8] == b'\x89PNG\r\n\x1a\n' for name in written)


def test_benchmark_runs_small(tmp_path):
    out = run_tool(['analysis_tools/benchmark.py', '--arch', 'tiny', '--img-size', 32,
                    '--patch-size', 8, '--batch-sizes', 2, '--rates', 1, 0.25, '--runs', 1,
                    '--min-time', 0, '--no-memory'], tmp_path).stdout
    # batch, setting, act. rate, img/s, speed-up, GFLOPs, FLOP ratio
    rows = {m[0]: [float(v) for v in m[1:]] for m in re.findall(
        r'^\s+2\s+(\w+(?: @ [\d.]+)?)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)',
        out, re.M)}
    assert set(rows) == {'dense', 'mlp @ 1', 'mlp @ 0.25'}, out
    assert rows['mlp @ 0.25'][0] == 0.25 and rows['mlp @ 1'][0] == 1.0
    assert rows['mlp @ 1'][4] == 1.0 < rows['mlp @ 0.25'][4]  # FLOP ratio dense / DyT


def test_benchmark_training_step_memory_worker(tmp_path):
    """One of the fresh processes the memory comparison starts, run directly."""
    out = run_tool(['analysis_tools/benchmark.py', '--train-step-worker', 'dyt two-pass',
                    '--arch', 'tiny', '--img-size', 32, '--patch-size', 8, '--memory-batch', 2],
                   tmp_path).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert result['growth_mb'] > 0 and result['peak_mb'] > result['growth_mb']
