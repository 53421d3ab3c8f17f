"""tools/sweep.py and tools/collect_results.py: the papers' sweep files dry-run
to existing configs whose options apply; the CPU sweep of docs/sweeps.md runs
as typed, is stopped, reports its cells' states, resumes only what was not
done and its table holds each cell's logged numbers; the Slurm launcher
submits the srun lines its dry run prints."""
import argparse
import csv
import io
import json
import os
import shlex
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from mmengine.config import Config, DictAction

import mmvitdyn.sweeps as sweeps
from helpers.guides import command
from helpers.tools import REPO, load_tool, start_tool
from mmvitdyn.sweeps import CellState

SWEEPS = REPO / 'configs/sweeps'
GUIDE = REPO / 'docs/sweeps.md'
MINI = 'configs/sweeps/dyt_digits-tasks-mini.py'
# Cells per sweep file, counted from the papers' grids.
CELLS = {
    'dyt_vtab1k.py': 19 * 7,
    'dyt_full-data.py': 4 * 4,
    'dyt_token-reduction_cifar100.py': 8,
    'dyt_token-reduction_vtab1k-cifar.py': 8,
    'cluster-learngene_table1_in1k.py': 3 * 5 + 3 + 1,
    'cluster-learngene_table2_downstream.py': 6 * 13,
    'cluster-learngene_r4_levit.py': 5 * 2,
    'dyt_digits-tasks-mini.py': 3 * 2 * 2,
    'dyt_adapters_image-video.py': 3 * 5,
}
# Options that set an argument the config leaves at its default, on purpose.
NEW_KEYS = {
    'dyt_digits-tasks-mini.py': [
        'model.backbone.allow_random_frozen', 'train_dataloader.dataset.indices',
        'val_dataloader.dataset.indices'
    ],
    # AdaMix's switches, which the DyT configs leave at their defaults (a router,
    # no consistency loss).
    'dyt_adapters_image-video.py': [
        'model.backbone.adapter_cfg.mixing', 'model.backbone.vit.adapter_cfg.mixing',
        'model.consistency_loss_weight'
    ]
}


def run_main(tool, argv, capsys) -> str:
    """``tools/<tool>`` run in this process with ``argv``; its standard output."""
    capsys.readouterr()
    try:
        load_tool(tool).main(argv)
    except SystemExit as stop:
        assert stop.code in (0, None), capsys.readouterr()
    return capsys.readouterr().out


def cfg_options(tokens) -> dict:
    """The ``--cfg-options`` of a command line, as tools/train.py parses them."""
    parser = argparse.ArgumentParser()
    parser.add_argument('--cfg-options', nargs='+', action=DictAction, default={})
    return parser.parse_known_args(tokens)[0].cfg_options


def has_key(cfg: Config, key: str) -> bool:
    node = cfg.to_dict()
    for part in key.split('.'):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


@pytest.fixture
def fast_base_lookup(monkeypatch):
    """mmengine resolves each ``mmpretrain::`` base by reading every metafile
    of mmpretrain (about 1 s a config): remember its answers for the test."""
    import mmengine.config.config as config_module
    lookup, answers = config_module._get_external_cfg_path, {}

    def remembered(package_path, cfg_file):
        if (package_path, cfg_file) not in answers:
            try:
                answers[package_path, cfg_file] = lookup(package_path, cfg_file)
            except ValueError as err:
                answers[package_path, cfg_file] = err
        if isinstance(answers[package_path, cfg_file], ValueError):
            raise answers[package_path, cfg_file]
        return answers[package_path, cfg_file]

    monkeypatch.setattr(config_module, '_get_external_cfg_path', remembered)


def test_every_sweep_file_dry_runs_to_configs_whose_options_apply(capsys, monkeypatch,
                                                                  fast_base_lookup):
    monkeypatch.chdir(REPO)
    # Every cell pending: cells this checkout has already run would be
    # skipped, and print no command.
    monkeypatch.setattr(sweeps, 'cell_state', lambda work_dir: CellState('pending', ''))
    assert sorted(p.name for p in SWEEPS.glob('*.py')) == sorted(CELLS)
    loaded = {}
    for name, count in CELLS.items():
        out = run_main('sweep.py', [f'configs/sweeps/{name}', '--dry-run'], capsys)
        lines = [shlex.split(line) for line in out.splitlines() if not line.startswith('#')]
        assert len(lines) == count, name
        work_dirs = [tokens[tokens.index('--work-dir') + 1] for tokens in lines]
        assert len(set(work_dirs)) == count
        assert all(d.startswith(f'work_dirs/sweeps/{Path(name).stem}/') for d in work_dirs)
        for tokens in lines:
            config = next(t for t in tokens if t.startswith('configs/') and t.endswith('.py'))
            assert (REPO / config).is_file(), (name, config)
            options = cfg_options(tokens)
            if options:
                if config not in loaded:
                    loaded[config] = Config.fromfile(config)
                cfg = loaded[config].copy()
                new = [key for key in options if not has_key(cfg, key)]
                allowed = [key for key in NEW_KEYS.get(name, []) if key in options]
                assert sorted(new) == sorted(allowed), (name, config)
                cfg.merge_from_dict(options)
                for key, value in options.items():
                    node = cfg
                    for part in key.split('.'):
                        node = node[part]
                    assert node == value, (name, key)


def states_of(text: str) -> dict:
    """Cell name -> (state, detail) from ``--status`` output."""
    lines = [line.split(None, 2) for line in text.splitlines()[:-1]]
    return {name: (state, rest[0] if rest else '') for name, state, *rest in lines}


def final_validation(work_dir: Path) -> dict:
    """The validation record (no ``iter``) at epoch 2 in the cell's scalars.json files."""
    records = [
        json.loads(line) for path in sorted(work_dir.glob('*/vis_data/scalars.json'))
        for line in path.read_text().splitlines()
    ]
    finals = [r for r in records if 'iter' not in r and r['step'] == 2]
    assert len(finals) == 1, work_dir
    return finals[0]


def test_the_guides_cpu_sweep_stops_resumes_and_collects(tmp_path, capsys, monkeypatch):
    """12 cells, 2 at a time: stopped (SIGTERM) after the first two end, the
    stopped and unstarted cells resume; the table matches every cell's log."""
    (tmp_path / 'configs').symlink_to(REPO / 'configs')
    monkeypatch.chdir(tmp_path)
    gen = load_tool('dataset_converters/_generator_cli.py')
    from mmvitdyn.datasets import generate_digits
    for start in ('--out-dir data/digits-mini ', '--out-dir data/digits-mini-split1',
                  '--out-dir data/digits-mini-16px'):
        tokens = command(GUIDE, f'python tools/dataset_converters/gen_digits.py {start}')
        gen.main(generate_digits, tokens[2:])
    sweep_cmd = command(GUIDE, f'python tools/sweep.py {MINI}')
    proc = start_tool(['sweep.py', *sweep_cmd[2:]], tmp_path, start_new_session=True)
    before = []
    for line in proc.stdout:
        before.append(line.split(':')[0].split(' ', 1))
        if sum(event == '[end]' for event, _ in before) == 2:
            proc.send_signal(signal.SIGTERM)
            break
    rest = proc.stdout.read()
    assert proc.wait(timeout=120) == 130, rest
    after = [line.split(':')[0].split(' ', 1) for line in rest.splitlines() if line[:1] == '[']
    first_done = [cell for event, cell in before if event == '[end]']
    stopped = [
        cell for event, cell in before + after if event == '[start]' and cell not in first_done
    ]
    assert sorted(cell for event, cell in after if event == '[end]') == sorted(stopped), rest
    sweep_dir = tmp_path / 'work_dirs/sweeps/dyt_digits-tasks-mini'

    status = states_of(run_main('sweep.py', [*sweep_cmd[2:], '--status'], capsys))
    assert len(status) == 12
    for cell, (state, detail) in status.items():
        if cell in first_done:
            assert (state, detail) == ('done', 'epoch_2.pth'), cell
            assert (sweep_dir / cell / 'epoch_2.pth').is_file()
        elif cell in stopped:
            assert (state, detail.split(' at ')[0]) == ('failed', 'exit code -15'), cell
        else:
            assert (state, detail) == ('pending', 'not started'), cell
            assert not (sweep_dir / cell).exists()
    unfinished = run_main('collect_results.py', [MINI, '--format', 'csv'], capsys)
    for metric, method, seed, *texts in list(csv.reader(io.StringIO(unfinished)))[1:]:
        for task, text in zip(('digits', 'digits-split1', 'digits-16px'), texts):
            state = status[f'vit-mini_{task}_{method}_{seed}'][0]
            assert state == 'done' or text == state, (metric, method, seed, task, text)

    plan = run_main('sweep.py', [MINI, '--dry-run', '--resume'], capsys).splitlines()
    assert sorted(line.split()[1].rstrip(':') for line in plan
                  if line.startswith('#')) == sorted(first_done)
    assert sum(line.endswith(' --resume') for line in plan) == 10
    stamps = {
        path: path.stat().st_mtime_ns
        for cell in first_done
        for path in (sweep_dir / cell).rglob('*') if path.is_file()
    }
    resume = command(GUIDE, f'python tools/sweep.py {MINI} --resume')
    out = run_main('sweep.py', resume[2:], capsys)
    assert out.startswith('10 of 12 cells to run, 2 at a time'), out
    assert {path: path.stat().st_mtime_ns for path in stamps} == stamps
    status = states_of(run_main('sweep.py', [MINI, '--status'], capsys))
    assert {state for state, _ in status.values()} == {'done'}

    table = run_main('collect_results.py',
                     command(GUIDE, f'python tools/collect_results.py {MINI} --format csv')[2:],
                     capsys)
    rows = list(csv.reader(io.StringIO(table)))
    tasks = rows[0][3:]
    assert rows[0][:3] == ['metric', 'method', 'seed']
    assert tasks == ['digits', 'digits-split1', 'digits-16px']
    checked = 0
    for metric, method, seed, *values in rows[1:]:
        for task, text in zip(tasks, values):
            logged = final_validation(sweep_dir / f'vit-mini_{task}_{method}_{seed}')
            if metric == 'act_rate' and method == 'adaptformer':
                assert 'act_rate' not in logged and text == '-'
            else:
                digits = 3 if metric == 'act_rate' else 2
                assert text == f'{logged[metric]:.{digits}f}', (metric, method, seed, task)
            checked += 1
    assert checked == 2 * 12


def executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_the_slurm_launcher_submits_the_lines_its_dry_run_prints(tmp_path, capsys, monkeypatch):
    config = 'configs/dyt/vit-mini-p4-dyt_1xb32-8e_digits-32px.py'
    sweep = tmp_path / 'slurm_sweep.py'
    sweep.write_text(f'configs = {{"mini": "{config}"}}\n'
                     'axes = dict(seed=dict(s0=["randomness.seed=0"], s1=["randomness.seed=1"]))\n'
                     "launcher = dict(type='slurm', partition='gpu', gpus=4, gpus_per_node=4, "
                     "cpus_per_task=2, srun_args='--qos=high --time=1:00:00', max_parallel=2)\n")
    monkeypatch.chdir(tmp_path)
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    # A python that passes the scripts' "import torch" check at once (the srun line names it).
    python = executable(bin_dir / 'python', '#!/bin/bash\nexit 0\n')
    executable(
        bin_dir / 'srun', '#!/bin/bash\nfor a in "$@"; do case $a in --job-name=*) '
        'job=${a#--job-name=};; esac; done\n'
        f'printf "%s\\n" "$@" > "{tmp_path}/$job.argv"\n')
    monkeypatch.setenv('PATH', f'{bin_dir}{os.pathsep}{os.environ["PATH"]}')
    monkeypatch.setenv('PYTHON', str(python))
    script, train = REPO / 'tools/slurm_train.sh', REPO / 'tools/train.py'
    expected = {}
    for seed in ('s0', 's1'):
        job, work_dir = f'mini_{seed}', f'work_dirs/sweeps/slurm_sweep/mini_{seed}'
        option = f'randomness.seed={seed[1]}'
        expected[job] = (f"GPUS=4 GPUS_PER_NODE=4 CPUS_PER_TASK=2 SRUN_ARGS='--qos=high "
                         f"--time=1:00:00' bash {script} gpu {job} {REPO / config} {work_dir} "
                         f'--cfg-options {option}')
    printed = run_main('sweep.py', [str(sweep), '--dry-run'], capsys).splitlines()
    assert printed == list(expected.values())
    run_main('sweep.py', [str(sweep)], capsys)
    for job in expected:
        submitted = (tmp_path / f'{job}.argv').read_text().splitlines()
        assert submitted == [
            '-p', 'gpu', f'--job-name={job}', '--gres=gpu:4', '--ntasks=4', '--ntasks-per-node=4',
            '--cpus-per-task=2', '--kill-on-bad-exit=1', '--qos=high', '--time=1:00:00',
            str(python), '-u',
            str(train),
            str(REPO / config), f'--work-dir=work_dirs/sweeps/slurm_sweep/{job}',
            '--launcher=slurm', '--cfg-options', f'randomness.seed={job[-1]}'
        ]
    status = states_of(run_main('sweep.py', [str(sweep), '--status'], capsys))
    assert status == {
        job: ('failed', 'exit code 0 at no checkpoint; its output: '
              f'work_dirs/sweeps/slurm_sweep/{job}/sweep.log')
        for job in expected
    }


@pytest.mark.parametrize(
    'text, message',
    [('configs = "configs/vit/*.py"\nlayout = 1\n', "['layout']: unknown fields"),
     ('configs = "configs/none-*.py"\n', "configs='configs/none-*.py': matches no config"),
     ('configs = "configs/vit/vit-mini-p4_1xb32-20e_digits-32px*.py"\n',
      'matches configs/vit/vit-mini-p4_1xb32-20e_digits-32px.py with a * that stands for nothing'),
     ('configs = "configs/vit/*.py"\naxes = dict(method=dict(a="x=1"))\n',
      "axes.method.a='x=1': must be a list of 'key=value' strings"),
     ('configs = dict(a="configs/vit/vit-mini-p4_1xb32-20e_digits-32px.py")\n'
      'axes = dict(method=dict(m=dict(b=["x=1"])))\n',
      "axes.method.m=['b']: per-config options need one list for each config label: ['a']"),
     ('configs = "configs/vit/*.py"\naxes = dict(config=dict(a=[]))\n',
      "axes key='config': ('config', 'match') are the coordinates"),
     ('configs = "configs/vit/*.py"\nlauncher = dict(type="mpi")\n',
      "launcher={'type': 'mpi'}: must be a dict with type one of ['local', 'pytorch', 'slurm']"),
     ('configs = "configs/vit/*.py"\nlauncher = dict(type="local", gpus=2)\n',
      "launcher (local)=['gpus']: unknown fields; allowed: ('type', 'max_parallel')"),
     ('configs = "configs/vit/*.py"\nlauncher = dict(type="slurm")\n',
      "launcher.partition='': the slurm launcher needs a partition"),
     ('configs = "configs/vit/*.py"\ntable = dict(rows=["seed"])\n',
      "table.rows/columns='seed': must be one of the coordinates ['config', 'match']"),
     ('configs = "configs/vit/*.py"\ntable = dict(columns="config", groups=dict(A=["x"]))\n',
      "table.groups.A=['x']: not values of table.columns='config': "
      "['vit-mini-p4_1xb32-20e_digits-32px']")])
def test_a_wrong_sweep_file_is_refused_naming_the_field(tmp_path, text, message):
    from mmvitdyn.sweeps import SweepError, load_sweep
    path = tmp_path / 'bad.py'
    path.write_text(text)
    with pytest.raises(SweepError) as err:
        load_sweep(str(path), str(REPO))
    assert message in str(err.value)


def test_a_held_work_dir_is_running(tmp_path):
    from mmvitdyn.sweeps import cell_state
    from mmvitdyn.utils import WorkDirLock
    with WorkDirLock(str(tmp_path)):
        state = cell_state(str(tmp_path))
        assert state.state == 'running' and state.detail.startswith(f'pid {os.getpid()} on ')
    assert cell_state(str(tmp_path)).state == 'pending'


STOPPED_SWEEP = """
import signal
import sys
from mmvitdyn.sweeps import Cell, Launcher, run_cells
signal.signal(signal.SIGINT, signal.default_int_handler)  # also where the shell ignored it
cells = [Cell(f'c{i}', 'unused.py', {}, (), {}, f'{sys.argv[1]}/c{i}') for i in range(3)]
def report(event, cell, text):
    print(event, cell.name, flush=True)
try:
    run_cells(cells, Launcher(max_parallel=2), lambda cell: (['sleep', '30'], {}), report)
except KeyboardInterrupt:
    print('interrupted', flush=True)
    sys.exit(130)
"""


def test_a_stopped_run_stops_its_cells_and_records_them(tmp_path):
    """An interrupt (Ctrl-C, or SIGTERM in the tool) stops the running cells
    (their process groups), records their exit code and starts no more. The
    sweep runs in a child process that gets a real SIGINT once two cells
    started, whichever thread runs this test and however loaded the machine."""
    from mmvitdyn.sweeps.cell_states import exit_record
    proc = subprocess.Popen(
        [sys.executable, '-c', STOPPED_SWEEP, str(tmp_path)],
        cwd=REPO,
        env={
            **os.environ, 'PYTHONPATH': str(REPO)
        },
        stdout=subprocess.PIPE,
        text=True)
    try:
        started = [proc.stdout.readline().split() for _ in range(2)]
        assert sorted(started) == [['start', 'c0'], ['start', 'c1']]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=25) == 130  # well before the cells' 30 s
    finally:
        proc.kill()
    assert proc.stdout.read().split()[-1] == 'interrupted'
    cells = [tmp_path / f'c{i}' for i in range(3)]
    assert [exit_record(str(cell))['returncode'] for cell in cells[:2]] == [-15, -15]
    assert not cells[2].exists()


def test_work_dirs_are_collected_from_their_newest_evaluation(tmp_path, capsys):
    """A test run's JSON log, ``flops.json`` and a descendant's parameter line
    (as mmengine, get_flops.py and the descendants write them)."""
    old, new = tmp_path / 'run/20260101_000000', tmp_path / 'run/20260102_000000'
    for run, top1 in ((old, 10.0), (new, 71.234)):
        run.mkdir(parents=True)
        (run / f'{run.name}.json').write_text(json.dumps({'accuracy/top1': top1}) + '\n')
    (new / f'{new.name}.log').write_text('LearngeneViT (...): T-Params 11.024M, I-Params '
                                         '10.5M, trainable 11.024M\n')
    (tmp_path / 'run/flops.json').write_text(json.dumps({'flops': 2.3331e9}))
    out = run_main('collect_results.py', [
        '--work-dirs', f'a b=c={tmp_path / "run"}', '--metrics', 'accuracy/top1', 'act_rate',
        'gflops', 't_params', 'i_params', '--format', 'csv'
    ], capsys)
    assert list(csv.reader(io.StringIO(out))) == [
        ['run', 'top-1 (%), final evaluation', 'GFLOPs per image', 'T-Params (M)', 'I-Params (M)'],
        ['a b=c', '71.23', '2.333', '11.024', '10.500'],
    ]


def a_test_run(work_dir: Path, record: dict) -> Path:
    """A work dir holding one test run's JSON log (mmengine writes no newline)."""
    run = work_dir / '20260101_000000'
    run.mkdir(parents=True)
    (run / f'{run.name}.json').write_text(json.dumps(record))
    return work_dir


def refused(tool, argv, capsys) -> str:
    """``tools/<tool>`` run in this process with ``argv``, refused (exit 2); its standard error."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        load_tool(tool).main([str(arg) for arg in argv])
    assert stop.value.code == 2
    return capsys.readouterr().err


def test_markdown_escapes_the_pipes_of_labels(tmp_path, capsys):
    run = a_test_run(tmp_path / 'run', {'accuracy/top1': 71.234})
    out = run_main('collect_results.py', [
        '--work-dirs', f'dyt|r=4={run}', f'a\\|b={run}', '--metrics', 'accuracy/top1', '--format',
        'markdown'
    ], capsys)
    assert out.splitlines() == [
        '### results',
        '',
        '| run | top-1 (%), final evaluation |',
        '| --- | --- |',
        '| dyt\\|r=4 | 71.23 |',
        '| a\\\\\\|b | 71.23 |',
    ]


@pytest.mark.parametrize(
    'metrics, named', [
        (['accuracy/top1', 'nosuch', 'mIoU'], ['nosuch']),
        (['mIoU', 'gflops'], ['mIoU', 'gflops']),
    ],
    ids=['an unknown key', 'known metrics, none logged'])
def test_metrics_no_run_logged_are_refused_naming_those_logged(tmp_path, capsys, metrics, named):
    a_test_run(tmp_path / 'a', {'accuracy/top1': 71.0, 'act_rate': 0.5, 'step': 3})
    a_test_run(tmp_path / 'b', {'accuracy/top5': 90.0, 'step': 3})
    err = refused(
        'collect_results.py',
        ['--work-dirs', f'a={tmp_path / "a"}', f'b={tmp_path / "b"}', '--metrics', *metrics],
        capsys)
    assert (f'--metrics {named} are logged by none of the work dirs; they log: '
            "['accuracy/top1', 'accuracy/top5', 'act_rate']") in err


def test_metrics_default_to_the_known_ones_some_run_logged(tmp_path, capsys):
    a_test_run(tmp_path / 'a', {'accuracy/top1': 71.0, 'act_rate': 0.5, 'step': 3})
    a_test_run(tmp_path / 'b', {'accuracy/top5': 90.0, 'step': 3})
    out = run_main('collect_results.py',
                   ['--work-dirs', f'a={tmp_path / "a"}', f'b={tmp_path / "b"}', '--format', 'csv'],
                   capsys)
    assert out.splitlines() == [
        'run,"top-1 (%), final evaluation",activation rate', 'a,71.00,0.500', 'b,-,-'
    ]


def test_metrics_with_a_sweep_file_are_refused(capsys):
    err = refused('collect_results.py', [MINI, '--metrics', 'accuracy/top1'], capsys)
    assert "--metrics is for --work-dirs: a sweep file's table names its metrics" in err


def test_a_table_cell_of_several_runs_shows_their_mean_and_groups_average_them():
    """Rows without the seed axis: each table cell holds three runs; group
    means and the mean of groups are computed here from the logged values."""
    from mmvitdyn.sweeps import Cell, Launcher, Sweep, Table, build_blocks
    logged = {  # (method, task) -> top-1 of seeds 0, 1, 2
        ('dyt', 'cifar'): (70, 74, 72.5),
        ('dyt', 'dtd'): (60, 61, 65),
        ('dyt', 'svhn'): (90, 80, 85),
        ('vpt', 'cifar'): (50, 50, 53),
        ('vpt', 'dtd'): (40, 41, 42),
        ('vpt', 'svhn'): (10, 20, 33)
    }
    cells, results = [], {}
    for (method, task), values in logged.items():
        for seed, value in enumerate(values):
            name = f'{method}_{task}_s{seed}'
            cells.append(
                Cell(name, 'c.py', dict(method=method, task=task, seed=str(seed)), (), {}, name))
            results[name] = {'accuracy/top1': value}
    table = Table(
        rows=('method', ),
        columns='task',
        groups=dict(natural=('cifar', 'dtd'), structured=('svhn', )))
    sweep = Sweep('s.py', 'w', tuple(cells), Launcher(), table)
    states = {cell.name: CellState('done', '') for cell in cells}
    [block] = build_blocks(sweep, states, results, {})
    assert block.header == ('method', 'cifar', 'dtd', 'svhn', 'natural mean', 'structured mean',
                            'mean of groups')
    for row in block.rows:
        runs = {task: sum(logged[row[0], task]) / 3 for task in ('cifar', 'dtd', 'svhn')}
        natural = (runs['cifar'] + runs['dtd']) / 2
        expected = (*runs.values(), natural, runs['svhn'], (natural + runs['svhn']) / 2)
        assert row[1:] == tuple(f'{value:.2f}' for value in expected)
    assert block.rows[0][:2] == ('dyt', '72.17')


HELD_CELL = """
import sys, time
from mmvitdyn.utils import WorkDirLock
with WorkDirLock(sys.argv[1]):
    print('held', flush=True)
    time.sleep(60)
"""


def test_a_cell_held_by_another_process_gets_no_command_and_keeps_its_records(
        data_workspace, tmp_path, capsys, monkeypatch):
    """Two cells (seeds); another process holds one's work dir: --dry-run
    prints no command for it, and a real run trains only the other."""
    sweep = tmp_path / 'two.py'
    sweep.write_text(
        "configs = {'dyt': 'configs/dyt/vit-mini-p4-dyt_1xb32-8e_digits-32px.py'}\n"
        "axes = dict(seed=dict(s0=['randomness.seed=0'], s1=['randomness.seed=1']))\n"
        "options = ['model.backbone.allow_random_frozen=True', 'train_cfg.max_epochs=1',\n"
        "           'train_cfg.val_interval=1', 'train_dataloader.dataset.indices=16',\n"
        "           'val_dataloader.dataset.indices=16', 'train_dataloader.num_workers=0',\n"
        "           'val_dataloader.num_workers=0', 'param_scheduler=[]']\n"
        f"work_dir = {str(tmp_path / 'work')!r}\n")
    monkeypatch.chdir(data_workspace)
    tool = load_tool('sweep.py')
    held_dir = tmp_path / 'work/dyt_s0'
    held_dir.mkdir(parents=True)
    (held_dir / 'sweep.log').write_text('the holder writes here\n')
    holder = subprocess.Popen(
        [sys.executable, '-c', HELD_CELL, str(held_dir)],
        env={
            **os.environ, 'PYTHONPATH': str(REPO)
        },
        stdout=subprocess.PIPE,
        text=True)
    try:
        assert holder.stdout.readline().strip() == 'held'
        capsys.readouterr()
        tool.main([str(sweep), '--dry-run'])
        commands = [line for line in capsys.readouterr().out.splitlines() if line[:1] != '#']
        assert len(commands) == 1 and str(tmp_path / 'work/dyt_s1') in commands[0]
        tool.main([str(sweep)])
        out = capsys.readouterr().out
        assert '[start] dyt_s1' in out and 'dyt_s0' not in out.replace('dyt_s0: running', '')
        assert (held_dir / 'sweep.log').read_text() == 'the holder writes here\n'
        assert not (held_dir / 'sweep_exit.json').exists()
        assert json.loads((tmp_path / 'work/dyt_s1/sweep_exit.json').read_text())['returncode'] == 0
    finally:
        holder.kill()
        holder.wait()


INTERRUPTED_AT_LAUNCH = """
import sys, threading, time
from mmvitdyn.sweeps import Cell, Launcher, run_cells
cells = [Cell(f'c{i}', 'unused.py', {}, (), {}, f'{sys.argv[1]}/c{i}') for i in range(3)]
started = []
real_start = threading.Thread.start

def start_then_interrupt(self):  # Ctrl-C right after the first cell is launched
    real_start(self)
    while not started:
        time.sleep(0.01)
    raise KeyboardInterrupt

threading.Thread.start = start_then_interrupt
try:
    run_cells(cells, Launcher(max_parallel=2), lambda cell: (['sleep', '30'], {}),
              lambda event, cell, text: started.append(cell.name))
except KeyboardInterrupt:
    sys.exit(130)
"""


def test_an_interrupt_right_after_the_first_launch_stops_and_records_it(tmp_path):
    """The interrupt arrives while the workers are still being started."""
    from mmvitdyn.sweeps.cell_states import exit_record
    proc = subprocess.run([sys.executable, '-c', INTERRUPTED_AT_LAUNCH,
                           str(tmp_path)],
                          cwd=REPO,
                          env={
                              **os.environ, 'PYTHONPATH': str(REPO)
                          },
                          timeout=25)
    assert proc.returncode == 130
    assert exit_record(str(tmp_path / 'c0'))['returncode'] == -15
    assert not (tmp_path / 'c1').exists() and not (tmp_path / 'c2').exists()


def test_a_cell_killed_while_saving_leaves_no_temporary_file(tmp_path):
    """A cell killed in the middle of a checkpoint save (here: it creates the
    save's temporary file, named by host and its own pid, then SIGKILLs itself)
    leaves no ``.epoch_2.pth.tmp-*``; the temporary file of a process still running
    (this one) and the cell's other files stay."""
    from mmvitdyn.sweeps import Cell, Launcher, run_cells
    host = socket.gethostname()
    work_dir = tmp_path / 'c0'
    work_dir.mkdir()
    alive = work_dir / f'.epoch_1.pth.tmp-{host}-{os.getpid()}'
    alive.write_text('a save in progress')
    save = f'touch {work_dir}/epoch_1.pth {work_dir}/.epoch_2.pth.tmp-{host}-$$; kill -9 $$'
    ended = []
    codes = run_cells([Cell('c0', 'unused.py', {},
                            (), {}, str(work_dir))], Launcher(max_parallel=1), lambda cell:
                      (['sh', '-c', save], {}), lambda event, cell, text: ended.append(text)
                      if event == 'end' else None)
    assert codes == {'c0': -9}
    assert sorted(p.name for p in work_dir.iterdir()) == sorted(
        [alive.name, 'epoch_1.pth', 'sweep.log', 'sweep_exit.json'])
    assert 'removed .epoch_2.pth.tmp-' in ended[0]
