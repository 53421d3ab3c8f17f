"""Every pretrained file a config names says where its source comes from: a
missing one is refused naming the source file, its address and the command
that makes the config's file (or that it loads as it is downloaded)."""
import re

import pytest
from mmengine.config import Config

from helpers.tools import REPO
from mmvitdyn.engine.runner_setup import KNOWN_CHECKPOINTS, SetupError, check_pretrained_checkpoints

NAMED = sorted({
    name
    for config in (REPO / 'configs').rglob('*.py')
    for name in re.findall(r"checkpoint='checkpoints/([^']+)'", config.read_text())
})


def test_every_pretrained_file_of_the_configs_has_a_source():
    assert len(NAMED) == 9
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
    ],
    ids=['loads-as-it-is', 'converted'])
def test_a_missing_file_names_its_source(config, expected, tmp_path, monkeypatch):
    cfg = Config.fromfile(str(REPO / config))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SetupError) as error:
        check_pretrained_checkpoints(cfg)
    assert expected in str(error.value)
