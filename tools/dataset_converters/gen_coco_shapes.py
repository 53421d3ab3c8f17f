"""Generate the COCO-format shapes instance-segmentation set.

Run ``python tools/dataset_converters/gen_coco_shapes.py --help``
for the options: the arguments of ``generate_coco_shapes``.
"""
from mmvitdyn.datasets.generators import generate_coco_shapes
from mmvitdyn.datasets.generators.cli import main

if __name__ == '__main__':
    main(generate_coco_shapes)
