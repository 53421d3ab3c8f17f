"""The demo: the main job of mmvitdyn on the embedded data, on the CPU.

1. generate the embedded data sets (scikit-learn digits, COCO/ADE shapes);
2. train a small ViT classifier on digits with ``tools/train.py``;
3. evaluate its best checkpoint with ``tools/test.py``;
4. print a summary: top-1, time, where the checkpoint and logs are.

    python tools/demo.py [--work-dir work_dirs/demo] [--epochs N]
"""
import argparse
import glob
import json
import os
import os.path as osp
import subprocess
import sys
import time

REPO = osp.dirname(osp.dirname(osp.abspath(__file__)))
VIT_CONFIG = 'configs/vit/vit-mini-p4_1xb32-20e_digits-32px.py'


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--work-dir', default='work_dirs/demo', help='where runs are written')
    parser.add_argument('--epochs', type=int, help='override the number of training epochs')
    return parser.parse_args()


def banner(text: str) -> None:
    print(f'\n[demo] {text}', flush=True)


def run_tool(script: str, *args: str) -> None:
    """Run one of tools/*.py as a user would; stop the demo if it fails."""
    cmd = [sys.executable, osp.join('tools', script), *args]
    print('[demo] $ ' + ' '.join(cmd), flush=True)
    if subprocess.run(cmd, cwd=REPO).returncode != 0:
        sys.exit(f'[demo] FAILED: {" ".join(cmd)}')


def last_metrics(work_dir: str) -> dict:
    """Metrics of the newest run in ``work_dir`` (mmengine's <timestamp>.json)."""
    logs = sorted(glob.glob(osp.join(work_dir, '*', '*.json')), key=osp.getmtime)
    if not logs:
        sys.exit(f'[demo] FAILED: no metrics log under {work_dir}')
    with open(logs[-1]) as f:
        return json.loads(f.read().splitlines()[-1])


def best_checkpoint(work_dir: str) -> str:
    best = glob.glob(osp.join(work_dir, 'best_*.pth'))
    if best:
        return best[0]
    with open(osp.join(work_dir, 'last_checkpoint')) as f:
        return f.read().strip()


def main():
    args = parse_args()
    os.chdir(REPO)
    from mmvitdyn.datasets import GENERATORS

    banner('1/3 generate the embedded data sets')
    for name, generator in GENERATORS.items():
        generated = generator.generate(generator.default_root)
        print(f'[demo] {name}: {generated}')

    vit_dir = osp.join(args.work_dir, 'vit-digits')
    banner('2/3 train a small ViT on digits (CPU)')
    start = time.time()
    extra = ['--cfg-options', f'train_cfg.max_epochs={args.epochs}'] if args.epochs else []
    run_tool('train.py', VIT_CONFIG, '--work-dir', vit_dir, *extra)
    train_time = time.time() - start

    banner('3/3 evaluate the best checkpoint')
    ckpt = best_checkpoint(vit_dir)
    test_dir = osp.join(vit_dir, 'test')
    run_tool('test.py', VIT_CONFIG, ckpt, '--work-dir', test_dir)
    metrics = last_metrics(test_dir)

    banner('summary')
    print(f'  ViT (6 layers, 192 wide) on digits, val top-1: {metrics["accuracy/top1"]:.2f}%')
    print(f'  training time: {train_time / 60:.1f} min')
    print(f'  checkpoint:    {ckpt}')
    print(f'  logs:          {vit_dir}/<timestamp>/ (train), {test_dir}/<timestamp>/ (test)')


if __name__ == '__main__':
    main()
