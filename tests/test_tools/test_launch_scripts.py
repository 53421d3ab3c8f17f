"""The Slurm and torchrun launch scripts compose the commands OpenMMLab users expect,
with the interpreter of mmvitdyn's environment, from a shell that has none activated."""
import os
import shutil
import stat
import subprocess

import pytest

from helpers.tools import PLAIN_PATH, REPO


def executable(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def fake_command(bin_dir, name):
    """A stand-in for ``name`` that records its arguments, one per line.

    As a python it imports torch (``-c ...`` succeeds) without recording it.
    """
    record = bin_dir / f'{name}.args'
    executable(bin_dir / name, '#!/bin/bash\n[[ "$1" == -c ]] && exit 0\n'
               f'printf "%s\\n" "$@" > "{record}"\n')
    return record


def fake_python_without_torch(path):
    executable(
        path, '#!/bin/bash\n'
        'echo "ModuleNotFoundError: No module named \'torch\'" >&2\nexit 1\n')


def run_script(script, args, env, tools=REPO / 'tools', check=True):
    """Run ``bash <tools>/<script> args`` with only ``env`` (as ``env -i``)."""
    proc = subprocess.run(['/bin/bash', str(tools / script), *args],
                          env={
                              'HOME': os.environ.get('HOME', '/tmp'),
                              'PATH': PLAIN_PATH,
                              **env
                          },
                          capture_output=True,
                          text=True,
                          timeout=60)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_slurm_train(tmp_path):
    recorded = fake_command(tmp_path, 'srun')
    fake_command(tmp_path / 'env/bin', 'python')
    run_script(
        'slurm_train.sh', ['gpu', 'dyt', 'cfg.py', 'work', '--amp'],
        dict(
            PATH=f'{tmp_path}:{PLAIN_PATH}',
            PYTHON=str(tmp_path / 'env/bin/python'),
            GPUS='16',
            GPUS_PER_NODE='8',
            CPUS_PER_TASK='4',
            SRUN_ARGS='--quotatype=auto'))
    args = recorded.read_text().splitlines()
    assert args[:8] == [
        '-p', 'gpu', '--job-name=dyt', '--gres=gpu:8', '--ntasks=16', '--ntasks-per-node=8',
        '--cpus-per-task=4', '--kill-on-bad-exit=1'
    ]
    assert args[8] == '--quotatype=auto'
    assert args[9:11] == [str(tmp_path / 'env/bin/python'), '-u']
    assert args[11].endswith('tools/train.py')
    assert args[12:16] == ['cfg.py', '--work-dir=work', '--launcher=slurm', '--amp']


def test_slurm_test(tmp_path):
    recorded = fake_command(tmp_path, 'srun')
    fake_command(tmp_path / 'env/bin', 'python')
    run_script('slurm_test.sh', ['gpu', 'eval', 'cfg.py', 'model.pth', '--out', 'r.pkl'],
               dict(PATH=f'{tmp_path}:{PLAIN_PATH}', PYTHON=str(tmp_path / 'env/bin/python')))
    args = recorded.read_text().splitlines()
    assert '--ntasks=8' in args and args[args.index('-u') + 1].endswith('tools/test.py')
    assert args[args.index('-u') - 1] == str(tmp_path / 'env/bin/python')
    assert args[-5:] == ['cfg.py', 'model.pth', '--launcher=slurm', '--out', 'r.pkl']


def test_dist_train_multi_node_environment(tmp_path):
    recorded = fake_command(tmp_path, 'python')
    run_script(
        'dist_train.sh', ['cfg.py', '4', '--no-validate'],
        dict(
            PYTHON=str(tmp_path / 'python'),
            NNODES='2',
            NODE_RANK='1',
            PORT='29600',
            MASTER_ADDR='10.0.0.1'))
    args = recorded.read_text().splitlines()
    assert args[:7] == [
        '-m', 'torch.distributed.run', '--nnodes=2', '--node_rank=1', '--master_addr=10.0.0.1',
        '--nproc_per_node=4', '--master_port=29600'
    ]
    assert args[7].endswith('tools/train.py')
    assert args[8:] == ['cfg.py', '--launcher', 'pytorch', '--no-validate']


def test_dist_test_arguments(tmp_path):
    recorded = fake_command(tmp_path, 'python')
    run_script('dist_test.sh', ['cfg.py', 'model.pth', '2'], dict(PYTHON=str(tmp_path / 'python')))
    args = recorded.read_text().splitlines()
    assert '--nproc_per_node=2' in args and '--nnodes=1' in args
    assert args[args.index('--master_port=29500') + 1].endswith('tools/test.py')
    assert args[-4:] == ['cfg.py', 'model.pth', '--launcher', 'pytorch']


@pytest.fixture
def checkout(tmp_path):
    """A copy of the launch scripts in ``<tmp>/repo/tools`` and four fake pythons:
    ``PYTHON``'s, ``MMVITDYN_VENV``'s, the checkout's ``.venv`` and one on PATH."""
    tools = tmp_path / 'repo/tools'
    tools.mkdir(parents=True)
    for script in ('_python.sh', 'dist_train.sh'):
        shutil.copy(REPO / 'tools' / script, tools)
    records = {
        'PYTHON': fake_command(tmp_path / 'explicit', 'python'),
        'MMVITDYN_VENV': fake_command(tmp_path / 'other-venv/bin', 'python'),
        '.venv': fake_command(tmp_path / 'repo/.venv/bin', 'python'),
        'PATH': fake_command(tmp_path / 'active-env/bin', 'python'),
    }
    return tools, records


@pytest.mark.parametrize('given,used', [
    (('PYTHON', 'MMVITDYN_VENV', '.venv', 'PATH'), 'PYTHON'),
    (('MMVITDYN_VENV', '.venv', 'PATH'), 'MMVITDYN_VENV'),
    (('.venv', 'PATH'), '.venv'),
    (('PATH', ), 'PATH'),
])
def test_interpreter_choice(checkout, tmp_path, given, used):
    tools, records = checkout
    if '.venv' not in given:
        shutil.rmtree(tmp_path / 'repo/.venv')
    env = {'PATH': f'{tmp_path}/active-env/bin:{PLAIN_PATH}' if 'PATH' in given else PLAIN_PATH}
    if 'PYTHON' in given:
        env['PYTHON'] = str(tmp_path / 'explicit/python')
    if 'MMVITDYN_VENV' in given:
        env['MMVITDYN_VENV'] = str(tmp_path / 'other-venv')
    run_script('dist_train.sh', ['cfg.py', '2'], env, tools=tools)
    assert [name for name, record in records.items() if record.exists()] == [used]
    assert records[used].read_text().splitlines()[:2] == ['-m', 'torch.distributed.run']


def test_an_interpreter_without_torch_stops_with_how_to_set_up(checkout, tmp_path):
    tools, records = checkout
    shutil.rmtree(tmp_path / 'repo/.venv')
    fake_python_without_torch(tmp_path / 'active-env/bin/python')
    env = dict(PATH=f'{tmp_path}/active-env/bin:{PLAIN_PATH}')
    proc = run_script('dist_train.sh', ['cfg.py', '2'], env, tools=tools, check=False)
    assert proc.returncode == 1
    assert (f"{tmp_path}/active-env/bin/python (from PATH) cannot import torch: "
            "ModuleNotFoundError: No module named 'torch'") in proc.stderr
    assert f'bash {tmp_path}/repo/tools/setup_env.sh' in proc.stderr
    assert not any(record.exists() for record in records.values())


def test_a_missing_project_environment_named_by_mmvitdyn_venv_stops(checkout, tmp_path):
    tools, _ = checkout
    proc = run_script(
        'dist_train.sh', ['cfg.py', '2'],
        dict(MMVITDYN_VENV=str(tmp_path / 'nowhere')),
        tools=tools,
        check=False)
    assert proc.returncode == 1
    assert f'{tmp_path}/nowhere/bin/python (from MMVITDYN_VENV) cannot import torch' in proc.stderr


def test_no_python_at_all_stops_with_how_to_set_up(checkout, tmp_path):
    tools, _ = checkout
    shutil.rmtree(tmp_path / 'repo/.venv')
    bare = tmp_path / 'bare-bin'  # the commands the script needs, and no python
    bare.mkdir()
    for command in ('dirname', 'cat', 'tail'):
        (bare / command).symlink_to(shutil.which(command, path=PLAIN_PATH))
    proc = run_script(
        'dist_train.sh', ['cfg.py', '2'], dict(PATH=str(bare)), tools=tools, check=False)
    assert proc.returncode == 1
    assert '[mmvitdyn] no python on PATH' in proc.stderr and 'setup_env.sh' in proc.stderr
