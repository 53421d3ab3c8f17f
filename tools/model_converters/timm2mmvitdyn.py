"""Convert a timm / DeiT / AugReg ViT (.pth) or a Google Flax ViT (.npz) to mmvitdyn.

    python tools/model_converters/timm2mmvitdyn.py SRC DST [--drop-dist-token] [--classifier]
        [--trust-checkpoint]

e.g. the ImageNet-21k ViT-B/16 DyT starts from (timm's
``jx_vit_base_patch16_224_in21k-e5005f0a.pth`` or Google's ``ViT-B_16.npz``):

    python tools/model_converters/timm2mmvitdyn.py ViT-B_16.npz checkpoints/vit-base-p16_in21k.pth
"""
from _converter_cli import convert


def main(argv=None) -> str:
    return convert(('timm', 'jax'), __doc__.splitlines()[0], argv)


if __name__ == '__main__':
    main()
