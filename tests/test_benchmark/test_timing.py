"""mmvitdyn.benchmark: interleaved rounds, warm-up, device synchronisation, the
report's rows, table and JSON, and the device / precision options of every benchmark."""
import argparse
import json
import statistics

import pytest
import torch
from torch import nn

from helpers.tools import load_tool
from mmvitdyn.benchmark import report, timing
from mmvitdyn.cli import benchmarks

# Seconds of one call of each function on the fake clock: the first call (a warm-up) is
# slow, so a timed warm-up would show in the samples.
COSTS = {'a': 1.0, 'b': 2.0, 'c': 4.0}
FIRST_CALL = 100.0


class FakeClock:
    """perf_counter / process_time that only move when a function 'runs'; the CPU clock
    runs at half the wall clock's speed. Every event goes to ``log``."""

    def __init__(self):
        self.now, self.log, self.called = 0.0, [], set()

    def wall(self):
        self.log.append('clock')
        return self.now

    def cpu(self):
        return self.now / 2

    def function(self, name):

        def run():
            self.log.append(name)
            self.now += COSTS[name] if name in self.called else FIRST_CALL
            self.called.add(name)

        return run


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(timing, 'perf_counter', fake.wall)
    monkeypatch.setattr(timing, 'process_time', fake.cpu)
    return fake


def test_rounds_interleave_with_a_rotating_order_after_untimed_warm_up(clock):
    fns = {name: clock.function(name) for name in COSTS}
    samples = timing.time_interleaved(fns, runs=4, device=torch.device('cpu'))
    calls = [event for event in clock.log if event != 'clock']
    # Warm-up a, b, c; then round r starts with function r mod 3.
    assert calls == ['a', 'b', 'c'] + ['a', 'b', 'c'] + ['b', 'c', 'a'] + ['c', 'a', 'b'] + \
        ['a', 'b', 'c']
    for name, cost in COSTS.items():  # the 100 s warm-up calls are in no sample
        assert samples[name].tolist() == [[cost, cost / 2]] * 4


def test_min_time_repeats_calls_within_a_sample_and_reports_seconds_per_call(clock):
    fns = {name: clock.function(name) for name in COSTS}
    samples = timing.time_interleaved(fns, runs=2, device=torch.device('cpu'), min_time=2.5)
    calls = [event for event in clock.log if event != 'clock']
    # Warm-up call, one probe call, then per round ceil(2.5 / cost) calls: 3, 2 and 1.
    assert [calls.count(name) for name in COSTS] == [1 + 1 + 3 * 2, 1 + 1 + 2 * 2, 1 + 1 + 1 * 2]
    assert calls[6:12] == ['a'] * 3 + ['b'] * 2 + ['c']
    for name, cost in COSTS.items():
        assert samples[name].tolist() == [[cost, cost / 2]] * 2


def test_cuda_work_is_waited_for_around_every_timed_region(clock, monkeypatch):
    device = torch.device('cuda', 1)
    synced = []

    def synchronize(dev):
        synced.append(dev)
        clock.log.append('sync')

    monkeypatch.setattr(torch.cuda, 'synchronize', synchronize)
    fns = {name: clock.function(name) for name in ('a', 'b')}
    timing.time_interleaved(fns, runs=2, device=device)
    timed = clock.log[2:]  # after the warm-up calls a, b
    region = ['sync', 'clock', '{}', 'sync', 'clock']
    expected = [e.format(name) for name in ('a', 'b', 'b', 'a') for e in region]
    assert clock.log[:2] == ['a', 'b'] and timed == expected
    assert synced == [device] * 8
    synced.clear()
    timing.time_interleaved(fns, runs=2, device=torch.device('cpu'))
    assert synced == []  # nothing to wait for on the CPU


def test_comparison_rows_by_hand():
    # Seconds per call of 4 rounds; batch 4. Dense: 4 / s = 4, 2, 1, 0.5 images/s.
    samples = {
        'dense': torch.tensor([[1., 2.], [2., 4.], [4., 8.], [8., 8.]], dtype=torch.float64),
        'DyT': torch.tensor([[.5, 1.], [1., 4.], [4., 4.], [2., 16.]], dtype=torch.float64),
    }
    rows = timing.comparison_rows(samples, 'dense', 4, torch.device('cpu'), 'bf16',
                                  dict(dense=10e9, DyT=4e9))
    dense, dyt = rows
    assert [r['model'] for r in rows] == ['dense', 'DyT']
    assert dyt['batch_size'] == 4 and dyt['device'] == 'cpu' and dyt['dtype'] == 'bf16'
    dense_ips, dyt_ips = [4, 2, 1, .5], [8, 4, 1, 2]
    assert dense['images_per_s']['median'] == statistics.median(dense_ips) == 1.5
    assert dyt['images_per_s']['median'] == statistics.median(dyt_ips) == 3.0
    assert (dyt['images_per_s']['min'], dyt['images_per_s']['max']) == (1, 8)
    # quartiles by linear interpolation between the sorted values 1, 2, 4, 8
    assert (dyt['images_per_s']['q1'], dyt['images_per_s']['q3']) == (1.75, 5.0)
    # the speed-up is the ratio of the two medians shown: 3 / 1.5
    assert dyt['speedup'] == 2.0 and dense['speedup'] == 1.0
    dense_cpu, dyt_cpu = statistics.median([2, 1, .5, .5]), statistics.median([4, 1, 1, .25])
    assert (dense['cpu_images_per_s']['median'], dyt['cpu_images_per_s']['median']) == (.75, 1.0)
    # (the median of the per-round CPU ratios 2, 1, 2, .5 would be 1.5)
    assert dyt['cpu_speedup'] == dyt_cpu / dense_cpu == 4 / 3
    assert (dyt['gflops'], dyt['flop_ratio']) == (4.0, 2.5)
    assert dyt['speedup_per_flop_ratio'] == 2.0 / 2.5
    assert dyt['cpu_speedup_per_flop_ratio'] == (4 / 3) / 2.5
    cuda = timing.comparison_rows(samples, 'dense', 4, torch.device('cuda'), None)
    assert cuda[1]['dtype'] == 'fp32' and 'cpu_speedup' not in cuda[1] and 'gflops' not in cuda[1]


def test_report_round_trip_and_table(tmp_path):
    rows = [
        dict(model='dense', batch_size=16, images_per_s=dict(median=1.5, q1=1.25, q3=2.0)),
        dict(
            model='mlp @ 0.5',
            batch_size=1,
            images_per_s=dict(median=12.25, q1=11.0, q3=13.5),
            gflops=None,
            act_rate=0.5),
    ]
    out = tmp_path / 'rows.json'
    settings = dict(device=torch.device('cpu'), runs=3, batch_sizes=[16, 1], amp=None)
    report.write_report(str(out), 'benchmark.py', settings, rows, torch.device('cpu'))
    written = json.loads(out.read_text())
    assert written['rows'] == rows and written['tool'] == 'benchmark.py'
    assert written['settings'] == dict(settings, device='cpu')
    assert written['machine']['torch'] == torch.__version__
    assert written['machine']['threads'] == torch.get_num_threads()
    table = report.format_table(written['rows'], [
        ('batch', 'batch_size', 'd'),
        ('model', 'model', 's'),
        ('img/s', 'images_per_s.median', '.2f'),
        ('q1-q3', report.iqr('images_per_s', '.1f'), 's'),
        ('act.', 'act_rate', '.2f'),
        ('GFLOPs', 'gflops', '.3f'),
    ])
    assert table.splitlines() == [
        'batch model     img/s q1-q3     act. GFLOPs',
        '-------------------------------------------',
        '   16 dense      1.50 1.2-2.0      -      -',
        '    1 mlp @ 0.5 12.25 11.0-13.5 0.50      -',
    ]


def test_autocast_and_device_checks(monkeypatch):
    cpu, linear = torch.device('cpu'), nn.Linear(3, 2)
    with timing.amp_context(cpu, 'bf16'):
        assert linear(torch.randn(4, 3)).dtype == torch.bfloat16
    with timing.amp_context(cpu, None):
        assert linear(torch.randn(4, 3)).dtype == torch.float32
    with pytest.raises(
            ValueError,
            match=r"amp='fp16' is not available on the CPU .* use "
            r"amp='bf16', or a CUDA device"):
        timing.amp_context(cpu, 'fp16')
    with pytest.raises(ValueError, match=r"amp='fp8' must be one of \['bf16', 'fp16'\] or None"):
        timing.amp_context(cpu, 'fp8')
    assert timing.resolve_device('cpu') == cpu
    with pytest.raises(ValueError, match=r"device='tpu' must be 'cpu', 'cuda' or 'cuda:N'"):
        timing.resolve_device('tpu')
    monkeypatch.setattr(torch.cuda, 'is_available', lambda: False)
    with pytest.raises(ValueError, match=r"device='cuda:0' needs CUDA, .* use device='cpu'"):
        timing.resolve_device('cuda:0')
    monkeypatch.setattr(torch.cuda, 'is_available', lambda: True)
    monkeypatch.setattr(torch.cuda, 'device_count', lambda: 2)
    assert timing.resolve_device('cuda:1') == torch.device('cuda', 1)
    with pytest.raises(
            ValueError,
            match=r"device='cuda:2': this machine has 2 CUDA device\(s\), "
            r"'cuda:0' to 'cuda:1'"):
        timing.resolve_device('cuda:2')


TOOLS = [
    'analysis_tools/benchmark.py', 'analysis_tools/benchmark_dense.py',
    'analysis_tools/benchmark_train.py', 'learngene/benchmark_learngene.py'
]


@pytest.mark.parametrize('tool', TOOLS)
@pytest.mark.parametrize('options, message', [
    (['--device', 'cuda'], "device='cuda' needs CUDA"),
    (['--device', 'cpu', '--amp', 'fp16'], "amp='fp16' is not available on the CPU"),
    (['--batch-sizes', '4', '0'], '--batch-sizes 4 0: each must be >= 1'),
])
def test_every_benchmark_takes_the_timing_options(tool, options, message, monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, 'is_available', lambda: False)
    with pytest.raises(SystemExit) as exit_info:
        load_tool(tool).parse_args(options)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_parsed_options():
    parser = argparse.ArgumentParser()
    for flag, options in benchmarks.timing_options(batch_sizes=[16, 1], runs=5):
        parser.add_argument(flag, **options)
    args = parser.parse_args(['--device', 'cpu', '--amp', 'bf16', '--json', 'out.json'])
    args.device = benchmarks.check_timing_options(args.device, args.amp, args.batch_sizes,
                                                  args.runs)
    assert (args.device, args.amp, args.batch_sizes, args.runs, args.json) == \
        (torch.device('cpu'), 'bf16', [16, 1], 5, 'out.json')
