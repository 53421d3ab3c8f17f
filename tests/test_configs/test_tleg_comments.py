"""The TLEG configs' comments state the expansion their model computes: layer l
(0-based) of an L-layer model is theta_A + l / L theta_B (TLEG's public code),
so "l / N" must name the depth L of the config's backbone."""
import re

import pytest
from mmengine.config import Config

from helpers.tools import REPO
from mmvitdyn.models import ViT

STATED = re.compile(r'theta_A \+ l / (\d+) theta_B \(l = 0\.\.(\d+)\)')
TLEG_CONFIGS = sorted(p for p in (REPO / 'configs').rglob('*.py') if 'theta_B' in p.read_text())


def depth(backbone) -> int:
    arch = backbone['arch']
    return (arch if isinstance(arch, dict) else ViT.arch_zoo[arch])['num_layers']


def test_the_tleg_configs_are_found():
    # The Aux-Net and the TLEG descendants on Table 2's 13 data sets at 12
    # layers (the table's depth) and at 6 (their variants).
    assert len(TLEG_CONFIGS) == 1 + 13 * 2


@pytest.mark.parametrize('config', TLEG_CONFIGS, ids=lambda p: p.stem)
def test_the_stated_coefficient_is_that_of_the_depth(config):
    text = ' '.join(line.lstrip('# ') for line in config.read_text().splitlines())
    stated = STATED.findall(text)
    assert stated, f'{config.name}: no "theta_A + l / L theta_B (l = 0..L-1)" in its comments'
    layers = depth(Config.fromfile(str(config)).model.backbone)
    assert stated == [(str(layers), str(layers - 1))] * len(stated)
