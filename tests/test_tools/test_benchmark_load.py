"""tools/analysis_tools/benchmark_load.py times the demo's step alone and beside a
competing process, in fresh processes under the policy it names."""
import json

import pytest

from helpers.tools import REPO, load_tool, run_tool


def test_rows_give_the_busy_step_over_the_idle_step(tmp_path):
    out = tmp_path / 'load.json'
    proc = run_tool([
        'analysis_tools/benchmark_load.py', '--policies', 'PASSIVE', '--steps', '2', '--json', out
    ],
                    cwd=REPO)
    report = json.loads(out.read_text())
    idle, busy = report['rows']
    assert (idle['policy'], idle['competitor']) == ('PASSIVE', 'none')
    assert (busy['policy'], busy['competitor']) == ('PASSIVE', 'the same step')
    # One definition of the ratio, printed as written: the quotient of the medians.
    assert abs(busy['vs_idle'] - busy['step_ms']['median'] / idle['step_ms']['median']) < 1e-9
    for row in (idle, busy):
        step = row['step_ms']
        assert step['min'] <= step['median'] <= step['max'] and step['min'] > 0
    printed = [line.split() for line in proc.stdout.splitlines() if 'the same step' in line]
    assert printed == [[
        'PASSIVE', 'the', 'same', 'step', f"{busy['step_ms']['median']:.0f}", printed[0][5],
        f"{busy['vs_idle']:.2f}"
    ]]


@pytest.mark.parametrize('policy, expected', [('ACTIVE', ('ACTIVE', None)),
                                              ('PASSIVE', ('PASSIVE', None)),
                                              ('SHORT-SPIN', ('PASSIVE', '3000'))])
def test_each_policy_starts_its_process_with_its_own_environment(policy, expected, monkeypatch):
    tool = load_tool('analysis_tools/benchmark_load.py')
    monkeypatch.setenv('GOMP_SPINCOUNT', '123')  # an inherited count must not leak in
    started = []
    monkeypatch.setattr(tool.subprocess, 'Popen', lambda argv, env, **kw: started.append(env))
    tool._worker('cfg.py', 1, policy)
    assert (started[0]['OMP_WAIT_POLICY'], started[0].get('GOMP_SPINCOUNT')) == expected
