"""Evaluate a checkpoint with an mmpretrain, mmdet or mmseg config.

    python tools/test.py CONFIG CHECKPOINT [--work-dir DIR] [--out FILE.pkl]
                         [--show-dir DIR [--show-interval N]] [--cfg-options k=v ...]
                         [--launcher ...]
                         [--trust-checkpoint [PATH ...]]
"""
import argparse
import os.path as osp

from _runner_cli import add_runner_arguments, parse_runner_arguments

import mmvitdyn  # noqa: F401  (registers modules, fixes checkpoint loading)
from mmvitdyn.checkpoint import is_local_path, trusted_checkpoints, trusted_names
from mmvitdyn.engine import SetupError, load_config
from mmvitdyn.engine.runner_setup import (add_dump_results, build_runner, enable_visualization,
                                          set_work_dir)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='Test (evaluate) a checkpoint')
    parser.add_argument('config', help='test config file path')
    parser.add_argument('checkpoint', help='checkpoint: a path or URL')
    parser.add_argument('--work-dir', help='directory for the evaluation logs')
    parser.add_argument('--out', help='also dump the predictions to this .pkl file')
    parser.add_argument('--show-dir', help='draw the predictions into this directory')
    parser.add_argument(
        '--show-interval',
        type=int,
        default=1,
        help='with --show-dir, draw every N-th test batch (default: every image)')
    add_runner_arguments(parser, 'test_dataloader.batch_size=1')
    args = parse_runner_arguments(parser, argv)
    return parser, args


def main(argv=None):
    parser, args = parse_args(argv)
    with trusted_checkpoints(trusted_names(args.trust_checkpoint, [args.checkpoint])):
        try:
            if is_local_path(args.checkpoint) and not osp.isfile(args.checkpoint):
                raise SetupError(f'checkpoint {args.checkpoint!r} does not exist')
            cfg = load_config(args.config, args.cfg_options)
            cfg.launcher = args.launcher
            set_work_dir(cfg, args.work_dir, args.config)
            cfg.load_from = args.checkpoint
            if args.show_dir:
                enable_visualization(cfg, args.show_dir, args.show_interval)
            if args.out:
                add_dump_results(cfg, args.out)
            runner = build_runner(cfg)
            runner.test()  # its data set's classes are checked once built
        except SetupError as err:
            parser.error(str(err))


if __name__ == '__main__':
    main()
