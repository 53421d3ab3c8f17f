"""Train a model from an mmpretrain, mmdet or mmseg config.

    python tools/train.py CONFIG [--work-dir DIR] [--resume [CKPT]] [--amp]
                          [--cfg-options k=v ...] [--launcher none|pytorch|slurm]
"""
import argparse
import os

from mmengine.config import DictAction

import mmvitdyn  # noqa: F401  (registers modules, fixes checkpoint loading)
from mmvitdyn.engine.runner_setup import (SetupError, build_runner, enable_amp, load_config,
                                          set_resume, set_work_dir)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='Train a model')
    parser.add_argument('config', help='train config file path')
    parser.add_argument('--work-dir', help='directory for logs and checkpoints')
    parser.add_argument(
        '--resume', nargs='?', type=str, const='auto',
        help='resume from CKPT, or from the latest checkpoint of the work dir if no CKPT is given')
    parser.add_argument('--amp', action='store_true', help='mixed-precision training (GPU only)')
    parser.add_argument('--auto-scale-lr', action='store_true',
                        help='scale the learning rate by the actual batch size (auto_scale_lr)')
    parser.add_argument('--no-validate', action='store_true', help='skip validation during training')
    parser.add_argument('--cfg-options', nargs='+', action=DictAction,
                        help='override config entries, e.g. train_cfg.max_iters=10')
    parser.add_argument('--launcher', choices=['none', 'pytorch', 'slurm', 'mpi'], default='none')
    parser.add_argument('--local_rank', '--local-rank', type=int, default=0)
    args = parser.parse_args(argv)
    os.environ.setdefault('LOCAL_RANK', str(args.local_rank))
    return parser, args


def main(argv=None):
    parser, args = parse_args(argv)
    try:
        cfg = load_config(args.config, args.cfg_options)
        cfg.launcher = args.launcher
        set_work_dir(cfg, args.work_dir, args.config)
        if args.amp:
            enable_amp(cfg)
        set_resume(cfg, args.resume)
        if args.auto_scale_lr:
            if 'auto_scale_lr' not in cfg:
                raise SetupError('--auto-scale-lr needs auto_scale_lr=dict(base_batch_size=...) '
                                 'in the config')
            cfg.auto_scale_lr.enable = True
        if args.no_validate:
            cfg.val_cfg = cfg.val_dataloader = cfg.val_evaluator = None
        runner = build_runner(cfg)
    except SetupError as err:
        parser.error(str(err))
    runner.train()


if __name__ == '__main__':
    main()
