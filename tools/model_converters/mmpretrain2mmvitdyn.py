"""Convert an mmpretrain VisionTransformer (or a classifier holding one) to mmvitdyn.

    python tools/model_converters/mmpretrain2mmvitdyn.py SRC DST [--classifier]
        [--drop-dist-token] [--trust-checkpoint [PATH ...]]
"""
from _converter_cli import convert


def main(argv=None) -> str:
    return convert(('mmpretrain', ), __doc__.splitlines()[0], argv)


if __name__ == '__main__':
    main()
