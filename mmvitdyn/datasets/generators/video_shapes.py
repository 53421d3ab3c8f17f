"""Drawn shapes as a video-recognition set of real .mp4 clips in mmaction2's
``VideoDataset`` layout (docs/data_checks.md)."""
from pathlib import Path
from typing import Dict

import numpy as np
from PIL import Image, ImageDraw

from .atomic import GeneratedSet, write_atomically
from .checks import require_at_least
from .coco_shapes import COCO_SHAPES_CLASSES, COCO_SHAPES_PALETTE, shape_polygon
from .texture import noisy_fill, to_uint8

VIDEO_SHAPES_ROOT = 'data/video_shapes'
# The classes: the pairs of shapes a clip shows, as indices of COCO_SHAPES_CLASSES.
VIDEO_SHAPES_PAIRS = ((0, 1), (0, 2), (1, 2))
VIDEO_SHAPES_CLASSES = tuple('+'.join(COCO_SHAPES_CLASSES[i] for i in pair)
                             for pair in VIDEO_SHAPES_PAIRS)
_SPLITS = ('train', 'val')


def draw_frame(rng: np.random.Generator, size: int, shape: int) -> np.ndarray:
    """One (size, size, 3) uint8 RGB frame showing shape ``shape`` in its colour."""
    background = noisy_fill(
        rng, size, size, rng.uniform(70, 170, size=3), contrast=0.35, cells=4, grain=0)
    canvas = Image.fromarray(to_uint8(background))
    radius = rng.uniform(0.2, 0.35) * size
    centre = rng.uniform(radius, size - radius, size=2)
    polygon = shape_polygon(COCO_SHAPES_CLASSES[shape], centre, radius, rng.uniform(0, 2 * np.pi))
    ImageDraw.Draw(canvas).polygon([tuple(p) for p in polygon], fill=COCO_SHAPES_PALETTE[shape])
    grain = rng.normal(0, 6, (size, size, 3))
    return to_uint8(np.asarray(canvas, dtype=np.float32) + grain)


def clip_shapes(rng: np.random.Generator, label: int, num_frames: int) -> np.ndarray:
    """The shape of each frame of a clip of class ``label``: both shapes of its
    pair, each on at least one frame, in random order. Returns (num_frames,) ints."""
    first, second = VIDEO_SHAPES_PAIRS[label]
    num_first = int(rng.integers(1, num_frames))
    return rng.permutation([first] * num_first + [second] * (num_frames - num_first))


def write_clip(path: Path, frames: np.ndarray, fps: int) -> None:
    """Write (T, H, W, 3) uint8 RGB frames as an ``mp4v`` .mp4 file.

    Raises:
        RuntimeError: OpenCV could not open a writer for ``path``.
    """
    import cv2  # imported here so that importing mmvitdyn does not load OpenCV
    height, width = frames.shape[1:3]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*'mp4v'), fps, (width, height))
    if not writer.isOpened():
        raise RuntimeError(f'OpenCV cannot write {path} with the mp4v codec: its video I/O '
                           '(FFmpeg) is missing from this opencv-python build')
    try:
        for frame in frames:
            writer.write(np.ascontiguousarray(frame[..., ::-1]))
    finally:
        writer.release()


def generate_video_shapes(out_dir: str = VIDEO_SHAPES_ROOT,
                          frame_size: int = 32,
                          num_frames: int = 8,
                          num_train: int = 48,
                          num_val: int = 24,
                          fps: int = 8,
                          seed: int = 0,
                          overwrite: bool = False) -> GeneratedSet:
    """Write the video shapes set; returns the :class:`GeneratedSet`.

    Args:
        out_dir (str): Data root. Defaults to ``'data/video_shapes'``.
        frame_size (int): Side of the square frames, even, >= 16. Defaults to 32.
        num_frames (int): Frames per clip, >= 2. Defaults to 8.
        num_train, num_val (int): Clips per split, >= 1. Defaults to 48, 24.
        fps (int): Frame rate the files declare, >= 1. Defaults to 8.
        seed (int): Seed. Defaults to 0.
        overwrite (bool): Replace an existing ``out_dir``. Defaults to False.
    """
    require_at_least(16, frame_size=frame_size)
    if frame_size % 2:
        raise ValueError(f'frame_size must be even (the mp4v codec needs it), got {frame_size}')
    require_at_least(2, num_frames=num_frames)
    require_at_least(1, num_train=num_train, num_val=num_val, fps=fps)
    params = dict(
        frame_size=frame_size,
        num_frames=num_frames,
        num_train=num_train,
        num_val=num_val,
        fps=fps,
        seed=seed)
    counts = dict(train=num_train, val=num_val)

    def write(root: Path) -> Dict[str, int]:
        for split_index, split in enumerate(_SPLITS):
            (root / 'videos' / split).mkdir(parents=True)
            lines = []
            for index in range(counts[split]):
                rng = np.random.default_rng((seed, split_index, index))
                label = index % len(VIDEO_SHAPES_CLASSES)
                frames = np.stack([
                    draw_frame(rng, frame_size, shape)
                    for shape in clip_shapes(rng, label, num_frames)
                ])
                name = f'{split}/{index:06d}.mp4'
                write_clip(root / 'videos' / name, frames, fps)
                lines.append(f'{name} {label}\n')
            (root / f'{split}_list_videos.txt').write_text(''.join(lines))
        (root / 'classes.txt').write_text('\n'.join(VIDEO_SHAPES_CLASSES) + '\n')
        return counts

    return write_atomically(out_dir, 'video_shapes/1', params, write, overwrite)
