"""The demo: the main jobs of mmvitdyn on the embedded data, on the CPU.

1. generate the embedded data sets (scikit-learn digits, COCO/ADE shapes);
2. train a small ViT classifier on digits (``tools/train.py``) and evaluate
   its best checkpoint (``tools/test.py``);
3. DyT: fine-tune adapters + token dispatchers on that frozen ViT and
   evaluate it; train and evaluate the DyT authors' DyT-top-K the same way
   (CoDA's soft top-K dispatchers); evaluate DyT again with ToMe applied at
   test time (``--cfg-options``, no training), with a constant r and with
   ToMe's decreasing (r, inflect) schedule; count the mean per-image GFLOPs
   of each (``get_flops.py``) and time the ViT and DyT side by side on
   validation images (``benchmark.py --trained``);
4. Cluster-Learngene: condense that ViT into a learngene, train a smaller
   descendant (half the heads) from it, and a plain ViT of the same shape
   from scratch for as long;
5. DyT for segmentation: UperNet with a DyT ViT on the ADE20K-layout shapes;
6. inference on generated images (``demo/image_demo.py``): the task's
   picture, the per-layer skip maps, activation rate and GFLOPs;
7. DyT on video: DyT and AdaptFormer video models (every frame through the
   ViT, attentive pooling) trained on the generated .mp4 clips through
   mmaction2, evaluated, counted (GFLOPs per clip) and timed side by side
   (clips/s); ``demo/video_demo.py`` draws a clip's per-frame skip maps;
8. print a summary table (``tools/collect_results.py`` over the runs' work
   dirs: each one's final evaluation and GFLOPs), the measured speed, where
   everything was written and the time taken.

Each tool's output goes to ``<work-dir>/logs/<step>.log``. The default
schedule is short (about 10 minutes on 2 CPU cores after set-up, and 3 to 8
minutes more for the video step on 2 shared cores); ``--full``
runs the configs' own schedules (about an hour).

    python tools/demo.py [--work-dir work_dirs/demo] [--full]
"""
import argparse
import json
import os
import os.path as osp
import re
import shlex
import subprocess
import sys
import time
from glob import glob
from typing import List

REPO = osp.dirname(osp.dirname(osp.abspath(__file__)))
VIT_CONFIG = 'configs/vit/vit-mini-p4_1xb32-20e_digits-32px.py'
DYT_CONFIG = 'configs/dyt/vit-mini-p4-dyt_1xb32-8e_digits-32px.py'
SOFT_TOPK_CONFIG = 'configs/dyt/vit-mini-p4-dyt-soft-topk_1xb32-8e_digits-32px.py'
DESCENDANT_CONFIG = ('configs/cluster_learngene/'
                     'learngene-vit-mini-p4-h3_vit-mini-eps0.1_1xb32-10e_digits-32px.py')
SCRATCH_CONFIG = ('configs/cluster_learngene/'
                  'learngene-vit-mini-p4-h3_scratch_1xb32-10e_digits-32px.py')
SEG_CONFIG = 'configs/dyt/upernet_vit-mini-p16-dyt_mln_1xb4-400i_ade-shapes-128px.py'
VIDEO_DYT_CONFIG = 'configs/dyt_video/vit-mini-p4-dyt_d16_1xb8-20e_video-shapes-32px.py'
VIDEO_ADAPTFORMER_CONFIG = ('configs/dyt_video/'
                            'vit-mini-p4-adaptformer_d16_1xb8-20e_video-shapes-32px.py')
VIDEO_VAL_CLIPS = 24  # data/video_shapes: all its validation clips
# DBSCAN radius of the demo's learngene, in pixels of the 32x32 digits: the
# small ViT's heads differ in mean attention distance by tenths of a pixel,
# so a radius of 0.1 px keeps 2 to 5 of each layer's 6 heads apart.
LEARNGENE_EPS = '0.1'
# (epochs of the ViT, the DyT run and each learngene-shaped run; segmentation iterations;
# epochs of each video model)
SCHEDULES = {'short': (6, 3, 3, 80, 10), 'full': (20, 8, 10, 400, 20)}
# Summary rows of the digits models (the first two also rows of the measured speed).
VIT_LABEL = 'ViT (6 layers, 6 heads), dense'
DYT_LABEL = 'DyT on that ViT (target rate 0.5)'
SOFT_TOPK_LABEL = 'DyT-top-K (soft top-K, k=32 of 64)'
TOME_LABEL = 'DyT + ToMe r=4 (at test time)'
TOME_SCHEDULE_LABEL = 'DyT + ToMe r=(4, -1) (at test time)'
# The video rows: label, work-dir name, config (AdaptFormer first: the base of the speed-up).
VIDEO_RUNS = [
    ('AdaptFormer video (every token)', 'adaptformer-video-shapes', VIDEO_ADAPTFORMER_CONFIG),
    ('DyT video (target rate 0.5)', 'dyt-video-shapes', VIDEO_DYT_CONFIG),
]
# What the rows whose label is not the whole story are, printed under the summary.
ROW_NOTES = {
    SOFT_TOPK_LABEL:
    "DyT with CoDA's soft top-K dispatchers (the DyT authors' DyT-top-K), "
    'trained as DyT from the same ViT: each MLP runs the 32 of 64 patch tokens with the '
    'largest gate logits, its outputs scaled by their soft top-k weights',
    TOME_LABEL:
    'the trained DyT model with ToMe merging 4 tokens in every block '
    '(65 tokens -> 41 after the 6 blocks), no training',
    TOME_SCHEDULE_LABEL:
    "the same with ToMe's decreasing schedule (r, inflect) = (4, -1), "
    'a line from 2r down to 0: the blocks merge 8, 6, 4, 3, 1, 0 tokens (65 -> 43)',
}
# --cfg-options that apply ToMe to the trained DyT model at test time.
TOME = 'model.backbone.token_reduction'
TOME_OPTIONS = (f'{TOME}.type=ToMe', f'{TOME}.r=4')
TOME_SCHEDULE_OPTIONS = (f'{TOME}.type=ToMe', f'{TOME}.r=(4,-1.0)')


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--work-dir', default='work_dirs/demo', help='where runs are written')
    parser.add_argument(
        '--full',
        action='store_true',
        help="the configs' own schedules (20/8/10/10 epochs, 400 iterations, 20 video "
        'epochs)')
    return parser.parse_args()


class Demo:
    """Runs tools/ as a user would, logging each run to its own file."""

    def __init__(self, work_dir: str):
        self.work_dir = work_dir
        self.logs = osp.join(work_dir, 'logs')
        os.makedirs(self.logs, exist_ok=True)
        self.start = time.time()

    def step(self, text: str) -> None:
        print(f'\n[demo {self.elapsed()}] {text}', flush=True)

    def elapsed(self) -> str:
        seconds = int(time.time() - self.start)
        return f'{seconds // 60:2d}:{seconds % 60:02d}'

    def run(self, name: str, script: str, *args: str) -> str:
        """Run ``script`` (relative to the repository) with ``args``; return its output."""
        cmd = [sys.executable, script, *map(str, args)]
        log = osp.join(self.logs, f'{name}.log')
        print(f'  $ {shlex.join(cmd[1:])}', flush=True)
        start = time.time()
        proc = subprocess.run(
            cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
        with open(log, 'w') as f:
            f.write(proc.stdout)
        if proc.returncode != 0:
            print(proc.stdout[-4000:])
            sys.exit(f'[demo] FAILED: {" ".join(cmd)} (whole output: {log})')
        print(f'    done in {time.time() - start:.0f} s (log: {log})', flush=True)
        return proc.stdout

    def train(self, name: str, config: str, *cfg_options: str) -> str:
        """Train with validation at the end; return the work dir."""
        work_dir = osp.join(self.work_dir, name)
        self.run(f'{name}-train', 'tools/train.py', config, '--work-dir', work_dir, '--cfg-options',
                 *cfg_options)
        return work_dir

    def test(self, name: str, config: str, checkpoint: str, *cfg_options: str) -> str:
        """Evaluate ``checkpoint`` (with ``cfg_options``); return the test's work dir."""
        work_dir = osp.join(self.work_dir, name, 'test')
        options = ('--cfg-options', *cfg_options) if cfg_options else ()
        self.run(f'{name}-test', 'tools/test.py', config, checkpoint, '--work-dir', work_dir,
                 *options)
        return work_dir


def last_logged(work_dir: str) -> dict:
    """The last scalars of the newest run in ``work_dir``: the final validation of a
    training run, the metrics of a test run (mmengine's ``<timestamp>.json``)."""
    logs = sorted((path
                   for path in glob(osp.join(REPO, work_dir, '*', '**', '*.json'), recursive=True)
                   if osp.basename(path) != 'scalars.json'),
                  key=osp.getmtime)
    if not logs:
        sys.exit(f'[demo] FAILED: no metrics log under {work_dir}')
    with open(logs[-1]) as f:
        return json.loads(f.read().splitlines()[-1])


def best_checkpoint(work_dir: str) -> str:
    best = glob(osp.join(REPO, work_dir, 'best_*.pth'))
    if best:
        return osp.relpath(best[0], REPO)
    with open(osp.join(REPO, work_dir, 'last_checkpoint')) as f:
        return osp.relpath(f.read().strip(), REPO)


def epochs_options(epochs: int) -> list:
    """Train ``epochs`` with one validation at the end and the best checkpoint kept."""
    return [
        f'train_cfg.max_epochs={epochs}', f'train_cfg.val_interval={epochs}',
        f'default_hooks.checkpoint.interval={epochs}'
    ]


def video_rows(demo: Demo, epochs: int) -> List[dict]:
    """Train, evaluate, count and time the :data:`VIDEO_RUNS` on the video shapes
    (``epochs`` each); a row each: label, work dir, checkpoint, ``top1``,
    ``act_rate`` (None without dispatch), ``gflops`` and ``clips_per_s`` per clip,
    ``speedup`` over the first."""
    rows = []
    for label, name, config in VIDEO_RUNS:
        work_dir = demo.train(name, config, *epochs_options(epochs))
        checkpoint = best_checkpoint(work_dir)
        test_dir = demo.test(name, config, checkpoint)
        flops_json = osp.join(test_dir, 'flops.json')
        demo.run(f'{name}-flops', 'tools/analysis_tools/get_flops.py', config, '--checkpoint',
                 checkpoint, '--num-images', str(VIDEO_VAL_CLIPS), '--out', flops_json)
        with open(osp.join(REPO, flops_json)) as f:
            flops = json.load(f)['flops']
        metrics = last_logged(test_dir)
        rows.append(
            dict(
                label=label,
                config=config,
                work_dir=work_dir,
                checkpoint=checkpoint,
                top1=metrics['acc/top1'],
                act_rate=metrics.get('act_rate'),
                gflops=flops / 1e9))
    speed_json = osp.join(demo.work_dir, 'speed_video.json')
    demo.run('speed-video', 'tools/analysis_tools/benchmark.py', '--trained',
             *(arg for row in rows for arg in (row['config'], row['checkpoint'])), '--batch-sizes',
             '8', '--device', 'cpu', '--json', speed_json)
    with open(osp.join(REPO, speed_json)) as f:
        for row, timed in zip(rows, json.load(f)['rows']):
            row.update(clips_per_s=timed['clips_per_s']['median'], speedup=timed['speedup'])
    return rows


def video_table(rows: List[dict]) -> str:
    """The video rows side by side, as printed in the summary."""
    lines = [
        f'{"video shapes (24 val clips, 8 frames)":<38} {"top-1":>6} {"act. rate":>9} '
        f'{"GFLOPs/clip":>11} {"clips/s":>8} {"speed-up":>8}'
    ]
    for row in rows:
        rate = '-' if row['act_rate'] is None else f'{row["act_rate"]:.3f}'
        lines.append(f'{row["label"]:<38} {100 * row["top1"]:>6.2f} {rate:>9} '
                     f'{row["gflops"]:>11.4f} {row["clips_per_s"]:>8.1f} '
                     f'{row["speedup"]:>7.2f}x')
    return '\n'.join(lines)


def main():
    args = parse_args()
    os.chdir(REPO)
    vit_epochs, dyt_epochs, lg_epochs, seg_iters, video_epochs = SCHEDULES['full' if args.
                                                                           full else 'short']
    demo = Demo(args.work_dir)
    from mmvitdyn.datasets import GENERATORS

    demo.step('1/7 generate the embedded data sets')
    for generator in GENERATORS.values():
        made = generator.generate(generator.default_root)
        counts = ', '.join(f'{n} {split}' for split, n in made.counts.items())
        print(f'  {made.root}: {counts} images ({"made" if made.created else "already there"})')

    rows = {}
    demo.step(f'2/7 train a small ViT on digits ({vit_epochs} epochs) and evaluate it')
    vit_dir = demo.train('vit-digits', VIT_CONFIG, *epochs_options(vit_epochs))
    vit_ckpt = best_checkpoint(vit_dir)
    rows[VIT_LABEL] = demo.test('vit-digits', VIT_CONFIG, vit_ckpt)

    demo.step(f'3/7 DyT on the frozen ViT ({dyt_epochs} epochs): adapters + MLP token '
              "dispatchers, then the same with CoDA's soft top-K dispatchers (the DyT "
              "authors' DyT-top-K); ToMe on DyT at test time")
    dyt_dir = demo.train('dyt-digits', DYT_CONFIG, *epochs_options(dyt_epochs),
                         f'load_from={vit_ckpt}')
    dyt_ckpt = best_checkpoint(dyt_dir)
    soft_topk_dir = demo.train('dyt-soft-topk-digits', SOFT_TOPK_CONFIG,
                               *epochs_options(dyt_epochs), f'load_from={vit_ckpt}')
    # Label, test work dir, config, checkpoint, --cfg-options of each DyT row.
    dyt_runs = [
        (DYT_LABEL, 'dyt-digits', DYT_CONFIG, dyt_ckpt, ()),
        (SOFT_TOPK_LABEL, 'dyt-soft-topk-digits', SOFT_TOPK_CONFIG, best_checkpoint(soft_topk_dir),
         ()),
        (TOME_LABEL, 'dyt-tome-digits', DYT_CONFIG, dyt_ckpt, TOME_OPTIONS),
        (TOME_SCHEDULE_LABEL, 'dyt-tome-schedule-digits', DYT_CONFIG, dyt_ckpt,
         TOME_SCHEDULE_OPTIONS),
    ]
    for label, name, config, ckpt, options in dyt_runs:
        rows[label] = demo.test(name, config, ckpt, *options)
    for label, name, config, ckpt, options in [(VIT_LABEL, 'vit-digits', VIT_CONFIG, vit_ckpt, ()),
                                               *dyt_runs]:
        cfg_options = ('--cfg-options', *options) if options else ()
        # Beside the test run's log, where collect_results.py reads GFLOPs.
        demo.run(f'{name}-flops', 'tools/analysis_tools/get_flops.py', config, '--checkpoint', ckpt,
                 '--num-images', '359', '--out', osp.join(rows[label], 'flops.json'), *cfg_options)
    speed_json = osp.join(args.work_dir, 'speed.json')
    demo.run('speed', 'tools/analysis_tools/benchmark.py', '--trained', VIT_CONFIG, vit_ckpt,
             DYT_CONFIG, dyt_ckpt, '--batch-sizes', '128', '--device', 'cpu', '--json', speed_json)
    with open(speed_json) as f:
        speed = json.load(f)['rows']

    demo.step('4/7 Cluster-Learngene: learngene of the ViT -> descendant with 3 heads a layer')
    learngene = osp.join(args.work_dir, 'learngene',
                         f'vit-mini-p4_digits-32px_eps{LEARNGENE_EPS}.pth')
    out = demo.run('learngene-build', 'tools/learngene/build_learngene.py', VIT_CONFIG, vit_ckpt,
                   '--num-images', '359', '--eps', LEARNGENE_EPS, '--out', learngene)
    summary = out[out.index('Learngene of a ViT'):out.index('inherited parameters')]
    print('  ' + summary.strip().replace('\n', '\n  '))
    lg_dir = demo.train('descendant-learngene', DESCENDANT_CONFIG, *epochs_options(lg_epochs),
                        f'model.backbone.learngene={learngene}')
    rows['descendant from the learngene'] = lg_dir
    scratch_dir = demo.train('descendant-scratch', SCRATCH_CONFIG, *epochs_options(lg_epochs))
    rows['plain ViT of its shape, from scratch'] = scratch_dir

    demo.step(f'5/7 DyT UperNet on the ADE20K-layout shapes ({seg_iters} iterations)')
    seg_dir = demo.train('dyt-upernet-ade-shapes', SEG_CONFIG, f'train_cfg.max_iters={seg_iters}',
                         f'train_cfg.val_interval={seg_iters}',
                         f'default_hooks.checkpoint.interval={seg_iters}')
    seg = last_logged(seg_dir)

    demo.step('6/7 inference on generated images: demo/image_demo.py')
    pictures = osp.join(args.work_dir, 'image_demo')
    digit = sorted(glob('data/digits/val/7/*.png'))[0]
    scene = sorted(glob('data/ade_shapes/images/validation/*.jpg'))[0]
    for name, image, config, work_dir in [('digits', digit, DYT_CONFIG, dyt_dir),
                                          ('ade', scene, SEG_CONFIG, seg_dir)]:
        out = demo.run(f'image-demo-{name}', 'demo/image_demo.py', image, config,
                       best_checkpoint(work_dir), '--out-dir', osp.join(pictures, name))
        table = out[out.index('image '):out.index('Figures:')].strip().replace('\n\n', '\n')
        print('  ' + table.replace('\n', '\n  '))

    demo.step(f'7/7 DyT on video: DyT and AdaptFormer on the .mp4 clips ({video_epochs} epochs '
              'each), GFLOPs per clip, clips/s; per-frame skip maps of a clip')
    video = video_rows(demo, video_epochs)
    video_maps = osp.join(args.work_dir, 'video_demo')
    clip = sorted(glob('data/video_shapes/videos/val/*.mp4'))[0]
    out = demo.run('video-demo', 'demo/video_demo.py', clip, VIDEO_DYT_CONFIG,
                   video[1]['checkpoint'], '--out-dir', video_maps)
    print('  ' + out[out.index('video '):out.index('Figures:')].strip().replace('\n', '\n  '))

    demo.step('summary (digits: 359 validation images), by tools/collect_results.py')
    table = demo.run('summary', 'tools/collect_results.py', '--work-dirs',
                     *(f'{name}={work_dir}' for name, work_dir in rows.items()), '--metrics',
                     'accuracy/top1', 'act_rate', 'gflops', 't_params', 'i_params')
    print('  ' + table.strip().replace('\n', '\n  '))
    for label, note in ROW_NOTES.items():
        print(f'  {label}: {note}')
    for name, timed in zip([VIT_LABEL, DYT_LABEL], speed):
        print(f'  {name}: {timed["images_per_s"]["median"]:.0f} img/s on the CPU (batch 128), '
              f'speed-up {timed["speedup"]:.2f}x')
    print(f'  DyT UperNet on the ADE shapes: mIoU {seg["mIoU"]:.1f}, activation rate '
          f'{seg["act_rate"]:.2f}')
    print('  ' + video_table(video).replace('\n', '\n  '))
    print(f'  learngene and its MAD picture: {learngene}, '
          f'{re.sub(r"[.]pth$", "_mad.png", learngene)}')
    print(f'  inference pictures: {pictures}/digits/, {pictures}/ade/; per-frame skip maps of a '
          f'clip: {video_maps}/')
    print(f'  checkpoints: {args.work_dir}/*/; logs: {demo.logs}/')
    print(f'\n[demo] finished in {demo.elapsed().strip()} (min:s)')


if __name__ == '__main__':
    main()
