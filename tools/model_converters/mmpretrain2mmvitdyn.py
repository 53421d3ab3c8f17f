"""Convert an mmpretrain VisionTransformer (or a classifier holding one) to mmvitdyn.

    python tools/model_converters/mmpretrain2mmvitdyn.py SRC DST [--classifier]
"""
from mmvitdyn.models.utils.convert_cli import main

if __name__ == '__main__':
    main(('mmpretrain', ), __doc__.splitlines()[0])
