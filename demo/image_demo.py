"""Run a trained mmvitdyn model on your own image(s), as OpenMMLab's demos do.

    python demo/image_demo.py INPUT CONFIG CHECKPOINT [--out-dir DIR] [--device cpu]
                              [--cfg-options k=v ...]

INPUT is an image file or a folder of images. The task follows the config's
``default_scope``: mmpretrain (classification), mmdet (detection and
instance segmentation) or mmseg (semantic segmentation), each run through
that library's Inferencer, which saves its usual picture under
``DIR/vis/``. For a DyT model the demo also draws, per backbone forward
(one, or one per crop under sliding-window inference), the input the
backbone saw with the patches that skip each block part hatched dark grey
(``DIR/<image>_dispatch.png``, a row per forward and part), and prints each image's activation rate
and GFLOPs (mmengine's counter; DyT parts counted at the tokens they ran).
Segmentation also writes each image's label map, ``DIR/pred/<image>.png``,
in the values of the data set's own label files: the class index, plus 1
when the config's data set sets ``reduce_zero_label`` (files hold 1..C
there, 0 for "no class", as ADE20K's do).
``DIR/summary.json`` holds the printed figures of every image run into
``DIR`` with this config and checkpoint (a later run adds its images and
replaces the rows of those it runs again); a ``DIR`` that holds another
model's summary is refused.
"""
import mmvitdyn  # noqa: F401 (first: OpenMP's wait policy, before torch loads) isort: skip
import inspect
import json
import os
import os.path as osp
from pathlib import Path
from typing import Dict, List, Optional

import cv2
import numpy as np
import torch
from _demo_cli import (load_demo_config, parse_demo_args, refuse_outputs_over_inputs, setup_errors,
                       trusted)

from mmvitdyn.analysis import (BackboneForward, BackboneRecorder, DyTFlopCounter, TensorForward,
                               count_flops, part_rates)
from mmvitdyn.apis import build_inferencer
from mmvitdyn.checkpoint import is_local_path
from mmvitdyn.engine import SetupError
from mmvitdyn.utils import atomic_target, dump_json_atomically
from mmvitdyn.visualization import SkipView, plot_skip_map

SCORE_THR = 0.3  # the detections counted and drawn (mmdet's inferencer draws from 0.3)
IMAGE_SUFFIXES = ('.jpg', '.jpeg', '.png', '.bmp', '.webp', '.tif', '.tiff')


def parse_args(argv=None):
    return parse_demo_args('Inference on images with a trained model', 'input',
                           'an image file or a folder of images', 'config file of the model',
                           'work_dirs/image_demo', argv)


def list_images(path: str) -> List[str]:
    if osp.isfile(path):
        return [path]
    if osp.isdir(path):
        images = sorted(str(p) for p in Path(path).rglob('*') if p.suffix.lower() in IMAGE_SUFFIXES)
        if images:
            return images
        raise SetupError(f'input {path!r} holds no image files ({", ".join(IMAGE_SUFFIXES)})')
    raise SetupError(f'input {path!r} is neither an image file nor a folder')


def picture_paths(scope: str, image: str, out_dir: str) -> List[str]:
    """Where the demo writes ``image``'s pictures: the inferencer's, then the skip map's."""
    name = Path(image).stem + '.png' if scope == 'mmpretrain' else osp.basename(image)
    return [osp.join(out_dir, 'vis', name), osp.join(out_dir, f'{Path(image).stem}_dispatch.png')]


def label_map_path(image: str, out_dir: str) -> str:
    """Where the demo writes a segmentation's label map of ``image``."""
    return osp.join(out_dir, 'pred', Path(image).stem + '.png')


def output_paths(scope: str, image: str, out_dir: str) -> List[str]:
    """Every file the demo writes for ``image``."""
    label_map = [label_map_path(image, out_dir)] if scope == 'mmseg' else []
    return picture_paths(scope, image, out_dir) + label_map


def label_offset(cfg) -> int:
    """What the config's test data set's label files add to a class index: 1
    under ``reduce_zero_label`` (set in the config or by the data set type's
    default, as ``ADE20KDataset``'s), else 0."""
    from mmseg.registry import DATASETS
    dataset = cfg.test_dataloader.dataset
    if 'reduce_zero_label' in dataset:
        return int(bool(dataset.reduce_zero_label))
    dataset_type = DATASETS.get(dataset.type) if isinstance(dataset.type, str) else dataset.type
    default = inspect.signature(dataset_type).parameters.get('reduce_zero_label')
    return int(bool(default.default)) if default is not None else 0


def earlier_rows(summary: str, config: str, checkpoint: str) -> List[dict]:
    """The rows an earlier run of the same config and checkpoint left in
    ``summary`` ([] without one); another model's summary, or a file that is
    not a summary, is refused (its pictures would mix with this run's)."""
    if not osp.exists(summary):
        return []
    try:
        earlier = json.loads(Path(summary).read_text())
        model = (earlier['config'], earlier['checkpoint'])
        rows = earlier['images']
        if not all(isinstance(row, dict) and 'image' in row for row in rows):
            raise TypeError('an entry of "images" names no image')
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise SetupError(f'{summary} is not a summary this demo wrote ({err!r}): move it, or '
                         'choose another --out-dir') from None
    if [same_file(a, b) for a, b in zip(model, (config, checkpoint))] != [True, True]:
        raise SetupError(f'--out-dir {osp.dirname(summary)} holds the figures of config '
                         f'{model[0]} with checkpoint {model[1]} ({summary}); choose another '
                         f'--out-dir for {config} with {checkpoint}')
    return rows


def same_file(a: str, b: str) -> bool:
    """Whether two paths (or URLs) name the same file."""
    local = is_local_path(a) and is_local_path(b)
    return osp.realpath(a) == osp.realpath(b) if local else a == b


def merged_rows(earlier: List[dict], rows: List[dict]) -> List[dict]:
    """``earlier`` rows of images this run did not see, then this run's."""
    seen = {row['image'] for row in rows}
    return [row for row in earlier if row['image'] not in seen] + rows


def write_label_map(labels: np.ndarray, path: str) -> None:
    """Write an (H, W) map of label values 0..255 as an 8-bit PNG."""
    png = cv2.imencode('.png', labels.astype(np.uint8))[1]
    with atomic_target(path) as tmp:
        tmp.write_bytes(png.tobytes())


def check_outputs(scope: str, images: List[str], input_path: str, out_dir: str, cfg, args) -> None:
    """Refuse an ``out_dir`` inside the input folder (its pictures would be
    read as inputs next time), two images whose pictures would have the same
    path, and an output that is one of the images or of the other files the
    command reads (the config's files, its data, the checkpoint)."""
    if osp.isdir(input_path):
        folder, out = osp.realpath(input_path), osp.realpath(out_dir)
        if osp.commonpath([folder, out]) == folder:
            raise SetupError(f'--out-dir {out_dir} is inside the input folder {input_path}: '
                             'its pictures would be read as inputs next time; choose another')
    written: Dict[str, str] = {}
    for image in images:
        for path in output_paths(scope, image, out_dir):
            if path in written:
                raise SetupError(f'images {written[path]} and {image} would both be drawn to '
                                 f'{path}; run them with separate --out-dir')
            written[path] = image
    refuse_outputs_over_inputs([*written, osp.join(out_dir, 'summary.json')], images, cfg, args)


def run_inferencer(scope: str, inferencer, image: str, out_dir: str, offset: Optional[int] = None):
    """``(prediction text, picture path)``: one image through the task's
    inferencer (segmentation: its label map written, class index + ``offset``)."""
    if scope == 'mmpretrain':
        os.makedirs(osp.join(out_dir, 'vis'), exist_ok=True)  # mmpretrain makes one level only
        result = inferencer(image, show_dir=osp.join(out_dir, 'vis'), resize=224)[0]
        text = f'{result["pred_class"]} ({result["pred_score"]:.2f})'
        return text, picture_paths(scope, image, out_dir)[0]
    classes = inferencer.model.dataset_meta['classes']
    if scope == 'mmdet':
        return detect(inferencer, image, out_dir, classes), picture_paths(scope, image, out_dir)[0]
    # mmseg's own label maps are numbered by call, not named by image: written here
    pred = inferencer(image, out_dir=out_dir, pred_out_dir='')['predictions']
    write_label_map(np.asarray(pred) + offset, label_map_path(image, out_dir))
    labels, counts = np.unique(np.asarray(pred), return_counts=True)
    shares = sorted(zip(counts / counts.sum(), labels), reverse=True)
    text = ', '.join(f'{classes[label]} {share:.0%}' for share, label in shares[:3])
    return text, picture_paths(scope, image, out_dir)[0]


def detect(inferencer, image: str, out_dir: str, classes) -> str:
    """Detect objects in ``image`` and draw those scored >= :data:`SCORE_THR`,
    or, where none is (a short run's scores stay low), the best one alone, as
    the text says; the text counts the objects per class."""
    sample = inferencer(image, no_save_vis=True, return_datasamples=True)['predictions'][0]
    found = sample.pred_instances
    kept = [classes[label] for label in found.labels[found.scores >= SCORE_THR]]
    text = f'{len(kept)} objects (score >= {SCORE_THR})' + ''.join(f', {name} x{kept.count(name)}'
                                                                   for name in sorted(set(kept)))
    threshold = SCORE_THR
    if not kept and len(found):
        best = int(found.scores.argmax())
        sample.pred_instances, threshold = found[[best]], 0.0
        text += f'; drawn: the best, {classes[found.labels[best]]} {float(found.scores[best]):.2f}'
    inferencer.visualize([image], [sample], pred_score_thr=threshold, img_out_dir=out_dir)
    return text


def seen_image(model, inputs: torch.Tensor) -> np.ndarray:
    """One backbone input (3, H, W) as the RGB uint8 image it was before normalising."""
    preprocessor = model.data_preprocessor
    if getattr(preprocessor, '_enable_normalize', False):
        inputs = inputs * preprocessor.std.cpu() + preprocessor.mean.cpu()
    image = inputs.clamp(0, 255).byte().permute(1, 2, 0).numpy()
    # Loaded images are BGR; the preprocessor flips them when its config says so
    # (mmpretrain keeps that as to_rgb, mmseg as channel_conversion, mmdet as
    # mmengine's _channel_conversion).
    flipped = any(
        getattr(preprocessor, name, False)
        for name in ('to_rgb', 'channel_conversion', '_channel_conversion'))
    return image if flipped else image[..., ::-1]


class FlopCounts:
    """FLOPs of one backbone forward, with the count traced once per input size."""

    def __init__(self, model):
        self.model = TensorForward(model)
        self.counters: Dict[tuple, object] = {}

    def __call__(self, forward: BackboneForward) -> float:
        key = tuple(forward.inputs.shape[1:])
        example = forward.inputs[:1]
        if key not in self.counters:
            self.counters[key] = (
                DyTFlopCounter(self.model, example) if forward.masks else count_flops(
                    self.model, example))
        counter = self.counters[key]
        return float(counter(forward.masks).sum()) if forward.masks else float(counter)


def main(argv=None):
    parser, args = parse_args(argv)
    with trusted(args):
        with setup_errors(parser):
            images = list_images(args.input)
            cfg = load_demo_config(args)
            check_outputs(cfg.default_scope, images, args.input, args.out_dir, cfg, args)
            summary = osp.join(args.out_dir, 'summary.json')
            earlier = earlier_rows(summary, args.config, args.checkpoint)
            inferencer = build_inferencer(cfg, args.checkpoint, args.device)
        model, scope = inferencer.model, cfg.default_scope
        offset = label_offset(cfg) if scope == 'mmseg' else None
        backbone = model.backbone
        flop_counts = FlopCounts(model)
        rows = []
        for image in images:
            with torch.no_grad(), BackboneRecorder(backbone) as forwards:
                prediction, picture = run_inferencer(scope, inferencer, image, args.out_dir, offset)
            with torch.no_grad():
                gflops = sum(flop_counts(forward) for forward in forwards) / 1e9
            row = dict(
                image=image,
                prediction=prediction,
                gflops=gflops,
                backbone_forwards=len(forwards),
                pictures=[picture])
            if scope == 'mmseg':
                row['label_map'] = label_map_path(image, args.out_dir)
            if forwards[0].masks:
                rates = torch.cat([part_rates(f.masks)[1] for f in forwards], dim=1)
                row['activation_rate'] = float(rates.mean())
                views = [
                    SkipView(
                        seen_image(model, forward.inputs[0]), [{
                            part: m[0]
                            for part, m in block.items()
                        } for block in forward.masks],
                        tuple(s // backbone.patch_size for s in forward.inputs.shape[2:]),
                        f'crop {k}' if len(forwards) > 1 else '')
                    for k, forward in enumerate(forwards)
                ]
                out_file = picture_paths(scope, image, args.out_dir)[1]
                plot_skip_map(views, backbone.patch_size, Path(image).stem, out_file)
                row['pictures'].append(out_file)
            rows.append(row)
        print(f'\n{"image":<28} {"act. rate":>9} {"GFLOPs":>9}  prediction')
        for row in rows:
            rate = row.get('activation_rate')
            print(f'{osp.basename(row["image"]):<28} {"-" if rate is None else f"{rate:.4f}":>9} '
                  f'{row["gflops"]:>9.4f}  {row["prediction"]}')
        dump_json_atomically(
            dict(config=args.config, checkpoint=args.checkpoint, images=merged_rows(earlier, rows)),
            summary)
        print('\nPictures:\n' + '\n'.join(f'  {p}' for row in rows for p in row['pictures']))
        if offset is not None:
            values = 'class index + 1 (reduce_zero_label)' if offset else 'class index'
            print(f'Label maps ({values}, as the data set\'s label files):\n' +
                  '\n'.join(f'  {row["label_map"]}' for row in rows))
        print(f'Figures: {summary}')


if __name__ == '__main__':
    main()
