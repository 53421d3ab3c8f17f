"""Generate the hand-written digits set (mmpretrain CustomDataset folders).

Run ``python tools/dataset_converters/gen_digits.py --help``
for the options: the arguments of ``generate_digits``.
"""
from _generator_cli import main

from mmvitdyn.datasets.generators import generate_digits

if __name__ == '__main__':
    main(generate_digits)
