"""tools/analysis_tools: get_flops.py and visualize_dispatch.py end to end."""
import json
import re
from contextlib import contextmanager

import pytest
import torch

from helpers.configs import DYT_COCO_CFG, DYT_DIGITS_CFG, VIT_DIGITS_CFG, first_test_images
from helpers.tools import REPO, load_tool, logged_test_scalars, run_tool


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
    'configs/dyt/upernet_vit-mini-p16-dyt_mln_1xb4-400i_ade-shapes-128px.py',
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


@pytest.fixture
def threads_kept():
    """The tools' ``main()`` sets the process's torch threads: set them back after."""
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


@contextmanager
def linear_output_dtypes():
    """The dtypes of every ``nn.Linear`` output computed inside the block (a set)."""
    dtypes = set()
    handle = torch.nn.modules.module.register_module_forward_hook(
        lambda module, args, out: dtypes.add(out.dtype)
        if isinstance(module, torch.nn.Linear) else None)
    try:
        yield dtypes
    finally:
        handle.remove()


@pytest.mark.parametrize('amp', [None, 'bf16'])
def test_benchmark_rows_on_the_cpu(amp, tmp_path, threads_kept):
    """Rows as JSON; with --amp bf16 the timed forwards compute in bfloat16 (fp32 without)."""
    with linear_output_dtypes() as dtypes:
        load_tool('analysis_tools/benchmark.py').main([
            '--arch', 'tiny', '--img-size', '32', '--patch-size', '8', '--batch-sizes', '3',
            '--rates', '1', '0.25', '--runs', '1', '--min-time', '0', '--threads', '1', '--device',
            'cpu', '--json',
            str(tmp_path / 'rows.json'), *(['--amp', amp] if amp else [])
        ])
    report = json.loads((tmp_path / 'rows.json').read_text())
    rows = {row['model']: row for row in report['rows']}
    assert list(rows) == ['dense', 'mlp @ 1', 'mlp @ 0.25']
    assert {(r['batch_size'], r['device'], r['dtype']) for r in rows.values()} == \
        {(3, 'cpu', amp or 'fp32')}
    assert rows['mlp @ 0.25']['act_rate'] == 0.25 and rows['mlp @ 1']['act_rate'] == 1.0
    # FLOP ratio dense / DyT: the tiny ViT (12 blocks, width 192, MLP 768) on 16 patches;
    # DyT adds a gate (192 -> 1) per block and patch; at rate 0.25 four patches of 16 run
    # each MLP and its norm: 12 x 12 x (2 x 192 x 768 + 5 x 192) FLOPs fewer (a LayerNorm
    # counts 5 per element).
    dense_flops = rows['dense']['gflops'] * 1e9
    gates, saved = 12 * 16 * 192, 12 * 12 * (2 * 192 * 768 + 5 * 192)
    assert rows['mlp @ 1']['flop_ratio'] == pytest.approx(
        dense_flops / (dense_flops + gates), rel=1e-4)
    assert rows['mlp @ 0.25']['flop_ratio'] == pytest.approx(
        dense_flops / (dense_flops + gates - saved), rel=1e-4)
    assert rows['dense']['speedup'] == 1.0
    assert rows['mlp @ 0.25']['images_per_s']['median'] > 0
    assert (torch.bfloat16 in dtypes) == (amp == 'bf16')


def test_benchmark_of_clips_counts_frames_and_the_pooling(tmp_path, threads_kept):
    """--frames 2: per-clip rows; a clip costs 2 frames as the image benchmark counts
    them plus the attentive pooling and the 400-way head (by hand)."""
    common = [
        '--arch', 'tiny', '--img-size', '32', '--patch-size', '8', '--batch-sizes', '3', '--rates',
        '0.25', '--runs', '1', '--min-time', '0', '--threads', '1', '--device', 'cpu'
    ]
    benchmark = load_tool('analysis_tools/benchmark.py')
    benchmark.main([*common, '--json', str(tmp_path / 'images.json')])
    benchmark.main([*common, '--frames', '2', '--json', str(tmp_path / 'clips.json')])
    image = json.loads((tmp_path / 'images.json').read_text())['rows'][0]
    rows = {row['model']: row for row in json.loads((tmp_path / 'clips.json').read_text())['rows']}
    assert list(rows) == ['dense', 'mlp @ 0.25']
    assert {(r['batch_size'], r['frames']) for r in rows.values()} == {(3, 2)}
    c, tokens = 192, 2 * 17  # 16 patches and the class token a frame
    # LayerNorms (5 a element) of the query, keys, values; q, k, v, proj; the one query's
    # q k^T and weights v over all heads (2 x tokens x c); the head.
    pooling = 5 * c * (1 + 2 * tokens) + c * c * (2 + 2 * tokens) + 2 * tokens * c + c * 400
    dense = rows['dense']['gflops'] * 1e9
    assert dense == pytest.approx(2 * image['gflops'] * 1e9 + pooling, rel=1e-9)
    gates, saved = 12 * 16 * c, 12 * 12 * (2 * c * 768 + 5 * c)  # per frame, as above
    assert rows['mlp @ 0.25']['flop_ratio'] == pytest.approx(
        dense / (dense + 2 * (gates - saved)), rel=1e-4)
    assert rows['mlp @ 0.25']['act_rate'] == 0.25
    assert rows['mlp @ 0.25']['clips_per_s']['median'] > 0 and 'images_per_s' not in rows['dense']
    assert rows['mlp @ 0.25']['speedup_per_flop_ratio'] == pytest.approx(
        rows['mlp @ 0.25']['speedup'] / rows['mlp @ 0.25']['flop_ratio'])


def test_frames_are_refused_outside_the_dispatch_comparison():
    with pytest.raises(SystemExit):
        load_tool('analysis_tools/benchmark.py').parse_args(['--frames', '8', '--reduction'])
    with pytest.raises(SystemExit):
        load_tool('analysis_tools/benchmark.py').parse_args(['--frames', '0'])


def test_benchmark_of_trained_models_on_their_validation_images(dyt_digits_checkpoint,
                                                                data_workspace, monkeypatch,
                                                                tmp_path, threads_kept):
    """What the demo runs: the ViT and DyT configs side by side on one checkpoint (the ViT
    loads its backbone), at two batch sizes of the first validation images; a config given
    twice is timed twice, its models numbered."""
    monkeypatch.chdir(data_workspace)
    load_tool('analysis_tools/benchmark.py').main([
        '--trained',
        str(VIT_DIGITS_CFG), dyt_digits_checkpoint,
        str(DYT_DIGITS_CFG), dyt_digits_checkpoint,
        str(DYT_DIGITS_CFG), dyt_digits_checkpoint, '--batch-sizes', '3', '8', '--runs', '1',
        '--min-time', '0', '--threads', '1', '--device', 'cpu', '--json',
        str(tmp_path / 'rows.json')
    ])
    rows = json.loads((tmp_path / 'rows.json').read_text())['rows']
    vit, dyt = VIT_DIGITS_CFG.stem, DYT_DIGITS_CFG.stem
    models = [vit, f'{dyt} #2', f'{dyt} #3']
    assert [(r['batch_size'], r['model']) for r in rows] == [(b, m) for b in (3, 8) for m in models]
    # The static ViT: 6 blocks of 65 tokens, width 192, MLP 768, patch embedding, head.
    tokens, c, layers = 65, 192, 6
    analytic = (
        layers * (tokens * (4 * c * c + 2 * c * 768) + 2 * tokens**2 * c) + 64 * c * 3 * 16 +
        c * 10)
    for row in rows[::3]:
        assert row['gflops'] * 1e9 == pytest.approx(analytic, rel=0.01)  # + norms
        assert row['act_rate'] == 1.0 and row['speedup'] == 1.0
    for first, second in zip(rows[1::3], rows[2::3]):  # the same model twice
        assert 0 < first['act_rate'] == second['act_rate'] < 1
        assert first['flop_ratio'] == second['flop_ratio'] > 1


def test_benchmark_training_step_memory_worker(tmp_path):
    """One of the fresh processes the memory comparison starts, run directly."""
    out = run_tool([
        'analysis_tools/benchmark_train.py', '--train-step-worker', 'dyt two-pass', '--arch',
        'tiny', '--img-size', 32, '--patch-size', 8, '--batch-sizes', 2, '--device', 'cpu'
    ], tmp_path).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert result['growth_mb'] > 0 and result['peak_mb'] > result['growth_mb']
    assert result['seconds'] > 0


def test_benchmark_train_times_the_single_process_steps_side_by_side(monkeypatch, tmp_path,
                                                                     threads_kept):
    """The step-time part in-process (the memory workers' figures stubbed), under bf16."""
    tool = load_tool('analysis_tools/benchmark_train.py')
    growth = {name: 10. + i for i, name in enumerate(tool.TRAIN_MODES)}
    monkeypatch.setattr(
        tool, 'run_train_step_workers', lambda args, name, batch: dict(
            growth_mb=growth[name],
            peak_mb=100.,
            seconds=1.,
            ranks=tool.num_ranks(name, args.device)))
    with linear_output_dtypes() as dtypes:
        tool.main([
            '--arch', 'tiny', '--img-size', '16', '--patch-size', '8', '--batch-sizes', '3',
            '--runs', '2', '--threads', '1', '--device', 'cpu', '--amp', 'bf16', '--json',
            str(tmp_path / 'train.json')
        ])
    assert dtypes == {torch.bfloat16}  # every step's forward passes run in bfloat16
    rows = {row['model']: row for row in json.loads((tmp_path / 'train.json').read_text())['rows']}
    assert list(rows) == list(tool.TRAIN_MODES)
    base = growth['dyt dynamic only']
    for name, row in rows.items():
        assert row['growth_vs_dynamic'] == growth[name] / base
        assert (row['batch_size'], row['dtype'], row['ranks']) == \
            (3, 'bf16', 2 if name == 'dyt two-pass DDP' else 1)
    assert 'step_s' not in rows['dyt two-pass DDP']  # its time: the worker's first step only
    assert rows['dyt dynamic only']['step_vs_dynamic'] == 1.0
    assert all(row['step_s']['min'] > 0 for name, row in rows.items() if 'step_s' in row)


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
