"""The demo: the main job of mmvitdyn on the embedded data, on the CPU.

1. generate the embedded data sets (scikit-learn digits, COCO/ADE shapes);
2. train a small ViT classifier on digits with ``tools/train.py`` and
   evaluate its best checkpoint with ``tools/test.py``;
3. fine-tune a DyT model (frozen ViT + adapters + token dispatchers) from
   that ViT and evaluate it;
4. print a summary: top-1, activation rate, time, checkpoints and logs.

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
DYT_CONFIG = 'configs/dyt/vit-mini-p4-dyt_1xb32-8e_digits-32px.py'


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


def train_and_test(config: str, work_dir: str, *cfg_options: str) -> dict:
    """Train ``config`` and evaluate its best checkpoint; return what the summary needs."""
    options = ['--cfg-options', *cfg_options] if cfg_options else []
    start = time.time()
    run_tool('train.py', config, '--work-dir', work_dir, *options)
    minutes = (time.time() - start) / 60
    ckpt = best_checkpoint(work_dir)
    test_dir = osp.join(work_dir, 'test')
    run_tool('test.py', config, ckpt, '--work-dir', test_dir, *options)
    return dict(metrics=last_metrics(test_dir), minutes=minutes, ckpt=ckpt, logs=work_dir)


def main():
    args = parse_args()
    os.chdir(REPO)
    from mmvitdyn.datasets import GENERATORS

    banner('1/3 generate the embedded data sets')
    for name, generator in GENERATORS.items():
        generated = generator.generate(generator.default_root)
        print(f'[demo] {name}: {generated}')

    epochs = [f'train_cfg.max_epochs={args.epochs}'] if args.epochs else []
    banner('2/3 train and evaluate a small ViT on digits (CPU)')
    vit = train_and_test(VIT_CONFIG, osp.join(args.work_dir, 'vit-digits'), *epochs)

    banner('3/3 DyT: fine-tune adapters + token dispatchers on the frozen ViT')
    dyt = train_and_test(DYT_CONFIG, osp.join(args.work_dir, 'dyt-digits'), *epochs,
                         f'load_from={vit["ckpt"]}')

    banner('summary (digits val set, 359 images)')
    print(f'  {"model":<34}{"top-1":>8}{"act. rate":>11}{"train min":>11}')
    for name, run in (('ViT (6 layers, 192 wide), dense', vit),
                      ('DyT on that ViT, MLP dispatch', dyt)):
        rate = run['metrics'].get('act_rate', 1.0)
        print(f'  {name:<34}{run["metrics"]["accuracy/top1"]:>7.2f}%{rate:>11.2f}'
              f'{run["minutes"]:>11.1f}')
    for name, run in (('ViT', vit), ('DyT', dyt)):
        print(f'  {name} checkpoint: {run["ckpt"]}   logs: {run["logs"]}/<timestamp>/')


if __name__ == '__main__':
    main()
