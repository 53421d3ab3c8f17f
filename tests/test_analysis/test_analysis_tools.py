"""tools/analysis_tools: get_flops.py and visualize_dispatch.py end to end."""
import json
import re

import pytest
import torch

from helpers.configs import DYT_COCO_CFG, DYT_DIGITS_CFG, VIT_DIGITS_CFG, first_test_images
from helpers.tools import REPO, logged_test_scalars, run_tool


def reported(text, label):
    return float(re.search(rf'{label}:\s+([\d.]+)', text).group(1))


def test_get_flops_of_a_static_vit(data_workspace):
    out = run_tool(['analysis_tools/get_flops.py', VIT_DIGITS_CFG], data_workspace).stdout
    # 6 blocks of 65 tokens, width 192, MLP 768: linears, attention matmuls and patch embedding.
    tokens, c, layers = 65, 192, 6
    analytic = (
        layers * (tokens * (4 * c * c + 2 * c * 768) + 2 * tokens**2 * c) + 64 * c * 3 * 16 +
        c * 10)
    assert reported(out, 'FLOPs') * 1e9 == pytest.approx(analytic, rel=0.01)  # + norms
    assert 'Input shape:      (3, 32, 32)' in out
    assert reported(out, 'Params') > 2


def test_get_flops_of_a_dyt_model_averages_val_images(data_workspace, tmp_path):
    out = run_tool([
        'analysis_tools/get_flops.py', DYT_DIGITS_CFG, '--num-images', 40, '--out',
        tmp_path / 'flops.json', '--cfg-options', 'val_dataloader.batch_size=16'
    ], data_workspace).stdout
    assert 'mean over 40 val images' in out
    dense, dyt = reported(out, 'Dense FLOPs'), reported(out, 'DyT FLOPs')
    rate = reported(out, 'Activation rate')
    assert 0 < rate < 1 and dyt < dense
    assert reported(out, 'DyT / dense') == pytest.approx(dyt / dense, abs=1e-3)
    # The paper's "Params (M)": in each of the 6 blocks (width 192) an adapter of
    # bottleneck 16 (down and up linears) and one MLP dispatcher (192 -> 1); the
    # 10-class head (192 -> 10) trains too but is not counted.
    c, d, layers, head = 192, 16, 6, 192 * 10 + 10
    paper = layers * ((c * d + d) + (d * c + c) + (c + 1))
    figures = json.loads((tmp_path / 'flops.json').read_text())
    assert figures['dyt_params'] == paper == 39270
    assert figures['trainable_params'] == paper + head
    assert reported(out, 'DyT params') == round(paper / 1e6, 3)


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

    cfg = Config.fromfile(str(DYT_DIGITS_CFG))
    init_default_scope('mmpretrain')
    import mmvitdyn  # noqa: F401
    ckpt = tmp_path / 'dyt.pth'
    torch.save({'state_dict': MODELS.build(cfg.model).state_dict()}, ckpt)
    images = sorted((data_workspace / 'data/digits/val/3').glob('*.png'))[:2]
    out_dir = tmp_path / 'maps'
    run_tool([
        'analysis_tools/visualize_dispatch.py', DYT_DIGITS_CFG, ckpt, *images, '--out-dir', out_dir
    ], data_workspace)
    written = sorted(p.name for p in out_dir.glob('*.png'))
    assert written == sorted(['activation_rates.png'] + [f'{p.stem}_dispatch.png' for p in images])
    assert all((out_dir / name).read_bytes()[:8] == b'\x89PNG\r\n\x1a\n' for name in written)


def test_benchmark_runs_small(tmp_path):
    out = run_tool([
        'analysis_tools/benchmark.py', '--arch', 'tiny', '--img-size', 32, '--patch-size', 8,
        '--batch-sizes', 2, '--rates', 1, 0.25, '--runs', 1, '--min-time', 0, '--no-memory'
    ], tmp_path).stdout
    # batch, setting, act. rate, img/s, speed-up, GFLOPs, FLOP ratio
    rows = {
        m[0]: [float(v) for v in m[1:]]
        for m in re.findall(
            r'^\s+2\s+(\w+(?: @ [\d.]+)?)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)',
            out, re.M)
    }
    assert set(rows) == {'dense', 'mlp @ 1', 'mlp @ 0.25'}, out
    assert rows['mlp @ 0.25'][0] == 0.25 and rows['mlp @ 1'][0] == 1.0
    assert rows['mlp @ 1'][4] == 1.0 < rows['mlp @ 0.25'][4]  # FLOP ratio dense / DyT


def test_benchmark_training_step_memory_worker(tmp_path):
    """One of the fresh processes the memory comparison starts, run directly."""
    out = run_tool([
        'analysis_tools/benchmark.py', '--train-step-worker', 'dyt two-pass', '--arch', 'tiny',
        '--img-size', 32, '--patch-size', 8, '--memory-batch', 2
    ], tmp_path).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert result['growth_mb'] > 0 and result['peak_mb'] > result['growth_mb']


@pytest.mark.parametrize(
    'config, checkpoint, num_images',
    [
        (DYT_DIGITS_CFG, 'dyt_digits_checkpoint', 24),
        # mmdet: the data preprocessor sits inside the model.
        (DYT_COCO_CFG, 'dyt_coco_checkpoint', 4),
    ],
    ids=['digits-top-level-preprocessor', 'coco-shapes-preprocessor-in-model'])
def test_tools_see_the_activation_that_test_py_logs(config, checkpoint, num_images, request,
                                                    data_workspace, tmp_path):
    """Regression: the analysis tools once fed classification models raw pixels.

    For a trained checkpoint, ``get_flops.py`` (over the first val images)
    and ``visualize_dispatch.py`` (on the same image files) must report the
    activation rate that ``tools/test.py`` logs through DispatchRateHook.
    """
    ckpt = request.getfixturevalue(checkpoint)
    first_images = [f'test_dataloader.dataset.indices={num_images}']
    run_tool(
        ['test.py', config, ckpt, '--work-dir', tmp_path / 'test', '--cfg-options', *first_images],
        data_workspace)
    logged = logged_test_scalars(tmp_path / 'test')['act_rate']
    assert 0.05 < logged < 0.95  # the dispatchers gate: a meaningful comparison

    flops_json = tmp_path / 'flops.json'
    run_tool([
        'analysis_tools/get_flops.py', config, '--checkpoint', ckpt, '--num-images', num_images,
        '--out', flops_json
    ], data_workspace)
    counted = json.loads(flops_json.read_text())
    assert len(counted['image_rates']) == num_images
    assert counted['activation_rate'] == pytest.approx(logged, abs=1e-6)

    images = first_test_images(config, data_workspace, num_images)
    out_dir = tmp_path / 'maps'
    run_tool(['analysis_tools/visualize_dispatch.py', config, ckpt, *images, '--out-dir', out_dir],
             data_workspace)
    drawn = json.loads((out_dir / 'activation_rates.json').read_text())
    assert drawn['activation_rate'] == pytest.approx(logged, abs=1e-6)
    per_image = [drawn['images'][path]['activation_rate'] for path in images]
    assert per_image == pytest.approx(counted['image_rates'], abs=1e-6)
