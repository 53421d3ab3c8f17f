"""The demo: the main jobs of mmvitdyn on the embedded data, on the CPU.

1. generate the embedded data sets (scikit-learn digits, COCO/ADE shapes);
2. train a small ViT classifier on digits (``tools/train.py``) and evaluate
   its best checkpoint (``tools/test.py``);
3. DyT: fine-tune adapters + token dispatchers on that frozen ViT, evaluate,
   and count the mean per-image GFLOPs of both (``get_flops.py``);
4. Cluster-Learngene: condense that ViT into a learngene, train a smaller
   descendant (half the heads) from it and the same descendant from scratch;
5. DyT for segmentation: UperNet with a DyT ViT on the ADE20K-layout shapes;
6. print a summary table, with where checkpoints and logs are.

    python tools/demo.py [--work-dir work_dirs/demo] [--epochs N]
"""
import argparse
import glob
import json
import os
import os.path as osp
import re
import subprocess
import sys
import time

REPO = osp.dirname(osp.dirname(osp.abspath(__file__)))
VIT_CONFIG = 'configs/vit/vit-mini-p4_1xb32-20e_digits-32px.py'
DYT_CONFIG = 'configs/dyt/vit-mini-p4-dyt_1xb32-8e_digits-32px.py'
DESCENDANT_CONFIG = 'configs/cluster_learngene/learngene-vit-mini-p4-h3_vit-mini-eps1_1xb32-10e_digits-32px.py'
SCRATCH_CONFIG = 'configs/cluster_learngene/learngene-vit-mini-p4-h3_scratch_1xb32-10e_digits-32px.py'
SEG_CONFIG = 'configs/dyt/upernet_vit-mini-dyt_mln_1xb4-400i_ade-shapes-128px.py'


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--work-dir', default='work_dirs/demo', help='where runs are written')
    parser.add_argument('--epochs', type=int, help='override the epochs of every digits run')
    return parser.parse_args()


def banner(text: str) -> None:
    print(f'\n[demo] {text}', flush=True)


def run_tool(script: str, *args: str) -> str:
    """Run one of tools/ as a user would, echo its output and return it."""
    cmd = [sys.executable, osp.join('tools', script), *args]
    print('[demo] $ ' + ' '.join(cmd), flush=True)
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    lines = []
    for line in proc.stdout:
        print(line, end='', flush=True)
        lines.append(line)
    if proc.wait() != 0:
        sys.exit(f'[demo] FAILED: {" ".join(cmd)}')
    return ''.join(lines)


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


def gflops(config: str, ckpt: str) -> float:
    """Mean per-image GFLOPs over the val set (DyT) or the static count."""
    out = run_tool('analysis_tools/get_flops.py', config, '--checkpoint', ckpt, '--num-images', '359')
    match = re.search(r'^(?:DyT )?FLOPs:\s+([\d.]+) G', out, re.MULTILINE)
    if match is None:
        sys.exit('[demo] FAILED: get_flops.py printed no FLOPs')
    return float(match.group(1))


def main():
    args = parse_args()
    os.chdir(REPO)
    from mmvitdyn.datasets import GENERATORS

    banner('1/5 generate the embedded data sets')
    for name, generator in GENERATORS.items():
        print(f'[demo] {name}: {generator.generate(generator.default_root)}')

    epochs = [f'train_cfg.max_epochs={args.epochs}'] if args.epochs else []
    runs = {}
    banner('2/5 train and evaluate a small ViT on digits')
    vit = runs['ViT (6 layers, 6 heads), dense'] = train_and_test(
        VIT_CONFIG, osp.join(args.work_dir, 'vit-digits'), *epochs)
    vit['gflops'] = gflops(VIT_CONFIG, vit['ckpt'])

    banner('3/5 DyT: adapters + MLP token dispatchers on the frozen ViT')
    dyt = runs['DyT on that ViT (target rate 0.5)'] = train_and_test(
        DYT_CONFIG, osp.join(args.work_dir, 'dyt-digits'), *epochs, f'load_from={vit["ckpt"]}')
    dyt['gflops'] = gflops(DYT_CONFIG, dyt['ckpt'])

    banner('4/5 Cluster-Learngene: learngene of the ViT -> descendant with 3 heads')
    learngene = osp.join(args.work_dir, 'learngene', 'vit-mini-p4_digits-32px_eps1.pth')
    run_tool('learngene/build_learngene.py', VIT_CONFIG, vit['ckpt'], '--num-images', '359',
             '--eps', '1', '--out', learngene)
    runs['descendant from the learngene'] = train_and_test(
        DESCENDANT_CONFIG, osp.join(args.work_dir, 'descendant-learngene'), *epochs,
        f'model.backbone.learngene={learngene}')
    runs['same descendant from scratch'] = train_and_test(  # its structure is the learngene's
        SCRATCH_CONFIG, osp.join(args.work_dir, 'descendant-scratch'), *epochs,
        f'model.backbone.learngene={learngene}')

    banner('5/5 DyT UperNet on the ADE20K-layout shapes')
    seg = train_and_test(SEG_CONFIG, osp.join(args.work_dir, 'dyt-upernet-ade-shapes'))

    banner('summary (digits val set: 359 images)')
    print(f'  {"model":<36}{"top-1":>8}{"act. rate":>11}{"GFLOPs/img":>12}{"train min":>11}')
    for name, run in runs.items():
        rate = run['metrics'].get('act_rate')
        flops = run.get('gflops')
        print(f'  {name:<36}{run["metrics"]["accuracy/top1"]:>7.2f}%'
              f'{f"{rate:.2f}" if rate is not None else "1.00":>11}'
              f'{f"{flops:.3f}" if flops is not None else "-":>12}{run["minutes"]:>11.1f}')
    print(f'  DyT UperNet on ADE shapes: mIoU {seg["metrics"]["mIoU"]:.2f}, activation rate '
          f'{seg["metrics"].get("act_rate", float("nan")):.2f}, {seg["minutes"]:.1f} min')
    print(f'  checkpoints and logs: {args.work_dir}/*/  (learngene: {learngene})')


if __name__ == '__main__':
    main()
