"""Every pretrained file a config names says where its source comes from: a
missing one is refused naming the source file, its address and the command
that makes the config's file (or that it loads as it is downloaded)."""
import re

import pytest
from mmengine.config import Config

from helpers.tools import REPO, load_tool
from mmvitdyn.engine import SetupError
from mmvitdyn.engine.runner_setup import (KNOWN_CHECKPOINTS, KNOWN_LEARNGENES, LEARNGENE_CONFIGS,
                                          check_pretrained_checkpoints)

NAMED = sorted({
    name
    for config in (REPO / 'configs').rglob('*.py')
    for name in re.findall(r"checkpoint='checkpoints/([^']+)'", config.read_text())
})


def test_every_pretrained_file_of_the_configs_has_a_source():
    assert len(NAMED) == 11
    assert [name for name in NAMED if name not in KNOWN_CHECKPOINTS] == []


@pytest.mark.parametrize(
    'config, expected', [
        ('configs/cluster_learngene/_base_/models/deit-s-p16.py',
         'It is the DeiT-S/16 of the DeiT repository (https://dl.fbaipublicfiles.com/deit/'
         'deit_small_patch16_224-cd65a155.pth), which loads as it is: download it to '
         'checkpoints/deit_small_patch16_224-cd65a155.pth'),
        ('configs/dyt/upernet_vit-b-p16-mae-dyt_d64_8xb2-160k_ade20k-512x512.py',
         'e.g. python tools/model_converters/timm2mmvitdyn.py mae_pretrain_vit_base.pth '
         'checkpoints/mae-vit-base-p16.pth (the source: the MAE ViT-B/16 of the MAE repository '
         '(https://dl.fbaipublicfiles.com/mae/pretrain/mae_pretrain_vit_base.pth))'),
        ('configs/cluster_learngene/tleg-aux-vit-s-p16_levit-384-distill_8xb64-150e_in1k-224px.py',
         'the teacher TLEG distils its Aux-Net from, which loads as it is: download it to '
         'checkpoints/levit-384_3rdparty_in1k_20230117-f3539cce.pth'),
    ],
    ids=['loads-as-it-is', 'converted', 'teacher'])
def test_a_missing_file_names_its_source(config, expected, tmp_path, monkeypatch):
    cfg = Config.fromfile(str(REPO / config))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SetupError) as error:
        check_pretrained_checkpoints(cfg)
    assert expected in str(error.value)


LEARNGENES = sorted({
    name
    for config in (REPO / 'configs').rglob('*.py')
    for name in re.findall(r"learngene='checkpoints/([^']+)'", config.read_text())
})
DIGITS_LEARNGENE_CFG = ('configs/cluster_learngene/'
                        'learngene-vit-mini-p4-h3_vit-mini-eps1_1xb32-10e_digits-32px.py')


def test_every_learngene_file_of_the_configs_names_the_config_that_writes_it():
    """The config KNOWN_LEARNGENES names shows, in its header, a command whose
    ``--out`` is the file."""
    assert len(LEARNGENES) == 11 and sorted(KNOWN_LEARNGENES) == LEARNGENES
    for name, maker in KNOWN_LEARNGENES.items():
        header = (REPO / LEARNGENE_CONFIGS / maker).read_text()
        assert f'#       --out checkpoints/{name}\n' in header, (name, maker)


@pytest.mark.parametrize(
    'learngene, expected', [
        ('checkpoints/learngene_deit-s-p16_eps10_in1k.pth',
         "model.backbone.learngene='checkpoints/learngene_deit-s-p16_eps10_in1k.pth' does not "
         'exist (relative to {cwd}). It is written by the command at the top of '
         'configs/cluster_learngene/deit-s-p16_ancestry_in1k-224px.py'),
        ('work_dirs/learngenes/mine.pth',
         "model.backbone.learngene='work_dirs/learngenes/mine.pth' does not exist (relative to "
         '{cwd}). Write it with tools/learngene/build_learngene.py'),
    ],
    ids=['known', 'own'])
def test_train_refuses_a_missing_learngene_naming_its_maker(learngene, expected, data_workspace,
                                                            tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(data_workspace)
    with pytest.raises(SystemExit):
        load_tool('train.py').main([
            str(REPO / DIGITS_LEARNGENE_CFG), '--work-dir',
            str(tmp_path), '--cfg-options', f'model.backbone.learngene={learngene}'
        ])
    assert expected.format(cwd=data_workspace) in ' '.join(capsys.readouterr().err.split())
    assert not list(tmp_path.rglob('*.pth'))
