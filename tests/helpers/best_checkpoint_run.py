"""A tiny mmengine run whose best checkpoint is saved by AtomicCheckpointHook,
killed with SIGKILL at one point of a best save when asked.

    python best_checkpoint_run.py WORK_DIR [--crash POINT] [--resume] [--out-dir DIR]

The validation score of epoch 1, 2, 3 is 1, 3, 2: epoch 2 is the best, and a
run resumed with a stale best score would wrongly take epoch 3. POINT is where
epoch 2's best save is killed (see CRASH_POINTS).
"""
import argparse
import os
import signal

import torch
from mmengine.evaluator import BaseMetric
from mmengine.hooks import Hook
from mmengine.model import BaseModel
from mmengine.runner import Runner
from torch.utils.data import DataLoader

from mmvitdyn.engine import AtomicCheckpointHook
from mmvitdyn.utils import AtomicLocalBackend, atomic_target

SCORES = {1: 1.0, 2: 3.0, 3: 2.0}
CRASH_POINTS = {
    'resave': 'while re-saving epoch_2.pth with the new best score (temporary file written)',
    'before_best': 'after that re-save, before the best file is written',
    'best': 'while writing best_score_epoch_2.pth (temporary file written)',
    'before_remove': 'after the new best file, before the previous one is removed',
}


class Regression(BaseModel):

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(2, 1)

    def forward(self, inputs, targets, mode='tensor'):
        predictions = self.linear(inputs)
        if mode == 'loss':
            return dict(loss=((predictions - targets)**2).mean())
        return [predictions]


class EpochScore(BaseMetric):
    """The score :data:`SCORES` gives the epoch just trained."""
    epoch = 0

    def process(self, data_batch, data_samples):
        self.results.append(0)

    def compute_metrics(self, results):
        return dict(score=SCORES[EpochScore.epoch])


class TellEpoch(Hook):

    def before_val_epoch(self, runner):
        EpochScore.epoch = runner.epoch


def kill():
    os.kill(os.getpid(), signal.SIGKILL)


def arm(point: str) -> None:
    """Kill this process at ``point`` of epoch 2's best save."""
    put, remove, writes = AtomicLocalBackend.put, AtomicCheckpointHook._remove_path, []

    def crashing_put(self, obj, filepath):
        name = os.path.basename(str(filepath))
        writes.append(name)
        resave = name == 'epoch_2.pth' and writes.count(name) == 2
        best = name == 'best_score_epoch_2.pth'
        if (point == 'resave' and resave) or (point == 'best' and best):
            with atomic_target(filepath) as tmp:
                tmp.write_bytes(obj)
                kill()
        if point == 'before_best' and best:
            kill()
        put(self, obj, filepath)

    def crashing_remove(self, path):
        if point == 'before_remove' and os.path.basename(str(path)) == 'best_score_epoch_1.pth':
            kill()
        remove(self, path)

    AtomicLocalBackend.put = crashing_put
    AtomicCheckpointHook._remove_path = crashing_remove


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('work_dir')
    parser.add_argument('--crash', choices=sorted(CRASH_POINTS))
    parser.add_argument('--resume', action='store_true')
    parser.add_argument('--out-dir', help="the checkpoint hook's out_dir")
    args = parser.parse_args()
    if args.crash:
        arm(args.crash)
    torch.manual_seed(0)  # the same initial weights in every run
    generator = torch.Generator().manual_seed(0)
    inputs = torch.randn(16, 2, generator=generator)
    data = [dict(inputs=x, targets=x.sum(0, keepdim=True)) for x in inputs]
    runner = Runner(
        model=Regression(),
        work_dir=args.work_dir,
        train_dataloader=DataLoader(data, batch_size=4),
        val_dataloader=DataLoader(data[:4], batch_size=4),
        val_evaluator=[EpochScore()],
        val_cfg=dict(),
        train_cfg=dict(by_epoch=True, max_epochs=3, val_interval=1),
        optim_wrapper=dict(optimizer=dict(type='SGD', lr=0.1)),
        default_hooks=dict(
            checkpoint=dict(
                type='AtomicCheckpointHook',
                out_dir=args.out_dir,
                interval=1,
                save_best='score',
                rule='greater',
                max_keep_ckpts=1)),
        custom_hooks=[TellEpoch()],
        randomness=dict(seed=0),
        resume=args.resume,
        default_scope='mmengine')
    runner.train()


if __name__ == '__main__':
    main()
