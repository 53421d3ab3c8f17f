"""The Slurm and torchrun launch scripts compose the commands OpenMMLab users expect."""
import os
import stat
import subprocess

from helpers.tools import REPO


def fake_command(bin_dir, name):
    """A stand-in for ``name`` that records its arguments, one per line."""
    path = bin_dir / name
    path.write_text(f'#!/usr/bin/env bash\nprintf "%s\\n" "$@" > "{bin_dir}/{name}.args"\n')
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return bin_dir / f'{name}.args'


def run_script(script, args, tmp_path, **env):
    full_env = {**os.environ, 'PATH': f'{tmp_path}:{os.environ["PATH"]}', **env}
    subprocess.run(['bash', str(REPO / 'tools' / script), *args], env=full_env, check=True,
                   capture_output=True, text=True)


def test_slurm_train(tmp_path):
    recorded = fake_command(tmp_path, 'srun')
    run_script('slurm_train.sh', ['gpu', 'dyt', 'cfg.py', 'work', '--amp'], tmp_path,
               GPUS='16', GPUS_PER_NODE='8', CPUS_PER_TASK='4', SRUN_ARGS='--quotatype=auto')
    args = recorded.read_text().splitlines()
    assert args[:8] == ['-p', 'gpu', '--job-name=dyt', '--gres=gpu:8', '--ntasks=16',
                        '--ntasks-per-node=8', '--cpus-per-task=4', '--kill-on-bad-exit=1']
    assert args[8] == '--quotatype=auto'
    assert args[9:11] == ['python', '-u'] and args[11].endswith('tools/train.py')
    assert args[12:16] == ['cfg.py', '--work-dir=work', '--launcher=slurm', '--amp']


def test_slurm_test(tmp_path):
    recorded = fake_command(tmp_path, 'srun')
    run_script('slurm_test.sh', ['gpu', 'eval', 'cfg.py', 'model.pth', '--out', 'r.pkl'], tmp_path)
    args = recorded.read_text().splitlines()
    assert '--ntasks=8' in args and args[args.index('-u') + 1].endswith('tools/test.py')
    assert args[-5:] == ['cfg.py', 'model.pth', '--launcher=slurm', '--out', 'r.pkl']


def test_dist_train_multi_node_environment(tmp_path):
    recorded = fake_command(tmp_path, 'python')
    run_script('dist_train.sh', ['cfg.py', '4', '--no-validate'], tmp_path,
               NNODES='2', NODE_RANK='1', PORT='29600', MASTER_ADDR='10.0.0.1')
    args = recorded.read_text().splitlines()
    assert args[:7] == ['-m', 'torch.distributed.run', '--nnodes=2', '--node_rank=1',
                        '--master_addr=10.0.0.1', '--nproc_per_node=4', '--master_port=29600']
    assert args[7].endswith('tools/train.py')
    assert args[8:] == ['cfg.py', '--launcher', 'pytorch', '--no-validate']


def test_dist_test_arguments(tmp_path):
    recorded = fake_command(tmp_path, 'python')
    run_script('dist_test.sh', ['cfg.py', 'model.pth', '2'], tmp_path)
    args = recorded.read_text().splitlines()
    assert '--nproc_per_node=2' in args and '--nnodes=1' in args
    assert args[args.index('--master_port=29500') + 1].endswith('tools/test.py')
    assert args[-4:] == ['cfg.py', 'model.pth', '--launcher', 'pytorch']
