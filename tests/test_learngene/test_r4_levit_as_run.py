"""The rebuttal's LeViT table (R4, configs/sweeps/cluster-learngene_r4_levit.py)
as the seed describes it (000_7130df39bf8bc907.txt:23-25, 109): one cell per
method and data set, every model LeViT-192-shaped, the epochs of the rebuttal
(From-Scratch's of Table 1), each row initialised as it says, and the
metafile's counts those of LeViT-192. The expected values come from the seed,
LeViT-192's published architecture and mmpretrain's model zoo, not from
mmvitdyn."""
import shlex
from pathlib import Path

import mmpretrain
import pytest
import torch
import yaml
from mmengine.config import Config
from mmengine.registry import MODELS, init_default_scope

import mmvitdyn.sweeps as sweeps
from helpers.learngene_configs import read_config
from helpers.tools import REPO, load_tool
from mmvitdyn.sweeps import CellState

SWEEP = 'configs/sweeps/cluster-learngene_r4_levit.py'
ROWS = ('pretrain-finetune', 'scratch', 'heuristic-learngene', 'auto-learngene',
        'cluster-learngene')
# Data set -> (mmpretrain data set type, classes).
DATA_SETS = {'in1k': ('ImageNet', 1000), 'cifar100': ('CIFAR100', 100)}
# Seed line 25: "500 epochs on CIFAR-100 and 50 epochs on ImageNet"; line 109:
# From-Scratch trains 100 where the others fine-tune 50 (ImageNet).
EPOCHS = {'in1k': 50, 'cifar100': 500}
SCRATCH_IN1K_EPOCHS = 100
# LeViT-192 (Graham et al., ICCV 2021, Table 1 / the official LeViT_192
# specification): widths, heads, blocks per stage, key width.
LEVIT_192 = dict(
    embed_dims=[192, 288, 384], num_heads=[3, 5, 6], depths=[4, 4, 4], key_dims=[32] * 3)
LEARNGENES = {
    'cluster-learngene': ('cluster', 'checkpoints/learngene_levit-192_eps10_in1k.pth'),
    'heuristic-learngene': ('heuristic', 'checkpoints/heuristic-learngene_levit-192_in1k.pth'),
    'auto-learngene': ('auto', 'checkpoints/auto-learngene_levit-192_in1k.pth'),
}
ANCESTRY = 'configs/cluster_learngene/levit-192_ancestry_in1k-224px.py'
ANCESTRY_CHECKPOINT = 'checkpoints/levit-192_3rdparty_in1k_20230117-8217a0f9.pth'


def dry_run_cells(capsys, monkeypatch) -> dict:
    """(row, data set) -> config path of each command ``tools/sweep.py SWEEP
    --dry-run`` prints (every cell pending)."""
    monkeypatch.chdir(REPO)
    monkeypatch.setattr(sweeps, 'cell_state', lambda work_dir: CellState('pending', ''))
    capsys.readouterr()
    load_tool('sweep.py').main([SWEEP, '--dry-run'])
    cells = {}
    for line in capsys.readouterr().out.splitlines():
        if line.startswith('#'):
            continue
        tokens = shlex.split(line)
        name = Path(tokens[tokens.index('--work-dir') + 1]).name
        row, data_set = name.split('_')[0], name.split('_')[-1]
        assert (row, data_set) not in cells, name
        cells[row, data_set] = next(t for t in tokens if t.endswith('.py'))
    return cells


def test_every_cell_is_a_levit_192_shaped_model_with_the_rebuttal_epochs(capsys, monkeypatch):
    cells = dry_run_cells(capsys, monkeypatch)
    # No TLEG row: TLEG defines Aux-Nets for DeiTs only (the sweep file's comment).
    assert sorted(cells) == sorted((row, d) for row in ROWS for d in DATA_SETS)
    for (row, data_set), config in cells.items():
        cfg = read_config(REPO / config)
        kind, classes = DATA_SETS[data_set]
        assert cfg.train_dataloader.dataset.type == kind and cfg.model.head.num_classes == classes
        assert cfg.model.head.in_channels == LEVIT_192['embed_dims'][-1]
        assert not cfg.model.head.distillation
        epochs = SCRATCH_IN1K_EPOCHS if (row, data_set) == ('scratch', 'in1k') else EPOCHS[data_set]
        assert cfg.train_cfg.max_epochs == epochs, config
        assert cfg.randomness.seed == 0
        backbone = cfg.model.backbone
        if row in LEARNGENES:
            init_mode, learngene = LEARNGENES[row]
            assert backbone.type == 'LearngeneLeViT' and backbone.learngene == learngene
            assert backbone.get('init_mode', 'cluster') == init_mode
            assert backbone.arch == dict(omega=1, depths=LEVIT_192['depths'])
            continue
        assert backbone.type == 'LeViT' and backbone.arch == '192'
        assert 'init_cfg' in backbone if row == 'pretrain-finetune' else 'init_cfg' not in backbone
        init_default_scope('mmpretrain')
        built = MODELS.build(dict(backbone, init_cfg=None))
        assert {key: list(getattr(built, key)) for key in LEVIT_192} == LEVIT_192


@pytest.mark.parametrize('data_set', sorted(DATA_SETS))
def test_pretrain_finetune_starts_from_the_ancestry_backbone(tmp_path, monkeypatch, data_set):
    """The checkpoint the ancestry config names (mmpretrain's classifier
    layout) loads into the backbone; the classifier starts random."""
    init_default_scope('mmpretrain')
    torch.manual_seed(0)
    ancestry = MODELS.build(Config.fromfile(REPO / ANCESTRY).model)
    (tmp_path / 'checkpoints').mkdir()
    torch.save(dict(state_dict=ancestry.state_dict()), tmp_path / ANCESTRY_CHECKPOINT)
    name = f'levit-192_pretrain-finetune_{"8xb128-50e" if data_set == "in1k" else "8xb64-500e"}'
    cfg = read_config(f'{name}_{data_set}-224px')
    assert cfg.model.backbone.init_cfg.checkpoint == ANCESTRY_CHECKPOINT
    monkeypatch.chdir(tmp_path)
    torch.manual_seed(1)
    model = MODELS.build(cfg.model)
    model.init_weights()
    theirs = ancestry.backbone.state_dict()
    for key, value in model.backbone.state_dict().items():
        assert torch.equal(value, theirs[key]), key
    ours = model.head.head.linear.weight
    assert not torch.equal(ours, ancestry.head.head.linear.weight[:len(ours)])


def test_the_metafile_counts_levit_192_for_every_cell(capsys, monkeypatch):
    cells = dry_run_cells(capsys, monkeypatch)
    models = {
        m['Name']: m['Metadata']
        for m in yaml.safe_load((REPO /
                                 'configs/cluster_learngene/metafile.yml').read_text())['Models']
    }
    # mmpretrain's model zoo counts LeViT-192 with one classifier of 1000 classes.
    zoo = yaml.safe_load((Path(mmpretrain.__file__).parent /
                          '.mim/configs/levit/metafile.yml').read_text())['Models']
    levit_192 = next(m for m in zoo if m['Name'] == 'levit-192_3rdparty_in1k')['Metadata']
    c = LEVIT_192['embed_dims'][-1]
    for data_set, (_, classes) in DATA_SETS.items():
        expected = levit_192['Parameters'] - (1000 - classes) * (c + 1)
        flops = {models[Path(cells[row, data_set]).stem]['FLOPs'] for row in ROWS}
        assert len(flops) == 1, data_set  # one architecture
        for row in ROWS:
            meta = models[Path(cells[row, data_set]).stem]
            assert meta['Parameters'] == meta['Trainable Parameters'] == expected, (row, data_set)
