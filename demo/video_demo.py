"""Run a trained mmvitdyn video model on a video file: its class and, for a DyT model,
where each frame's tokens run and skip.

    python demo/video_demo.py VIDEO CONFIG CHECKPOINT [--out-dir DIR] [--device cpu]
                              [--cfg-options k=v ...]

The video goes through the config's test pipeline (mmaction2's decoding,
frame sampling, resizing, ``FormatShape``) and the model's data
preprocessor, as in evaluation. Printed: the predicted class and score (the
views' scores averaged as the head's ``average_clips`` says), the clip's
activation rate and GFLOPs (every frame at the tokens it ran, plus the head).
Written into ``DIR`` (default ``work_dirs/video_demo``):
``<video>_dispatch.png`` for a DyT model, a row per frame (and view) and
dispatched part: the frame, then per block the frame with the patches that
skip the part hatched dark grey; ``summary.json``, the printed figures with each
frame's activation rate and the masks themselves (per block, part -> one
0/1 list of patches per frame, frames in order, views one after another).
"""
import mmvitdyn  # noqa: F401 (first: OpenMP's wait policy, before torch loads) isort: skip
import os
import os.path as osp
from pathlib import Path
from typing import Dict, List

import numpy as np
import torch
from _demo_cli import (load_demo_config, parse_demo_args, refuse_outputs_over_inputs, setup_errors,
                       trusted)
from mmengine.dataset import Compose, pseudo_collate

from mmvitdyn.analysis import (DyTFlopCounter, TensorForward, count_flops, find_dyt_backbone,
                               is_recognizer, part_rates)
from mmvitdyn.apis import init_model
from mmvitdyn.checkpoint import is_local_path
from mmvitdyn.engine import SetupError
from mmvitdyn.utils import dump_json_atomically
from mmvitdyn.visualization import SkipView, plot_skip_map


def parse_args(argv=None):
    return parse_demo_args('Inference on a video with a trained model', 'video',
                           'a video file (e.g. .mp4)',
                           'config file of the video model (mmaction2 scope)',
                           'work_dirs/video_demo', argv)


def output_paths(video: str, out_dir: str) -> List[str]:
    """The skip-map picture, then the summary."""
    return [
        osp.join(out_dir, f'{Path(video).stem}_dispatch.png'),
        osp.join(out_dir, 'summary.json')
    ]


def load_clip(cfg, video: str) -> dict:
    """``video`` through the config's test pipeline, collated as a dataloader would
    (the fields mmaction2's ``inference_recognizer`` gives a video file)."""
    pipeline = Compose(cfg.test_dataloader.dataset.pipeline)
    return pseudo_collate([pipeline(dict(filename=video, label=-1, start_index=0, modality='RGB'))])


def seen_frames(model, inputs: torch.Tensor) -> np.ndarray:
    """The frames (views * T, H, W, 3) of one preprocessed clip (views, C, T, H, W)
    as RGB uint8 pictures (mmaction2 decodes frames as RGB)."""
    preprocessor = model.data_preprocessor
    if getattr(preprocessor, '_enable_normalize', False):
        inputs = inputs * preprocessor.std.cpu() + preprocessor.mean.cpu()
    frames = inputs.transpose(1, 2).flatten(0, 1)  # (views * T, C, H, W)
    return frames.clamp(0, 255).byte().permute(0, 2, 3, 1).numpy()


def mask_lists(masks: List[Dict[str, torch.Tensor]]) -> List[Dict[str, list]]:
    """Per block, part -> (frames, N) 0/1 lists."""
    return [{part: (m != 0).int().tolist() for part, m in block.items()} for block in masks]


def main(argv=None):
    parser, args = parse_args(argv)
    with trusted(args):
        with setup_errors(parser):
            if is_local_path(args.video) and not osp.isfile(args.video):
                raise SetupError(f'video {args.video!r} does not exist')
            cfg = load_demo_config(args)
            if cfg.get('default_scope') != 'mmaction':
                raise SetupError(f"{args.config}: default_scope={cfg.get('default_scope')!r}; "
                                 "a video model's config has 'mmaction' (demo/image_demo.py "
                                 'runs the others)')
            written = output_paths(args.video, args.out_dir)
            refuse_outputs_over_inputs(written, [args.video], cfg, args)
            model = init_model(cfg, args.checkpoint, device=args.device)
        if not is_recognizer(model):
            parser.error(f'{args.config}: {type(model).__name__} is not an mmaction2 recogniser')
        data = load_clip(cfg, args.video)
        backbone = find_dyt_backbone(model)
        dispatches = backbone is not None and backbone.dispatch is not None
        with torch.no_grad():
            inputs = model.data_preprocessor(data, False)['inputs']
            traced = TensorForward(model)
            counter = DyTFlopCounter(traced, inputs) if dispatches else count_flops(traced, inputs)
            sample = model.test_step(data)[0]  # the masks below are of this forward
        score = sample.pred_score.cpu()
        label = int(score.argmax())
        classes = (getattr(model, 'dataset_meta', None) or {}).get('classes')
        row = dict(
            video=args.video,
            config=args.config,
            checkpoint=args.checkpoint,
            prediction=label,
            prediction_name=classes[label] if classes else None,
            score=float(score[label]),
            input_shape=list(inputs.shape[1:]))
        os.makedirs(args.out_dir, exist_ok=True)
        if dispatches:
            masks = [{
                part: m.cpu()
                for part, m in block.items()
            } for block in backbone.dispatch_masks()]
            row['gflops'] = float(counter(masks)) / 1e9
            rates = part_rates(masks)[1]  # (parts, frames)
            row.update(activation_rate=float(rates.mean()), frame_rates=rates.mean(0).tolist())
            grid = tuple(s // backbone.patch_size for s in inputs.shape[-2:])
            frames = seen_frames(model, inputs[0])
            views = [
                SkipView(frame, [{
                    part: m[t]
                    for part, m in block.items()
                } for block in masks], grid, f'frame {t}') for t, frame in enumerate(frames)
            ]
            plot_skip_map(views, backbone.patch_size, Path(args.video).stem, written[0])
            row.update(pictures=[written[0]], masks=mask_lists(masks))
        else:
            row['gflops'] = float(counter) / 1e9
        dump_json_atomically(row, written[1])
        name = f' {row["prediction_name"]}' if classes else ''
        rate = row.get('activation_rate')
        print(f'\n{"video":<28} {"act. rate":>9} {"GFLOPs":>9}  prediction')
        print(f'{osp.basename(args.video):<28} {"-" if rate is None else f"{rate:.4f}":>9} '
              f'{row["gflops"]:>9.4f}  class {label}{name} (score {row["score"]:.2f})')
        if dispatches:
            print('per frame:   ' + '  '.join(f'{t}={r:.2f}'
                                              for t, r in enumerate(row['frame_rates'])))
            print(f'Pictures:\n  {written[0]}')
        print(f'Figures: {written[1]}')


if __name__ == '__main__':
    main()
