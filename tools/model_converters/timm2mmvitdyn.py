"""Convert a timm / DeiT / AugReg / MAE / DINOv2 / CLIP ViT (timm's .pth, DINOv2's or
OpenAI CLIP's original .pth) or a Google Flax ViT (.npz) to mmvitdyn.

    python tools/model_converters/timm2mmvitdyn.py SRC DST [--drop-dist-token] [--classifier]
        [--trust-checkpoint [PATH ...]]

e.g. the ImageNet-21k ViT-B/16 DyT starts from (timm's
``jx_vit_base_patch16_224_in21k-e5005f0a.pth`` or Google's ``ViT-B_16.npz``):

    python tools/model_converters/timm2mmvitdyn.py ViT-B_16.npz checkpoints/vit-base-p16_in21k.pth

A distilled DeiT keeps its distillation token (for ``dist_token=True``) unless
``--drop-dist-token``.
"""
from _converter_cli import convert


def main(argv=None) -> str:
    return convert(('timm', 'jax', 'dinov2', 'openai_clip'), ' '.join(__doc__.splitlines()[:2]),
                   argv)


if __name__ == '__main__':
    main()
