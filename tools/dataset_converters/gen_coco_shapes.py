"""Generate the COCO-format shapes instance-segmentation set.

Run ``python tools/dataset_converters/gen_coco_shapes.py --help``
for the options: the arguments of ``generate_coco_shapes``.
"""
from _generator_cli import main

from mmvitdyn.datasets.generators import generate_coco_shapes

if __name__ == '__main__':
    main(generate_coco_shapes)
