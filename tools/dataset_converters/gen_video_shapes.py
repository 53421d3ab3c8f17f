"""Generate the video shapes set (real .mp4 clips in mmaction2 VideoDataset layout).

Run ``python tools/dataset_converters/gen_video_shapes.py --help``
for the options: the arguments of ``generate_video_shapes``.
"""
from _generator_cli import main

from mmvitdyn.datasets.generators import generate_video_shapes

if __name__ == '__main__':
    main(generate_video_shapes)
