"""Generate the ADE20K-layout shapes semantic-segmentation set.

Run ``python tools/dataset_converters/gen_ade_shapes.py --help``
for the options: the arguments of ``generate_ade_shapes``.
"""
from _generator_cli import main

from mmvitdyn.datasets.generators import generate_ade_shapes

if __name__ == '__main__':
    main(generate_ade_shapes)
