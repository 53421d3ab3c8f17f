"""Convert a checkpoint of the official DynamicViT code (raoyongming/DynamicViT, DeiT models).

    python tools/model_converters/dynamicvit2mmvitdyn.py SRC DST [--classifier]
        [--trust-checkpoint [PATH ...]]

The prediction modules ``score_predictor.{k}`` become ``predictors.{k}`` of
mmvitdyn's ``DynamicViT`` (give it as many ``prune_loc`` blocks: the
official DeiT runs prune before blocks 3, 6 and 9); the DeiT keeps timm's
names. The LV-ViT, Swin and ConvNeXt models of that code are refused by key.
With ``--classifier`` the result loads with ``load_from``.
"""
from _converter_cli import convert


def main(argv=None) -> str:
    return convert(('dynamicvit', ), __doc__.splitlines()[0], argv)


if __name__ == '__main__':
    main()
