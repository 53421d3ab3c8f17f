"""An unsupported torch, mmcv or mmengine stops ``import mmvitdyn`` with one clear message."""
import subprocess
import sys

import pytest

from helpers.tools import REPO
from mmvitdyn.version_check import check_versions, installed_versions, unsupported_message

TESTED = {'torch': '2.14.1+cpu', 'mmcv': '2.1.0', 'mmengine': '0.10.7'}


@pytest.mark.parametrize(
    'name,version',
    [
        ('torch', '2.1.0'),
        ('torch', '2.1.0a0+git4136153'),  # NVIDIA container builds count as their release
        ('torch', '2.6.0'),
        ('torch', '2.16.0.dev20260101+cpu'),  # a nightly
        ('mmcv', '2.0.0'),
        ('mmcv', '2.1.0'),
        ('mmengine', '0.8.3'),
        ('mmengine', '0.10.7'),
    ])
def test_supported_versions_pass(name, version):
    assert unsupported_message({**TESTED, name: version}) is None


@pytest.mark.parametrize('name,version,supported', [
    ('torch', '2.0.1', 'torch>=2.1'),
    ('torch', '1.13.1+cu117', 'torch>=2.1'),
    ('mmcv', '1.7.2', 'mmcv>=2.0.0,<2.2.0'),
    ('mmcv', '2.2.0', 'mmcv>=2.0.0,<2.2.0'),
    ('mmengine', '0.7.4', 'mmengine>=0.8.3,<1.0.0'),
    ('mmengine', '1.0.0', 'mmengine>=0.8.3,<1.0.0'),
])
def test_unsupported_version_names_installed_and_supported(name, version, supported):
    with pytest.raises(ImportError) as info:
        check_versions({**TESTED, name: version})
    message = str(info.value)
    assert f'{name} {version} is installed (supported: {supported})' in message, message
    assert message.count('is installed') == 1
    assert 'bash tools/setup_env.sh' in message


def test_all_problems_in_one_message():
    message = unsupported_message({'torch': '2.0.0', 'mmcv': None, 'mmengine': '0.10.7'})
    assert 'torch 2.0.0 is installed' in message
    assert 'mmcv is not installed' in message
    assert 'mmengine' not in message.split('. Install')[0]


def test_this_environment_is_supported():
    import mmcv
    import mmengine
    import torch
    versions = installed_versions()
    assert versions == {
        'torch': torch.__version__,
        'mmcv': mmcv.__version__,
        'mmengine': mmengine.__version__
    }
    check_versions()


def test_import_stops_before_any_module_is_built():
    """A real import with mmcv reporting 2.2.0: the message, not a traceback from deep inside."""
    code = "import mmcv; mmcv.__version__ = '2.2.0'; import mmvitdyn"
    proc = subprocess.run([sys.executable, '-c', code],
                          cwd=REPO,
                          capture_output=True,
                          text=True,
                          timeout=300)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith('ImportError: mmvitdyn ') and 'mmcv 2.2.0 is installed' in last, \
        proc.stderr[-2000:]
    assert 'mmvitdyn/version_check.py' in proc.stderr and 'mmvitdyn/models' not in proc.stderr
