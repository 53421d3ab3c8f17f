"""The demo's training step on an idle and on a busy machine, per OpenMP wait policy.

    python tools/analysis_tools/benchmark_load.py [--config CFG] [--steps 5]
        [--policies ACTIVE PASSIVE SHORT-SPIN] [--json OUT]

For each policy (``OMP_WAIT_POLICY``, and libgomp's ``GOMP_SPINCOUNT``: ACTIVE,
PASSIVE, and SHORT-SPIN, mmvitdyn's default: PASSIVE with a short spin,
mmvitdyn/openmp_wait.py) the step of ``--config`` (by default the demo's ViT,
6 layers, 192 wide, a batch of 32 images of 32 px, AdamW) is timed in a fresh
process (OpenMP reads the policy when torch loads), first alone, then beside a
competitor: a second process running the same step in a loop under the same
policy, as a second job on the machine would. Each timing process runs two
warm-up steps, then ``--steps`` steps. Rows: the policy, the competitor, the
step time (median and quartiles) and ``vs_idle``, the median busy step over
the median idle step of the same policy. Sharing the cores fairly with one
job of the same demand gives 2; more is time lost to waiting threads that
spin (docs/benchmarks.md, "On a busy machine").
"""
import mmvitdyn  # noqa: F401 (first: OpenMP's wait policy, before torch loads) isort: skip
import argparse
import json
import os
import subprocess
import sys
import time
from typing import List, Optional

import torch

from mmvitdyn.benchmark import Column, format_table, iqr, spread, write_report
from mmvitdyn.openmp_wait import DEFAULT_SPIN_COUNT, SPIN_COUNT, WAIT_POLICY

DEMO_CONFIG = 'configs/vit/vit-mini-p4_1xb32-20e_digits-32px.py'
# Policy -> (OMP_WAIT_POLICY, GOMP_SPINCOUNT or None: libgomp's default for the policy).
POLICIES = {
    'ACTIVE': ('ACTIVE', None),
    'PASSIVE': ('PASSIVE', None),
    'SHORT-SPIN': ('PASSIVE', DEFAULT_SPIN_COUNT),
}
WARMUP_STEPS = 2
READY = 'ready'


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--config', default=DEMO_CONFIG, help='an mmpretrain classifier config')
    parser.add_argument('--steps', type=int, default=5, help='timed steps per process (>= 1)')
    parser.add_argument(
        '--policies', nargs='+', default=list(POLICIES), choices=POLICIES, help='wait policies')
    parser.add_argument('--json', help='write the rows to this JSON file')
    parser.add_argument('--worker', type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error(f'--steps must be >= 1, got {args.steps}')
    return args


def run_steps(config: str, steps: int) -> None:
    """Run the training step of ``config``: after the warm-up print READY, then
    the seconds of each of ``steps`` steps as JSON (``steps`` 0: forever)."""
    from mmengine.config import Config
    from mmengine.optim import OptimWrapper
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import MODELS
    from mmpretrain.structures import DataSample

    cfg = Config.fromfile(config)
    init_default_scope('mmpretrain')
    torch.manual_seed(0)
    model = MODELS.build(cfg.model).train()
    optim = OptimWrapper(torch.optim.AdamW(model.parameters(), lr=1e-3))
    batch = cfg.train_dataloader.batch_size
    size = cfg.model.backbone.img_size
    data = dict(
        inputs=torch.randint(0, 256, (batch, 3, size, size)).float(),
        data_samples=[
            DataSample().set_gt_label(i % cfg.model.head.num_classes) for i in range(batch)
        ])
    for _ in range(WARMUP_STEPS):
        model.train_step(data, optim)
    print(READY, flush=True)
    seconds = []
    while steps == 0 or len(seconds) < steps:
        start = time.perf_counter()
        model.train_step(data, optim)
        seconds.append(time.perf_counter() - start)
    print(json.dumps(seconds), flush=True)


def _worker(config: str, steps: int, policy: str) -> subprocess.Popen:
    wait, spins = POLICIES[policy]
    env = {**os.environ, WAIT_POLICY: wait, SPIN_COUNT: spins}
    if spins is None:  # libgomp's own count for the policy
        del env[SPIN_COUNT]
    return subprocess.Popen([sys.executable, __file__, '--config', config, '--worker',
                             str(steps)],
                            env=env,
                            stdout=subprocess.PIPE,
                            text=True)


def _wait_ready(proc: subprocess.Popen) -> None:
    line = proc.stdout.readline().strip()
    if line != READY:
        proc.kill()
        raise RuntimeError(f'the timing process stopped before its first step (exit {proc.wait()})')


def time_step(config: str, steps: int, policy: str, busy: bool) -> List[float]:
    """Seconds of ``steps`` steps in a fresh process under ``policy``, with
    (``busy``) or without a competing process running the same step."""
    competitor = _worker(config, 0, policy) if busy else None
    try:
        if competitor is not None:
            _wait_ready(competitor)
        timed = _worker(config, steps, policy)
        _wait_ready(timed)
        seconds = json.loads(timed.stdout.readline())
        timed.wait()
        return seconds
    finally:
        if competitor is not None:
            competitor.kill()
            competitor.wait()


def main(argv: Optional[list] = None) -> List[dict]:
    args = parse_args(argv)
    if args.worker is not None:
        run_steps(args.config, args.worker)
        return []
    rows = []
    for policy in args.policies:
        idle = None
        for busy in (False, True):
            step = spread(torch.tensor(time_step(args.config, args.steps, policy, busy)) * 1e3)
            idle = idle or step
            rows.append(
                dict(
                    policy=policy,
                    competitor='the same step' if busy else 'none',
                    step_ms=step,
                    vs_idle=step['median'] / idle['median']))
    columns: List[Column] = [('policy', 'policy', 's'), ('competitor', 'competitor', 's'),
                             ('step ms', 'step_ms.median', '.0f'),
                             ('q1-q3', iqr('step_ms', '.0f'), 's'), ('vs idle', 'vs_idle', '.2f')]
    print(f'{args.config}: training step, {os.cpu_count()} cores, medians of {args.steps} steps')
    print(format_table(rows, columns))
    if args.json:
        write_report(args.json, 'benchmark_load', vars(args), rows, torch.device('cpu'))
    return rows


if __name__ == '__main__':
    main()
