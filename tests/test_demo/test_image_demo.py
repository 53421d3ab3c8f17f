"""demo/image_demo.py: each task through its OpenMMLab inferencer, with DyT figures.

The demo's per-image activation rates and GFLOPs come from the inferencer's
forward; they must equal what the analysis tools (dataloader path) and
``tools/test.py`` (DispatchRateHook) report for the same images.
"""
import json

import cv2
import numpy as np
import pytest
import torch
from mmengine.config import Config
from mmengine.registry import init_default_scope
from mmengine.runner import CheckpointLoader
from mmpretrain.datasets import CIFAR100
from mmseg.datasets import ADE20KDataset

from helpers.configs import (DYT_ADE_CFG, DYT_COCO_CFG, DYT_CONFIG_DIR, DYT_DIGITS_CFG,
                             first_test_images)
from helpers.tools import logged_test_scalars, run_tool
from mmvitdyn.apis.inference import config_dataset_meta

PNG, JPEG = b'\x89PNG\r\n\x1a\n', b'\xff\xd8\xff'


def run_demo(config, checkpoint, images, workspace, out_dir):
    """Run the demo on ``images`` (copied into one folder); return stdout and summary rows."""
    folder = out_dir.parent / 'inputs'
    folder.mkdir(parents=True)
    for i, image in enumerate(images):  # numbered: the folder's order is the given order
        (folder / f'{i:02d}_{image.rsplit("/", 1)[-1]}').write_bytes(open(image, 'rb').read())
    out = run_tool(['../demo/image_demo.py', folder, config, checkpoint, '--out-dir', out_dir],
                   workspace).stdout
    rows = json.loads((out_dir / 'summary.json').read_text())['images']
    assert len(rows) == len(images)
    for row in rows:
        for picture in row['pictures']:
            assert open(picture, 'rb').read(8).startswith((PNG, JPEG)), picture
        assert f'{row["activation_rate"]:.4f}' in out and f'{row["gflops"]:.4f}' in out
    return out, rows


@pytest.mark.parametrize(
    'config, checkpoint', [
        (DYT_DIGITS_CFG, 'dyt_digits_checkpoint'),
        (DYT_COCO_CFG, 'dyt_coco_checkpoint'),
    ],
    ids=['classification', 'detection'])
def test_figures_equal_get_flops_on_the_same_images(config, checkpoint, request, data_workspace,
                                                    tmp_path):
    ckpt = request.getfixturevalue(checkpoint)
    images = first_test_images(config, data_workspace, 2)
    _, rows = run_demo(config, ckpt, images, data_workspace, tmp_path / 'demo')
    assert all(len(row['pictures']) == 2 for row in rows)  # the task's picture + skip maps

    flops_json = tmp_path / 'flops.json'
    run_tool([
        'analysis_tools/get_flops.py', config, '--checkpoint', ckpt, '--num-images', 2, '--out',
        flops_json
    ], data_workspace)
    counted = json.loads(flops_json.read_text())
    assert [row['activation_rate'] for row in rows] == pytest.approx(
        counted['image_rates'], abs=1e-6)
    assert [row['gflops'] * 1e9 for row in rows] == pytest.approx(
        counted['flops_per_image'], rel=1e-6)


def test_segmentation_counts_every_sliding_window_crop(dyt_ade_checkpoint, data_workspace,
                                                       tmp_path):
    """Sliding-window inference runs the backbone per crop (4 for this config):
    the demo's rate is the crops' mean, as DispatchRateHook logs it."""
    images = first_test_images(DYT_ADE_CFG, data_workspace, 1)
    out, rows = run_demo(DYT_ADE_CFG, dyt_ade_checkpoint, images, data_workspace, tmp_path / 'demo')
    assert rows[0]['backbone_forwards'] == 4
    run_tool([
        'test.py', DYT_ADE_CFG, dyt_ade_checkpoint, '--work-dir', tmp_path / 'test',
        '--cfg-options', 'test_dataloader.dataset.indices=1'
    ], data_workspace)
    logged = logged_test_scalars(tmp_path / 'test')['act_rate']
    assert rows[0]['activation_rate'] == pytest.approx(logged, abs=1e-6)
    assert rows[0]['prediction'].split()[0] in ('building', 'sky', 'tree', 'road', 'grass')
    # The label map holds the data set's file values (reduce_zero_label: 1..5) of mmseg's
    # own prediction for the image.
    from mmseg.apis import inference_model, init_model
    model = init_model(str(DYT_ADE_CFG), str(dyt_ade_checkpoint), device='cpu')
    expected = inference_model(model, images[0]).pred_sem_seg.data[0].numpy() + 1
    written = cv2.imread(rows[0]['label_map'], cv2.IMREAD_UNCHANGED)
    assert written.dtype == np.uint8 and np.array_equal(written, expected)
    assert set(np.unique(written)) <= {1, 2, 3, 4, 5} and f'  {rows[0]["label_map"]}' in out

    # Without meta.dataset_meta (a converter's output) the classes are named as the
    # trained checkpoint's meta names them (mmseg's inferencer would use Cityscapes').
    plain = without_meta(dyt_ade_checkpoint, tmp_path / 'plain.pth')
    _, plain_rows = run_demo(DYT_ADE_CFG, plain, images, data_workspace,
                             tmp_path / 'plain' / 'demo')
    assert plain_rows[0]['prediction'] == rows[0]['prediction']


def test_runs_into_one_folder_keep_each_image_s_figures(dyt_digits_checkpoint, data_workspace,
                                                        tmp_path, monkeypatch, capsys):
    """A second run into the same --out-dir adds its images to summary.json (a
    rerun image replaces its row); another model's run there is refused and
    leaves the summary as it was."""
    from helpers.tools import load_tool
    first, second = first_test_images(DYT_DIGITS_CFG, data_workspace, 2)
    out_dir = tmp_path / 'demo'
    summary = out_dir / 'summary.json'
    monkeypatch.chdir(data_workspace)
    demo = load_tool('../demo/image_demo.py')

    def run(image, checkpoint):
        demo.main([image, str(DYT_DIGITS_CFG), str(checkpoint), '--out-dir', str(out_dir)])

    for image in (first, second, first):
        run(image, dyt_digits_checkpoint)
    rows = json.loads(summary.read_text())['images']
    assert [row['image'] for row in rows] == [second, first]
    before = summary.read_bytes()
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        run(first, without_meta(dyt_digits_checkpoint, tmp_path / 'plain.pth'))
    assert stop.value.code == 2 and 'holds the figures of config' in capsys.readouterr().err
    assert summary.read_bytes() == before


def without_meta(checkpoint, out):
    """``checkpoint``'s weights alone, as a converter writes them (no ``meta``)."""
    weights = CheckpointLoader.load_checkpoint(str(checkpoint), map_location='cpu')['state_dict']
    torch.save(dict(state_dict=weights), out)
    return out


def test_a_checkpoint_without_class_names_and_a_large_photo(dyt_digits_checkpoint, data_workspace,
                                                            tmp_path):
    """A converter's output holds no ``meta.dataset_meta``: the digits are named
    by their numbers, as their class folders are (mmpretrain's inferencer
    failed with KeyError 'pred_class'), and a 640x480 photo runs at the
    model's 32x32 through the config's test pipeline."""
    photo = str(tmp_path / 'photo.jpg')
    cv2.imwrite(photo, np.random.default_rng(0).integers(0, 256, (480, 640, 3), dtype=np.uint8))
    images = [first_test_images(DYT_DIGITS_CFG, data_workspace, 1)[0], photo]
    plain = without_meta(dyt_digits_checkpoint, tmp_path / 'plain.pth')
    _, rows = run_demo(DYT_DIGITS_CFG, plain, images, data_workspace, tmp_path / 'demo')
    for row in rows:
        name, score = row['prediction'].split()
        assert name in [str(d) for d in range(10)] and 0 <= float(score.strip('()')) <= 1
    # full resolution would be a 160x120 patch grid: over 1000 times the tokens
    assert 0.5 < rows[1]['gflops'] / rows[0]['gflops'] < 2


@pytest.mark.parametrize(
    'config, expected', [
        ('vit-b-p16-dyt_d64_8xb128-100e_cifar100-224px.py', CIFAR100.METAINFO['classes']),
        ('upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py',
         ADE20KDataset.METAINFO['classes']),
        ('mask-rcnn_vitdet-mini-dyt_1xb4-12e_coco-shapes-128px.py',
         ('circle', 'square', 'triangle')),
    ],
    ids=['stock-mmpretrain-type', 'stock-mmseg-type', 'config-metainfo'])
def test_class_names_from_the_config(config, expected):
    cfg = Config.fromfile(str(DYT_CONFIG_DIR / config))
    init_default_scope(cfg.default_scope)
    meta = config_dataset_meta(cfg, 'checkpoint x.pth')
    assert meta['classes'] == tuple(expected) and len(meta['palette']) == len(expected)


def test_class_names_from_a_file_the_config_names(tmp_path, log):
    (tmp_path / 'classes.txt').write_text('cat\ndog\n')
    cfg = Config.fromfile(str(DYT_DIGITS_CFG))
    init_default_scope(cfg.default_scope)
    assert config_dataset_meta(cfg, 'x')['classes'] == tuple(str(i) for i in range(10))
    # ImageFolder: its folders name the classes
    assert any('x holds no class names' in r.getMessage() for r in log)
    cfg.test_dataloader.dataset.metainfo = dict(classes=str(tmp_path / 'classes.txt'))
    assert config_dataset_meta(cfg, 'x')['classes'] == ('cat', 'dog')


@pytest.mark.parametrize('preprocessor', [
    dict(type='mmpretrain.ClsDataPreprocessor', mean=[127.5] * 3, std=[127.5] * 3, to_rgb=True),
    dict(type='mmseg.SegDataPreProcessor', mean=[127.5] * 3, std=[127.5] * 3, bgr_to_rgb=True),
    dict(type='mmdet.DetDataPreprocessor', mean=[127.5] * 3, std=[127.5] * 3, bgr_to_rgb=True),
    dict(type='mmpretrain.ClsDataPreprocessor', mean=[0] * 3, std=[1] * 3, to_rgb=False),
])
def test_the_drawn_input_is_the_image_file_s_pixels(preprocessor, tmp_path):
    """A loaded image (BGR, as mmcv reads files) through each task's preprocessor,
    turned back into a picture: the file's RGB pixels, whatever the channel setting."""
    import mmcv
    from mmengine.registry import MODELS

    rgb = np.random.default_rng(0).integers(0, 256, (8, 12, 3), dtype=np.uint8)
    mmcv.imwrite(rgb[..., ::-1], str(tmp_path / 'image.png'))  # imwrite takes BGR
    loaded = mmcv.imread(str(tmp_path / 'image.png'))
    demo = load_demo()
    model = torch.nn.Module()
    model.data_preprocessor = MODELS.build(preprocessor)
    inputs = model.data_preprocessor(
        dict(inputs=[torch.from_numpy(loaded).permute(2, 0, 1).contiguous()]))['inputs'][0]
    assert np.array_equal(demo.seen_image(model, inputs), rgb)


def load_demo():
    from helpers.tools import load_tool
    return load_tool('../demo/image_demo.py')


def refused_run(tmp_path, capsys, inputs, out_dir):
    """The exit code and stderr of image_demo.py on ``inputs`` with ``--out-dir out_dir``
    and a checkpoint it must never read."""
    from helpers.tools import load_tool
    (tmp_path / 'ckpt.pth').write_bytes(b'never read')
    with pytest.raises(SystemExit) as stop:
        load_tool('../demo/image_demo.py').main([
            str(inputs),
            str(DYT_DIGITS_CFG),
            str(tmp_path / 'ckpt.pth'), '--out-dir',
            str(out_dir)
        ])
    return stop.value.code, capsys.readouterr().err


@pytest.mark.parametrize('layout, refused', [
    ('same name in two folders', 'would both be drawn to'),
    ('out-dir inside the input folder', 'is inside the input folder'),
])
def test_outputs_that_would_collide_or_feed_back_are_refused(tmp_path, capsys, layout, refused):
    inputs = tmp_path / 'inputs'
    for folder in ('a', 'b'):
        (inputs / folder).mkdir(parents=True)
        cv2.imwrite(str(inputs / folder / 'x.png'), np.zeros((8, 8, 3), np.uint8))
    out_dir = tmp_path / 'out' if layout == 'same name in two folders' else inputs / 'out'
    code, err = refused_run(tmp_path, capsys, inputs, out_dir)
    assert code == 2 and refused in err
    assert not out_dir.exists()


def test_a_picture_of_an_earlier_run_given_as_input_is_not_overwritten(tmp_path, capsys):
    """``out/vis/x.png`` as the input with ``--out-dir out``: the classification picture
    of x.png would be written over it."""
    picture = tmp_path / 'out' / 'vis' / 'x.png'
    picture.parent.mkdir(parents=True)
    cv2.imwrite(str(picture), np.full((8, 8, 3), 7, np.uint8))
    before = picture.read_bytes()
    code, err = refused_run(tmp_path, capsys, picture, tmp_path / 'out')
    assert code == 2 and f'output {picture} is the input {picture}' in err
    assert picture.read_bytes() == before and sorted(picture.parent.iterdir()) == [picture]


def test_a_detection_picture_shows_the_best_box_when_none_scores_high(dyt_coco_checkpoint,
                                                                      data_workspace, tmp_path):
    """With the box classifier's weights zeroed every box scores 1/4 (3 classes
    and background), under the 0.3 that the picture draws from: the picture
    shows the best box alone (it changes inside that box only) and the text
    says so. mmdet's inferencer draws none."""
    weights = CheckpointLoader.load_checkpoint(str(dyt_coco_checkpoint), map_location='cpu')
    for name in ('weight', 'bias'):
        weights['state_dict'][f'roi_head.bbox_head.fc_cls.{name}'].zero_()
    torch.save(weights, tmp_path / 'unsure.pth')
    images = first_test_images(DYT_COCO_CFG, data_workspace, 1)
    _, rows = run_demo(DYT_COCO_CFG, tmp_path / 'unsure.pth', images, data_workspace,
                       tmp_path / 'demo')
    from mmdet.apis import DetInferencer
    found = DetInferencer(
        str(DYT_COCO_CFG), str(tmp_path / 'unsure.pth'), device='cpu')(
            images[0], return_datasamples=True)['predictions'][0].pred_instances
    assert len(found) > 1 and torch.allclose(found.scores, torch.tensor(0.25))
    best = int(found.scores.argmax())
    name = ('circle', 'square', 'triangle')[int(found.labels[best])]
    assert rows[0]['prediction'] == f'0 objects (score >= 0.3); drawn: the best, {name} 0.25'
    # more than the JPEG re-encoding of the picture changes
    changed = np.abs(
        cv2.imread(rows[0]['pictures'][0]).astype(int) -
        cv2.imread(images[0]).astype(int)).sum(-1) > 60
    x0, y0, x1, y1 = found.bboxes[best].round().int().tolist()
    box = np.zeros_like(changed)
    box[max(y0 - 2, 0):y1 + 3, max(x0 - 2, 0):x1 + 3] = True  # and the box's line width
    assert changed[box].mean() > 0.05
    assert changed[~box].mean() < 0.01  # the label's text may stick out
