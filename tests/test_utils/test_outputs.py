"""No tool writes over its own input, none leaves a half-written output, and
every record the tools read back names its file when it is damaged."""
import errno
import io
import json
import os
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from helpers.configs import VIT_DIGITS_CFG
from helpers.models import tiny
from helpers.tools import REPO, load_tool
from mmvitdyn.sweeps import cell_state

MINI_SWEEP = REPO / 'configs/sweeps/dyt_digits-tasks-mini.py'


def run_refused(tool: str, argv, capsys) -> str:
    """Run ``tools/<tool>``'s main, expect exit status 2; its standard error."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        load_tool(tool).main([str(arg) for arg in argv])
    assert stop.value.code == 2
    return capsys.readouterr().err


@pytest.fixture
def vit_checkpoint(tmp_path) -> Path:
    torch.save(dict(model=tiny().state_dict()), tmp_path / 'vit.pth')
    return tmp_path / 'vit.pth'


def refusal_keeps(paths, run) -> None:
    """``run()`` is refused and every file of ``paths`` keeps its bytes."""
    before = {path: Path(path).read_bytes() for path in paths}
    message = run()
    assert 'is the input' in message and 'choose another output path' in message
    assert {path: Path(path).read_bytes() for path in paths} == before


@pytest.mark.parametrize('through', ['same name', 'hard link'])
def test_a_converter_refuses_to_write_over_its_source(vit_checkpoint, capsys, through):
    out = vit_checkpoint
    if through == 'hard link':
        out = vit_checkpoint.with_name('linked.pth')
        os.link(vit_checkpoint, out)
    refusal_keeps(
        [vit_checkpoint],
        lambda: run_refused('model_converters/timm2mmvitdyn.py', [vit_checkpoint, out], capsys))


def test_export_and_flop_tools_refuse_their_inputs_as_output(vit_checkpoint, tmp_path, capsys):
    config = tmp_path / 'vit.py'
    config.write_text(f'_base_ = {str(VIT_DIGITS_CFG)!r}\n')
    for tool, argv in [
        ('deployment/pytorch2onnx.py', [config, vit_checkpoint, vit_checkpoint]),
        ('deployment/pytorch2onnx.py', [config, vit_checkpoint, config]),
        ('analysis_tools/get_flops.py', [config, '--out', config]),
        ('learngene/build_learngene.py', [config, vit_checkpoint, '--out', vit_checkpoint]),
        ('learngene/materialize_descendant.py', [config, vit_checkpoint, '--out', config]),
    ]:
        refusal_keeps([config, vit_checkpoint], lambda: run_refused(tool, argv, capsys))


def test_collect_results_refuses_the_sweep_file_as_output(tmp_path, capsys):
    sweep = tmp_path / 'sweep.py'
    shutil.copy(MINI_SWEEP, sweep)
    refusal_keeps([sweep],
                  lambda: run_refused('collect_results.py', [sweep, '--out', sweep], capsys))


def test_collect_results_on_a_full_disk_keeps_the_old_table(tmp_path, capsys, monkeypatch):
    (tmp_path / 'table.md').write_text('the good table\n')
    real_write = Path.write_text

    def full_disk(self, text, *args, **kwargs):  # 10 bytes fit, then ENOSPC
        real_write(self, text[:10], *args, **kwargs)
        raise OSError(errno.ENOSPC, 'No space left on device')

    monkeypatch.setattr(Path, 'write_text', full_disk)
    with pytest.raises(OSError, match='No space left'):
        load_tool('collect_results.py').main([str(MINI_SWEEP), '--out', str(tmp_path / 'table.md')])
    monkeypatch.undo()
    assert (tmp_path / 'table.md').read_text() == 'the good table\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ['table.md']


def a_done_run(work_dir: Path) -> Path:
    """A work dir with one finished 2-epoch run, as mmengine leaves it."""
    run = work_dir / '20260101_000000'
    (run / 'vis_data').mkdir(parents=True)
    (run / 'vis_data/config.py').write_text(
        "train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=2, val_interval=2)\n"
        "val_dataloader = dict(batch_size=8)\nval_cfg = dict()\n")
    (run / 'vis_data/scalars.json').write_text(
        json.dumps({
            'loss': 1.5,
            'iter': 1,
            'step': 1
        }) + '\n' + json.dumps({
            'accuracy/top1': 71.0,
            'step': 2
        }) + '\n')
    (work_dir / 'last_checkpoint').write_text(str(work_dir / 'epoch_2.pth'))
    return run


@pytest.mark.parametrize('damage, named', [
    ('scalars.json line edited', 'vis_data/scalars.json is damaged: line 1 is not JSON'),
    ('config.py cut', 'vis_data/config.py is not a config dumped as plain data'),
    ('empty exit record', 'sweep_exit.json is damaged: its record is not JSON'),
])
def test_a_damaged_record_makes_the_cell_failed_naming_the_file(tmp_path, damage, named):
    work = tmp_path / 'cell'
    run = a_done_run(work)
    assert cell_state(str(work)).state == 'done'
    if damage == 'scalars.json line edited':
        text = (run / 'vis_data/scalars.json').read_text()
        (run / 'vis_data/scalars.json').write_text('x' + text[1:])
    elif damage == 'config.py cut':
        text = (run / 'vis_data/config.py').read_text()
        (run / 'vis_data/config.py').write_text(text[:30])
    else:
        (work / 'last_checkpoint').unlink()
        (work / 'sweep_exit.json').write_text('')
    state = cell_state(str(work))
    assert state.state == 'failed' and named in state.detail
    assert 'run the cell again' in state.detail


def test_a_run_killed_while_logging_has_its_cut_record_passed_over(tmp_path):
    """The final validation line cut short (no newline): not done, not damaged."""
    work = tmp_path / 'cell'
    run = a_done_run(work)
    text = (run / 'vis_data/scalars.json').read_text()
    (run / 'vis_data/scalars.json').write_text(text[:-12])
    state = cell_state(str(work))
    assert (state.state, state.detail) == ('failed',
                                           'stopped at epoch_2.pth, final validation not logged')


def test_a_dumped_config_that_is_not_all_plain_data_still_gives_the_final_step(tmp_path):
    work = tmp_path / 'cell'
    run = a_done_run(work)
    text = (run / 'vis_data/config.py').read_text()
    (run / 'vis_data/config.py').write_text('max_norm = inf\n' + text)  # --cfg-options x=inf
    assert cell_state(str(work)).state == 'done'


@pytest.mark.parametrize('flops, named', [({}, 'flops=None'), ({'flops': 'many'}, "flops='many'")])
def test_collect_results_names_a_damaged_flops_record(tmp_path, capsys, flops, named):
    a_done_run(tmp_path / 'run')
    (tmp_path / 'run/flops.json').write_text(json.dumps(flops))
    err = run_refused('collect_results.py', ['--work-dirs', f'a={tmp_path / "run"}'], capsys)
    assert f'{tmp_path / "run/flops.json"} has {named}' in err


def test_collect_results_names_a_flops_record_that_is_not_text(tmp_path, capsys):
    a_done_run(tmp_path / 'run')
    (tmp_path / 'run/flops.json').write_bytes(b'\x89PNG\r\n\x1a\n\x00\xff')
    err = run_refused('collect_results.py', ['--work-dirs', f'a={tmp_path / "run"}'], capsys)
    assert f'{tmp_path / "run/flops.json"} is damaged: it is not UTF-8 text' in err


def test_collect_results_refuses_missing_work_dirs_and_repeated_labels(tmp_path, capsys):
    a_done_run(tmp_path / 'run')
    err = run_refused('collect_results.py', ['--work-dirs', f'a={tmp_path / "none"}'], capsys)
    assert f"work dirs ['a={tmp_path / 'none'}'] do not exist" in err
    err = run_refused('collect_results.py',
                      ['--work-dirs', f'a={tmp_path / "run"}', f'a={tmp_path / "run"}'], capsys)
    assert "labels ['a'] are given more than once" in err


def collect(argv, capsys):
    """``tools/collect_results.py``'s main run with ``argv``: (stdout, stderr);
    it must end without an error."""
    capsys.readouterr()
    load_tool('collect_results.py').main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return captured.out, captured.err


@pytest.mark.parametrize('output', ['vis_data/scalars.json', 'flops.json', 'run log'])
def test_collect_results_refuses_a_file_of_its_work_dirs_as_output(tmp_path, capsys, output):
    run = a_done_run(tmp_path / 'run')
    (tmp_path / 'run/flops.json').write_text(json.dumps({'flops': 2e9}))
    (run / f'{run.name}.log').write_text('T-Params 1.5M, I-Params 1.0M\n')
    out = {
        'vis_data/scalars.json': run / 'vis_data/scalars.json',
        'flops.json': tmp_path / 'run/flops.json',
        'run log': run / f'{run.name}.log'
    }[output]
    refusal_keeps([out], lambda: run_refused(
        'collect_results.py', ['--work-dirs', f'a={tmp_path / "run"}', '--out', out], capsys))


def test_collect_results_refuses_a_cells_record_as_output(tmp_path, capsys):
    from mmvitdyn.sweeps import load_sweep
    sweep = tmp_path / 'sweep.py'
    sweep.write_text(MINI_SWEEP.read_text() + f'work_dir = {str(tmp_path / "cells")!r}\n')
    cell = load_sweep(str(sweep), str(REPO)).cells[0]
    run = a_done_run(Path(cell.work_dir))
    scalars = run / 'vis_data/scalars.json'
    refusal_keeps([scalars],
                  lambda: run_refused('collect_results.py', [sweep, '--out', scalars], capsys))


VALIDATION = json.dumps({'accuracy/top1': 71.0, 'step': 2}).encode()


@pytest.mark.parametrize(
    'content, line', [
        (VALIDATION + b'\n\x89PNG\r\n\x1a\n\x00\xff\xfe\n' + VALIDATION + b'\n', 2),
        (b'\x00\xff\xfe\x89 not text, no newline', 1),
    ],
    ids=['garbage after a record', 'garbage, no newline'])
def test_collect_results_names_a_scalars_json_that_is_not_json_lines(tmp_path, capsys, content,
                                                                     line):
    run = a_done_run(tmp_path / 'run')
    (run / 'vis_data/scalars.json').write_bytes(content)
    err = run_refused('collect_results.py', ['--work-dirs', f'a={tmp_path / "run"}'], capsys)
    assert f'{run / "vis_data/scalars.json"} is damaged: line {line} is not UTF-8 text' in err
    assert 'expected JSON lines' in err and 'as mmengine writes them' in err


@pytest.mark.parametrize(
    'records, said', [
        (b'', 'holds no records'),
        (json.dumps({
            'loss': 1.5,
            'iter': 1,
            'step': 1
        }).encode() + b'\n', 'holds 1 training record and no validation or test record'),
    ],
    ids=['empty', 'training records only'])
def test_collect_results_names_a_work_dir_with_no_evaluation(tmp_path, capsys, records, said):
    run = a_done_run(tmp_path / 'run')
    (run / 'vis_data/scalars.json').write_bytes(records)
    err = run_refused('collect_results.py', ['--work-dirs', f'a={tmp_path / "run"}'], capsys)
    assert f'{run / "vis_data/scalars.json"} {said}' in err
    assert f'a={tmp_path / "run"}' in err


def test_collect_results_names_a_work_dir_without_runs(tmp_path, capsys):
    (tmp_path / 'run').mkdir()
    err = run_refused('collect_results.py', ['--work-dirs', f'a={tmp_path / "run"}'], capsys)
    assert f'work dir a={tmp_path / "run"} holds no run folder' in err


def test_collect_results_warns_of_a_last_line_cut_and_uses_the_records_before(tmp_path, capsys):
    """A run killed while logging its last record: the complete records count,
    the cut line is named."""
    run = a_done_run(tmp_path / 'run')
    scalars = run / 'vis_data/scalars.json'
    with open(scalars, 'a') as f:
        f.write('{"accuracy/top1": 75.0, "st')
    out, err = collect(['--work-dirs', f'a={tmp_path / "run"}', '--format', 'csv'], capsys)
    assert out.splitlines()[1:] == ['a,71.00']
    assert f'warning: {scalars}: line 3 is cut short' in err


def test_collect_results_of_a_sweep_warns_of_a_done_cells_cut_line(tmp_path, capsys):
    from mmvitdyn.sweeps import load_sweep
    sweep = tmp_path / 'sweep.py'
    sweep.write_text(MINI_SWEEP.read_text() + f'work_dir = {str(tmp_path / "cells")!r}\n')
    cell = load_sweep(str(sweep), str(REPO)).cells[0]
    scalars = a_done_run(Path(cell.work_dir)) / 'vis_data/scalars.json'
    with open(scalars, 'a') as f:
        f.write('{"loss": 0.5, "it')
    out, err = collect([sweep, '--format', 'csv'], capsys)
    assert f'warning: {scalars}: line 3 is cut short' in err
    assert '71.00' in out


def test_collect_results_names_a_malformed_line_that_is_not_the_last(tmp_path, capsys):
    run = a_done_run(tmp_path / 'run')
    scalars = run / 'vis_data/scalars.json'
    lines = scalars.read_text().splitlines()
    scalars.write_text('\n'.join([lines[0], '{"accuracy/top1": 75.0, "st', lines[1]]) + '\n')
    err = run_refused('collect_results.py', ['--work-dirs', f'a={tmp_path / "run"}'], capsys)
    assert f'{scalars} is damaged: line 2 is not JSON' in err


def npz_of(records: dict) -> bytes:
    """An .npz archive of ``name -> .npy bytes`` records."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, 'w') as archive:
        for name, data in records.items():
            archive.writestr(f'{name}.npy', data)
    return out.getvalue()


def npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


@pytest.mark.parametrize('case, named', [
    ('80 GB declared', 'declares shape (10000000000, 2) of float32 (80000000000 bytes) but'),
    ('short array', 'declares shape (4,) of float32 (16 bytes) but the file holds 12'),
    ('object array', 'has dtype object; only numeric arrays'),
])
def test_npz_arrays_are_checked_naming_file_and_array(tmp_path, case, named):
    from mmvitdyn.checkpoint import UnsafeCheckpointError, load_state_dict_file
    records = {
        '80 GB declared':
        npy(np.zeros((10, 2), 'f4')).replace(b'(10, 2), }' + b' ' * 9, b'(10000000000, 2), }'),
        'short array':
        npy(np.zeros(4, 'f4'))[:-4],
        'object array':
        npy(np.array([None, 1], dtype=object)),
    }
    (tmp_path / 'vit.npz').write_bytes(npz_of(dict(w=records[case])))
    with pytest.raises(UnsafeCheckpointError) as err:
        load_state_dict_file(str(tmp_path / 'vit.npz'))
    assert f"checkpoint {tmp_path / 'vit.npz'} is refused: its array 'w'" in str(err.value)
    assert named in str(err.value)
