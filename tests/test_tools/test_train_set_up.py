"""The design card's ``tools/dist_train.sh configs/dyt/vitdet_coco.py 8`` (the earlier
name of ``mask-rcnn_vitdet-b-dyt_d128_8xb4-12e_coco-1024x1024.py``) cannot run here (no
GPUs, no COCO). The launcher forms its 8-process command (a stand-in python records it),
then ``tools/train.py`` runs that command's config and arguments up to the first training
step: the same argument parsing and Runner set-up build the full model, the optimiser
wrapper and the data pipelines, and the pipelines run on one image."""
import json
import subprocess
import sys

from helpers.tools import PLAIN_PATH, REPO

# Runs tools/train.py with Runner.train replaced by what it does before the first
# step (build the optimiser wrapper) plus building and running the pipelines.
DRIVER = r'''
import copy, json, os, runpy, sys
import numpy as np
from PIL import Image
from mmengine.dataset import Compose
from mmengine.runner import Runner


def build_without_training(runner):
    wrapper = runner.build_optim_wrapper(runner.optim_wrapper)
    params = list(runner.model.parameters())
    trainable = {id(p) for p in params if p.requires_grad}
    optimised = [id(p) for group in wrapper.optimizer.param_groups for p in group['params']]
    image = np.random.default_rng(0).integers(0, 255, (96, 128, 3), dtype=np.uint8)
    Image.fromarray(image).save('image.png')
    sample = dict(img_path='image.png', img_id=0, height=96, width=128, instances=[dict(
        bbox=[20., 10., 70., 60.], bbox_label=3, ignore_flag=0,
        mask=[[20., 10., 70., 10., 70., 60., 20., 60.]])])
    pipelines = {}
    for split in ('train', 'test'):
        steps = runner.cfg[f'{split}_dataloader'].dataset.pipeline
        packed = Compose(steps)(copy.deepcopy(sample))
        pipelines[split] = dict(transforms=[t['type'] for t in steps],
                                inputs=list(packed['inputs'].shape),
                                boxes=len(packed['data_samples'].gt_instances))
    print(json.dumps(dict(
        model=type(runner.model).__name__, backbone=type(runner.model.backbone).__name__,
        blocks=len(runner.model.backbone.blocks), wrapper=type(wrapper).__name__,
        optimizer=type(wrapper.optimizer).__name__,
        groups=sorted({(g['lr'], g['weight_decay']) for g in wrapper.optimizer.param_groups}),
        optimised_once=len(optimised) == len(set(optimised)),
        optimised_is_trainable=set(optimised) == trainable,
        frozen=sum(p.numel() for p in params if not p.requires_grad),
        pipelines=pipelines)))


Runner.train = build_without_training
sys.argv = sys.argv[1:]  # python -c DRIVER tools/train.py CONFIG ...
sys.path.insert(0, os.path.dirname(sys.argv[0]))  # as python puts a script's folder first
runpy.run_path(sys.argv[0], run_name='__main__')
'''


def launched_command(tmp_path, *typed):
    """The arguments ``bash tools/<typed>`` gives python, typed in the repository."""
    record = tmp_path / 'python.args'
    python = tmp_path / 'python'
    python.write_text(f'#!/bin/bash\n[[ "$1" == -c ]] && exit 0\nprintf "%s\\n" "$@" > {record}\n')
    python.chmod(0o755)
    subprocess.run(['bash', *typed],
                   cwd=REPO,
                   env={
                       'PATH': PLAIN_PATH,
                       'PYTHON': str(python)
                   },
                   check=True,
                   timeout=60)
    return record.read_text().splitlines()


def test_the_design_card_command_builds_through_tools_train(tmp_path):
    launched = launched_command(tmp_path, 'tools/dist_train.sh', 'configs/dyt/vitdet_coco.py', '8')
    assert launched[:2] == ['-m', 'torch.distributed.run'] and '--nproc_per_node=8' in launched
    script = next(arg for arg in launched if arg.endswith('/train.py'))
    assert launched[launched.index(script) +
                    1:] == ['configs/dyt/vitdet_coco.py', '--launcher', 'pytorch']
    coco = tmp_path / 'data/coco'  # the layout only: the Runner reads no data before training
    for folder in ('train2017', 'val2017', 'annotations'):
        (coco / folder).mkdir(parents=True)
    for split in ('train', 'val'):
        (coco / f'annotations/instances_{split}2017.json').write_text('{}')
    # The pretrained file the config names, likewise: tools/train.py checks that it
    # exists, init_weights (the first step) would read it.
    (tmp_path / 'checkpoints').mkdir()
    (tmp_path / 'checkpoints/vit-base-p16_in21k.pth').touch()
    # AMP (the config's AmpOptimWrapper) needs a GPU: on the CPU, as tools/train.py advises.
    # What each of the 8 processes runs, without the launcher (no process group here).
    args = [
        REPO / script, REPO / 'configs/dyt/vitdet_coco.py', '--work-dir', tmp_path / 'work',
        '--cfg-options', 'optim_wrapper.type=OptimWrapper'
    ]
    proc = subprocess.run([sys.executable, '-c', DRIVER, *map(str, args)],
                          cwd=tmp_path,
                          env={
                              'PATH': PLAIN_PATH,
                              'PYTHONPATH': str(REPO),
                              'OMP_NUM_THREADS': '1',
                              'HOME': str(tmp_path)
                          },
                          capture_output=True,
                          text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    built = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (built['model'], built['backbone'], built['blocks']) == ('DyTMaskRCNN', 'DyTViTDet', 12)
    assert (built['wrapper'], built['optimizer']) == ('OptimWrapper', 'AdamW')
    # layer_decay_rate 1.0: one rate; weight decay 0.1, and 0 for biases and norms
    assert built['groups'] == [[1e-4, 0.0], [1e-4, 0.1]]
    assert built['optimised_once'] and built['optimised_is_trainable']
    assert built['frozen'] > 85_000_000  # the ViT-B/16 encoder stays frozen
    train, test = built['pipelines']['train'], built['pipelines']['test']
    assert train['transforms'] == [
        'LoadImageFromFile', 'LoadAnnotations', 'RandomResize', 'RandomCrop', 'FilterAnnotations',
        'RandomFlip', 'Pad', 'PackDetInputs'
    ]
    assert train['inputs'] == test['inputs'] == [3, 1024, 1024]  # LSJ canvas
    assert test['boxes'] == 1
