"""tools/learngene/*: argument errors (in-process) and the benchmark.

The successful build_learngene.py run is part of test_digits_descendant."""
import json
import shutil

import numpy as np
import pytest
import torch
from mmengine.config import Config
from mmengine.registry import MODELS, init_default_scope
from PIL import Image

from helpers.configs import VIT_DIGITS_CFG
from helpers.learngene import make_ancestry, write_learngene
from helpers.models import TINY_ARCH
from helpers.tools import REPO, load_tool
from mmvitdyn.learngene import Learngene, record_attention_distance


@pytest.mark.parametrize('extra,message', [
    (['--eps', '0'], 'eps=0.0 must be > 0'),
    (['--min-hds', '0'], 'min_samples (MinHds)=0 must be an int >= 1'),
    (['--method', 'kmeans'], "method='kmeans' needs k"),
    (['--ffn-groups', '5..8'], "--ffn-groups entry '5..8' is not FIRST-LAST"),
])
def test_bad_arguments_are_named(tmp_path, capsys, extra, message):
    with pytest.raises(SystemExit) as exit_info:
        load_tool('learngene/build_learngene.py').main([
            str(VIT_DIGITS_CFG),
            str(tmp_path / 'none.pth'), '--out',
            str(tmp_path / 'lg.pth'), *extra
        ])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_missing_checkpoint(tmp_path, capsys):
    with pytest.raises(SystemExit):
        load_tool('learngene/build_learngene.py').main(
            [str(VIT_DIGITS_CFG),
             str(tmp_path / 'none.pth'), '--out',
             str(tmp_path / 'lg.pth')])
    assert f"checkpoint '{tmp_path / 'none.pth'}' does not exist" in capsys.readouterr().err


def test_benchmark_rows_and_the_limit(tmp_path):
    args = [
        '--arch', 'tiny', '--img-size', '32', '--num-images', '5', '--batch-sizes', '2', '--runs',
        '2', '--device', 'cpu', '--json',
        str(tmp_path / 'rows.json')
    ]
    benchmark = load_tool('learngene/benchmark_learngene.py')
    benchmark.main(args + ['--max-ratio', '1000'])
    inference, build = json.loads((tmp_path / 'rows.json').read_text())['rows']
    assert (inference['model'], build['model']) == ('plain inference', 'learngene build')
    assert inference['batch_size'] == build['batch_size'] == 2
    assert set(build['stages']) == {'mad', 'condense', 'write'}
    # Each round's build time holds its stages' (timed inside it).
    assert build['seconds']['min'] >= sum(s['min'] for s in build['stages'].values())
    assert build['ratio'] > 0 and build['centroids'] >= 12  # a centroid per layer
    assert build['images_per_s']['max'] == pytest.approx(5 / build['seconds']['min'])
    with pytest.raises(SystemExit) as exit_info:
        benchmark.main(args + ['--max-ratio', '0.001'])
    assert exit_info.value.code == 1


def test_image_folder_is_normalised_as_in_training(data_workspace, tmp_path):
    """MAD of a folder equals MAD of its images normalised by the config's
    data_preprocessor mean/std (77.97 / 82.51 for digits; not x 255)."""
    width = TINY_ARCH['embed_dims']
    options = [f'model.backbone.arch.{k}={v}'
               for k, v in TINY_ARCH.items()] + [f'model.head.in_channels={width}']
    cfg = Config.fromfile(VIT_DIGITS_CFG)
    cfg.model.backbone.arch = dict(TINY_ARCH)
    cfg.model.head.in_channels = width
    init_default_scope('mmpretrain')
    torch.manual_seed(0)
    model = MODELS.build(dict(cfg.model, data_preprocessor=cfg.data_preprocessor))
    model.init_weights()
    with torch.no_grad():
        for block in model.backbone.blocks:
            block.attn.qkv.weight.normal_(0, 0.3)
    ckpt = tmp_path / 'ancestry.pth'
    torch.save(dict(state_dict=model.state_dict()), ckpt)
    folder = tmp_path / 'images'
    folder.mkdir()
    paths = sorted((data_workspace / 'data/digits/val').glob('*/*.png'))[::90][:4]
    for index, path in enumerate(paths):
        shutil.copy(path, folder / f'{index}.png')
    out = tmp_path / 'lg.pth'
    load_tool('learngene/build_learngene.py').main([
        str(VIT_DIGITS_CFG),
        str(ckpt), '--out',
        str(out), '--data',
        str(folder), '--num-images', '4', '--cfg-options', *options
    ])
    pixels = torch.stack([
        torch.from_numpy(np.array(Image.open(p).convert('RGB'))).permute(2, 0, 1) for p in paths
    ]).float()
    expected = record_attention_distance(model.backbone, [(pixels - 77.97) / 82.51]).mean()
    torch.testing.assert_close(Learngene.load(str(out)).mad, expected)
    assert (tmp_path / 'lg_mad.png').is_file()


def test_materialized_export_loads_without_sharing(tmp_path, capsys):
    ancestry = make_ancestry(
        dict(embed_dims=48, num_layers=6, num_heads=6, feedforward_channels=64), patch_size=4)
    write_learngene(ancestry, tmp_path / 'lg.pth', eps=1e3)  # one FFN group of 6 layers
    cfg_path = REPO / ('configs/cluster_learngene/'
                       'learngene-vit-mini-p4-h3_vit-mini-eps0.1_1xb32-10e_digits-32px.py')
    options = [
        f"model.backbone.learngene={tmp_path / 'lg.pth'}", 'model.head.in_channels=48',
        'model.backbone.tie_heads=True'
    ]

    def build(**sharing):
        cfg = Config.fromfile(cfg_path)
        cfg.model.backbone.update(learngene=str(tmp_path / 'lg.pth'), **sharing)
        cfg.model.head.in_channels = 48
        return MODELS.build(cfg.model).eval()

    init_default_scope('mmpretrain')
    trained = build(tie_heads=True)
    trained.init_weights()
    with torch.no_grad():
        trained.backbone.blocks[0].mlp.expansion.map_out_weight.normal_()
        trained.backbone.blocks[1].attn.shared_heads.qkv_weight.normal_()
    torch.save(dict(state_dict=trained.state_dict()), tmp_path / 'trained.pth')
    load_tool('learngene/materialize_descendant.py').main([
        str(cfg_path),
        str(tmp_path / 'trained.pth'), '--out',
        str(tmp_path / 'plain.pth'), '--cfg-options', *options
    ])
    assert ('model.backbone.ffn_sharing=independent model.backbone.tie_heads=False'
            in capsys.readouterr().out)
    plain = build(ffn_sharing='independent', tie_heads=False)
    state = torch.load(tmp_path / 'plain.pth', weights_only=False)['state_dict']
    plain.load_state_dict(state)
    x = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        torch.testing.assert_close(plain(x, mode='tensor'), trained(x, mode='tensor'))
