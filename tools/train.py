"""Train a model from an mmpretrain, mmdet or mmseg config.

    python tools/train.py CONFIG [--work-dir DIR] [--resume [CKPT]] [--amp]
                          [--cfg-options k=v ...] [--launcher none|pytorch|slurm]
                          [--trust-checkpoint [PATH ...]]

Checkpoints are written atomically (AtomicCheckpointHook) and each epoch is
seeded from (seed, epoch) (EpochSeedHook), so a run killed at any point
resumes with ``--resume`` from its last checkpoint and repeats the
uninterrupted run. The work dir is held for the run: a second run into it
stops at once, naming the holder.
"""
import argparse
from contextlib import ExitStack

from _runner_cli import add_runner_arguments, parse_runner_arguments
from mmengine.runner import find_latest_checkpoint

import mmvitdyn  # noqa: F401  (registers modules, fixes checkpoint loading)
from mmvitdyn.checkpoint import trusted_checkpoints, trusted_names
from mmvitdyn.engine import SetupError, load_config
from mmvitdyn.engine.runner_setup import (build_runner, check_learngene_files,
                                          check_pretrained_checkpoints, enable_amp, hold_work_dir,
                                          make_resumable, set_resume, set_work_dir)
from mmvitdyn.utils import WorkDirLockedError


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='Train a model')
    parser.add_argument('config', help='train config file path')
    parser.add_argument('--work-dir', help='directory for logs and checkpoints')
    parser.add_argument(
        '--resume',
        nargs='?',
        type=str,
        const='auto',
        help='resume from CKPT, or from the latest checkpoint of the work dir if no CKPT is given')
    parser.add_argument('--amp', action='store_true', help='mixed-precision training (GPU only)')
    parser.add_argument(
        '--auto-scale-lr',
        action='store_true',
        help='scale the learning rate by the actual batch size (auto_scale_lr)')
    parser.add_argument(
        '--no-validate', action='store_true', help='skip validation during training')
    add_runner_arguments(parser, 'train_cfg.max_iters=10')
    args = parse_runner_arguments(parser, argv)
    return parser, args


def main(argv=None):
    parser, args = parse_args(argv)
    try:
        cfg = load_config(args.config, args.cfg_options)
        cfg.launcher = args.launcher
        set_work_dir(cfg, args.work_dir, args.config)
    except SetupError as err:
        parser.error(str(err))
    resume = find_latest_checkpoint(cfg.work_dir) if args.resume == 'auto' else args.resume
    with ExitStack() as held:
        try:
            held.enter_context(trusted_checkpoints(trusted_names(args.trust_checkpoint, [resume])))
            held.enter_context(hold_work_dir(cfg.work_dir))
        except ValueError as err:
            parser.error(str(err))
        except WorkDirLockedError as err:
            parser.exit(2, f'error: {err}\n')
        train(parser, args, cfg)


def train(parser, args, cfg) -> None:
    """Set up the run of ``cfg`` (its work dir held) and train."""
    try:
        if args.amp:
            enable_amp(cfg)
        set_resume(cfg, args.resume)
        make_resumable(cfg)
        if args.auto_scale_lr:
            if 'auto_scale_lr' not in cfg:
                raise SetupError('--auto-scale-lr needs auto_scale_lr=dict(base_batch_size=...) '
                                 'in the config')
            cfg.auto_scale_lr.enable = True
        if args.no_validate:
            cfg.val_cfg = cfg.val_dataloader = cfg.val_evaluator = None
        check_pretrained_checkpoints(cfg)
        check_learngene_files(cfg)
        runner = build_runner(cfg)
        runner.train()  # its data sets' classes are checked once built
    except SetupError as err:
        parser.error(str(err))


if __name__ == '__main__':
    main()
