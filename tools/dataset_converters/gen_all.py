"""Generate every default data set (digits, coco_shapes, ade_shapes).

    python tools/dataset_converters/gen_all.py [--data-dir data] [--overwrite]

Each set goes to ``<data-dir>/<name>`` with its generator's defaults.
"""
import argparse
from pathlib import Path
from typing import List, Optional

from mmvitdyn.datasets.generators import GENERATORS


def main(argv: Optional[List[str]] = None) -> None:
    """Parse ``argv`` and generate each set, printing what was written."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--data-dir', default='data')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--overwrite', action='store_true')
    args = parser.parse_args(argv)
    for generator in GENERATORS.values():
        out_dir = Path(args.data_dir) / Path(generator.default_root).name
        generated = generator.generate(
            out_dir=str(out_dir), seed=args.seed, overwrite=args.overwrite)
        print(generated.summary())


if __name__ == '__main__':
    main()
