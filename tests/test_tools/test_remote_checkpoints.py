"""A remote checkpoint is refused like a local one through every way a config or tool
names it: ``load_from``, ``init_cfg``, the test tool, the converters, ``--resume``.

The remote files are planted in torch hub's cache (``TORCH_HOME``), where a
download would put them; their URLs are on ``.invalid``, a domain that never
resolves, so any attempt to download fails differently.
"""
import os
import shutil

import pytest
import torch
from mmengine.runner import CheckpointLoader

from helpers.checkpoints import CreatesFile
from helpers.configs import VIT_DIGITS_CFG
from helpers.models import tiny
from helpers.tools import load_tool, run_tool
from mmvitdyn.checkpoint import UnsafeCheckpointError
from mmvitdyn.checkpoint.schemes import hub_checkpoint_path
from mmvitdyn.settings import TRUST_ENV

URL = 'https://download.invalid/models/crafted.pth'


@pytest.fixture
def planted(tmp_path, monkeypatch):
    """``URL`` planted in an empty hub cache; returns (the env for tools, the file
    unpickling it would create)."""
    monkeypatch.setenv('TORCH_HOME', str(tmp_path / 'torch_home'))
    monkeypatch.delenv(TRUST_ENV, raising=False)
    path = hub_checkpoint_path(URL)
    os.makedirs(os.path.dirname(path))
    created = tmp_path / 'created'
    torch.save(dict(state_dict=tiny().state_dict(), payload=CreatesFile(created)), path)
    return {'TORCH_HOME': str(tmp_path / 'torch_home'), TRUST_ENV: ''}, created


def test_init_cfg_pretrained_url_is_refused(planted):
    _, created = planted
    with pytest.raises(UnsafeCheckpointError, match='pathlib.Path'):
        tiny(init_cfg=dict(type='Pretrained', checkpoint=URL))
    assert not created.exists()


@pytest.mark.parametrize('tool', ['timm2mmvitdyn.py', 'mmpretrain2mmvitdyn.py', 'dyt2mmvitdyn.py'])
def test_each_converter_given_a_url_refuses_it(planted, tmp_path, capsys, tool):
    _, created = planted
    converter = load_tool(f'model_converters/{tool}')
    with pytest.raises(SystemExit) as exit_info:
        converter.main([URL, str(tmp_path / 'out.pth')])
    assert exit_info.value.code == 2 and f'--trust-checkpoint {URL}' in capsys.readouterr().err
    assert not created.exists() and not (tmp_path / 'out.pth').exists()


def test_a_trusted_url_converts_from_a_fresh_download(planted, tmp_path, monkeypatch):
    _, created = planted
    served = []
    monkeypatch.setattr(
        torch.hub, 'download_url_to_file', lambda url, path, progress:
        (served.append(url), shutil.copyfile(hub_checkpoint_path(URL), path)))
    converter = load_tool('model_converters/timm2mmvitdyn.py')
    converter.main([URL, str(tmp_path / 'out.pth'), '--trust-checkpoint'])
    assert created.exists() and (tmp_path / 'out.pth').is_file() and served == [URL]


def test_test_py_refuses_a_url_checkpoint(planted, data_workspace, tmp_path):
    env, created = planted
    proc = run_tool(['test.py', VIT_DIGITS_CFG, URL, '--work-dir', tmp_path / 'work'],
                    data_workspace,
                    env=env,
                    check=False)
    assert proc.returncode != 0 and 'UnsafeCheckpointError' in proc.stderr, proc.stderr[-3000:]
    assert f'--trust-checkpoint {URL}' in proc.stderr and not created.exists()


@pytest.mark.parametrize('how', ['load_from', 'last_checkpoint'])
def test_train_py_refuses_a_url_as_load_from_or_resume_target(planted, data_workspace, tmp_path,
                                                              how):
    env, created = planted
    work = tmp_path / 'work'
    args = ['train.py', VIT_DIGITS_CFG, '--work-dir', work]
    if how == 'load_from':
        args += ['--cfg-options', f'load_from={URL}']
    else:  # mmengine resumes from what last_checkpoint names, which may be a URL
        work.mkdir()
        (work / 'last_checkpoint').write_text(URL)
        args += ['--resume']
    proc = run_tool(args, data_workspace, env=env, check=False)
    assert proc.returncode != 0 and 'UnsafeCheckpointError' in proc.stderr, proc.stderr[-3000:]
    assert not created.exists()


def test_a_good_url_checkpoint_loads(planted, tmp_path):
    good = 'https://download.invalid/models/good.pth'
    torch.save(dict(state_dict={'w': torch.ones(3)}), hub_checkpoint_path(good))
    assert CheckpointLoader.load_checkpoint(good)['state_dict']['w'].sum() == 3
