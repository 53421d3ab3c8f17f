"""Generate the ADE20K-layout shapes semantic-segmentation set.

Run ``python tools/dataset_converters/gen_ade_shapes.py --help``
for the options: the arguments of ``generate_ade_shapes``.
"""
from mmvitdyn.datasets.generators import generate_ade_shapes
from mmvitdyn.datasets.generators.cli import main

if __name__ == '__main__':
    main(generate_ade_shapes)
