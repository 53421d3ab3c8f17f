"""The guides of docs/ as their tests read and run them: their fenced blocks
and commands, the user's data sets in the layouts the guides describe
(written from the generated sets), and the guides' configs for a workspace.

The guides' detection and segmentation configs are ``_base_`` diffs of ViT-B
configs (1024 and 512 px); in the workspace the same diff sits on the small
config of the same task, under the same file name, so the guides' commands
run as typed. The classification configs keep their ViT-B/16 recipe; the
tests shrink it to ViT-Ti/16 (same 224 px input, 16 px patches, 12 blocks)
with ``--cfg-options``, with the other short-run options below.
"""
import contextlib
import io
import json
import re
import runpy
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
from PIL import Image

from .configs import DYT_ADE_CFG, DYT_COCO_CFG
from .tools import REPO, run_tool, tool_command

FINETUNE_GUIDE = REPO / 'docs/finetune_custom_data.md'
TOOLS_GUIDE = REPO / 'docs/openmmlab_tools.md'
EXAMPLES = REPO / 'configs/examples'
CLS_CONFIG = 'configs/examples/vit-b-p16-dyt_d16_1xb64-100e_my-set-224px.py'
CLS_WORK_DIR = 'work_dirs/vit-b-p16-dyt_d16_1xb64-100e_my-set-224px'
# The small config of the same task for each ViT-B config the guides' configs inherit.
SMALL_CONFIGS = {
    'mask-rcnn_vitdet-b-dyt_d128_8xb4-12e_coco-1024x1024.py': DYT_COCO_CFG,
    'upernet_vit-b-p16-dyt_d64_8xb2-160k_ade20k-512x512.py': DYT_ADE_CFG,
}
# The user's classification set: three digit classes, the first images of each.
DIGIT_CLASSES = {'zero': '0', 'one': '1', 'two': '2'}
IMAGES_PER_CLASS = 4
# ViT-Ti/16 in place of ViT-B/16 (a smaller width and head count: the same
# input, patches and depth).
VIT_TINY = ['model.backbone.arch=tiny', 'model.head.in_channels=192']
CLS_TRAIN_OPTIONS = VIT_TINY + ['train_dataloader.batch_size=4', 'val_dataloader.batch_size=12']
# The segmentation set's classes (mmseg ADE20K names, as the generated set uses).
SEG_CLASSES = ('building', 'sky', 'tree', 'road', 'grass')


def fenced_blocks(path: Path, language: str) -> list:
    """The text of each fenced block of ``path`` opened with ```<language>
    (a bare ``` for ``language=''``)."""
    blocks, opened, lines = [], None, []
    for line in path.read_text().splitlines(keepends=True):
        if opened is None:
            if line.startswith('```'):
                opened, lines = line.strip()[3:], []
        elif line.strip() == '```':
            if opened == language:
                blocks.append(''.join(lines))
            opened = None
        else:
            lines.append(line)
    return blocks


def command(path: Path, start: str) -> list:
    """The tokens of the command of ``path``'s bash blocks that is ``start``,
    or else the one that starts with it (there must be one); ``$NAME`` stands
    for what the guide's ``NAME=$(python -c "CODE")`` line prints (CODE run
    in this process)."""
    lines = [line.strip() for block in fenced_blocks(path, 'bash') for line in block.splitlines()]
    found = [line for line in lines if line == start
             ] or [line for line in lines if line.startswith(start)]
    assert len(found) == 1, f'{path.name}: {len(found)} commands start with {start!r}'
    text = found[0]
    for line in lines:
        match = re.fullmatch(r'(\w+)=\$\(python -c "(.*)"\)', line)
        if match:
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):  # in this process: its imports are done
                exec(match.group(2), {})
            text = text.replace(f'${match.group(1)}', printed.getvalue().strip())
    return shlex.split(text)


def run_command(tokens: list, cwd: Path, options=()) -> subprocess.CompletedProcess:
    """Run a guide's ``python SCRIPT ARGS`` command in ``cwd``, ``options``
    appended to its ``--cfg-options`` (added if it has none): a script of
    tools/ through ``run_tool``, another (an OpenMMLab package's) with the
    same interpreter and environment."""
    assert tokens[0] == 'python', tokens
    args = list(tokens[2:])
    if options:
        args += [] if '--cfg-options' in args else ['--cfg-options']
        args += list(options)
    if tokens[1].startswith('tools/'):
        return run_tool([tokens[1][len('tools/'):], *args], cwd)
    _, env = tool_command(['train.py'])  # the environment run_tool gives a tool
    proc = subprocess.run([sys.executable, tokens[1], *args],
                          cwd=cwd,
                          env=env,
                          capture_output=True,
                          text=True,
                          timeout=900)
    assert proc.returncode == 0, (f'{tokens[1]} exited {proc.returncode}\n'
                                  f'{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}')
    return proc


def run_in_process(tokens: list, monkeypatch) -> None:
    """Run a guide's ``python SCRIPT ARGS`` command as ``python`` would run the
    script, in this process (for a package's analysis tool: a subprocess
    would spend its time importing what this process has imported)."""
    import matplotlib.pyplot as plt
    assert tokens[0] == 'python', tokens
    monkeypatch.setattr(sys, 'argv', tokens[1:])
    try:
        runpy.run_path(tokens[1], run_name='__main__')
    finally:
        plt.close('all')


def write_classification_set(digits: Path, root: Path) -> None:
    """``root/{train,val}/<class>/`` (ImageFolder) and ``root/meta/{train,val}.txt``
    listing the same images, from the generated digits."""
    (root / 'meta').mkdir(parents=True)
    for split in ('train', 'val'):
        lines = []
        for label, (name, digit) in enumerate(DIGIT_CLASSES.items()):
            (root / split / name).mkdir(parents=True)
            for image in sorted((digits / split / digit).iterdir())[:IMAGES_PER_CLASS]:
                shutil.copy(image, root / split / name / image.name)
                lines.append(f'{split}/{name}/{image.name} {label}\n')
        (root / 'meta' / f'{split}.txt').write_text(''.join(lines))


def write_coco_set(shapes: Path, root: Path) -> None:
    """``root/images/{train,val}/`` and ``root/annotations/{train,val}.json``
    from the generated COCO shapes."""
    (root / 'annotations').mkdir(parents=True)
    for split in ('train', 'val'):
        shutil.copytree(shapes / f'{split}2017', root / 'images' / split)
        shutil.copy(shapes / f'annotations/instances_{split}2017.json',
                    root / 'annotations' / f'{split}.json')


def write_seg_set(ade_shapes: Path, root: Path) -> None:
    """``root/img_dir/{train,val}/*.jpg`` and ``root/ann_dir/{train,val}/*.png``
    from the generated ADE20K-layout shapes, whose maps hold ADE20K index + 1:
    0 stays unlabelled, class i of ``SEG_CLASSES`` becomes i + 1, any other
    value 0."""
    from mmseg.datasets import ADE20KDataset
    ade_classes = ADE20KDataset.METAINFO['classes']
    lookup = np.zeros(256, np.uint8)
    for index, name in enumerate(SEG_CLASSES):
        lookup[ade_classes.index(name) + 1] = index + 1
    for split, ade_split in (('train', 'training'), ('val', 'validation')):
        shutil.copytree(ade_shapes / 'images' / ade_split, root / 'img_dir' / split)
        (root / 'ann_dir' / split).mkdir(parents=True)
        for label_map in (ade_shapes / 'annotations' / ade_split).iterdir():
            values = np.asarray(Image.open(label_map))
            Image.fromarray(lookup[values]).save(root / 'ann_dir' / split / label_map.name)


def workspace_config(text: str, small: bool = True) -> str:
    """A guide config for the workspace: its ``'../...'`` bases made absolute,
    a ViT-B base of ``SMALL_CONFIGS`` replaced by the small config (unless
    ``small`` is False)."""

    def base(match):
        relative = match.group(1)
        small_config = SMALL_CONFIGS.get(Path(relative).name) if small else None
        return repr(str(small_config if small_config is not None else REPO / 'configs' / relative))

    return re.sub(r"'\.\./([^']+\.py)'", base, text)


def json_logs(work_dir: Path) -> list:
    """The records of the JSON log of each run in ``work_dir``
    (``<timestamp>/vis_data/<timestamp>.json``), oldest run first."""
    logs = [run / 'vis_data' / f'{run.name}.json' for run in sorted(work_dir.iterdir())]
    logs = [log for log in logs if log.is_file()]
    assert logs, f'no JSON log under {work_dir}'
    return [[json.loads(line) for line in log.read_text().splitlines()] for log in logs]
