"""Every entry point loads torch with OpenMP's passive wait policy and libgomp's short
spin (mmvitdyn/openmp_wait.py): a probe imported at interpreter start records the
policy and the spin count in the environment at the moment a script first imports torch,
and ends the process there (what follows cannot change what torch loaded with)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.tools import REPO

PROBE = '''
import os, sys


class _TorchImportProbe:
    """Write OMP_WAIT_POLICY and GOMP_SPINCOUNT, as they are when torch is first
    imported, to $PROBE_OUT, and exit."""

    def find_spec(self, name, path=None, target=None):
        if name == 'torch':
            sys.meta_path.remove(self)
            with open(os.environ['PROBE_OUT'], 'w') as f:
                f.write(' '.join(os.environ.get(key, '<unset>')
                                 for key in ('OMP_WAIT_POLICY', 'GOMP_SPINCOUNT')))
            os._exit(0)
        return None


sys.meta_path.insert(0, _TorchImportProbe())
'''

ENTRY_POINTS = sorted(
    str(path.relative_to(REPO)) for path in [*REPO.glob('tools/**/*.py'), *REPO.glob('demo/*.py')]
    if not path.name.startswith('_'))
# Scripts that import torch before parsing their arguments: the probe must fire.
LOAD_TORCH_AT_START = [
    'tools/train.py', 'tools/test.py', 'demo/image_demo.py', 'tools/analysis_tools/benchmark.py',
    'tools/deployment/pytorch2onnx.py'
]


def policy_when_torch_loads(script: str, tmp_path: Path, env_policy=None):
    (tmp_path / 'sitecustomize.py').write_text(PROBE)
    out = tmp_path / 'policy.txt'
    env = {k: v for k, v in os.environ.items() if k not in ('OMP_WAIT_POLICY', 'GOMP_SPINCOUNT')}
    env.update(PYTHONPATH=f'{tmp_path}{os.pathsep}{REPO}', PROBE_OUT=str(out))
    if env_policy is not None:
        env['OMP_WAIT_POLICY'] = env_policy
    proc = subprocess.run([sys.executable, script, '--help'],
                          cwd=REPO,
                          env=env,
                          capture_output=True,
                          text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out.read_text() if out.exists() else None


@pytest.mark.parametrize('script', ENTRY_POINTS)
def test_torch_loads_with_the_passive_wait_policy(script, tmp_path):
    policy = policy_when_torch_loads(script, tmp_path)
    if script in LOAD_TORCH_AT_START:
        assert policy is not None, f'{script} --help imported no torch: the probe saw nothing'
    # Spins: libgomp's passive threads otherwise sleep at once, and every parallel region
    # after a short serial op waits for them to wake (docs/benchmarks.md).
    assert policy in (None, 'PASSIVE 3000'), \
        f'{script} loaded torch with OMP_WAIT_POLICY, GOMP_SPINCOUNT = {policy}'


def test_a_policy_the_user_set_is_kept(tmp_path):
    assert policy_when_torch_loads(
        'tools/train.py', tmp_path, env_policy='ACTIVE') == 'ACTIVE <unset>'
