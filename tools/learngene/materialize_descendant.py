"""Export a trained Cluster-Learngene descendant with plain FFNs.

    python tools/learngene/materialize_descendant.py CONFIG CHECKPOINT --out FILE

Each FFN that shares its group's W through the learnable expansion g becomes
a plain FFN holding its current W_t = g_t(W), so the exported model needs no
expansion at inference. Outputs are unchanged. Load the result with the same
config and ``--cfg-options model.backbone.ffn_expansion=False``.
"""
import argparse

from mmengine.config import DictAction
from mmengine.registry import MODELS, init_default_scope
from mmengine.runner import load_checkpoint

import mmvitdyn  # noqa: F401  (registers modules, fixes checkpoint loading)
from mmvitdyn.engine.runner_setup import SetupError, load_config
from mmvitdyn.models.backbones import LearngeneViT
from mmvitdyn.utils import save_atomically


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='Materialise the FFNs of a learngene descendant')
    parser.add_argument('config', help='config of the descendant')
    parser.add_argument('checkpoint', help='checkpoint of the trained descendant')
    parser.add_argument('--out', required=True, help='checkpoint to write')
    parser.add_argument('--cfg-options',
                        nargs='+',
                        action=DictAction,
                        help='override config entries')
    return parser, parser.parse_args(argv)


def main(argv=None):
    parser, args = parse_args(argv)
    try:
        cfg = load_config(args.config, args.cfg_options)
        init_default_scope(cfg.default_scope)
        model = MODELS.build(cfg.model)
        if not isinstance(model.backbone, LearngeneViT):
            raise SetupError(f'the backbone of {args.config} is {type(model.backbone).__name__}, '
                             'not a LearngeneViT')
    except SetupError as err:
        parser.error(str(err))
    load_checkpoint(model, args.checkpoint, map_location='cpu', strict=True)
    model.backbone.materialize_ffns()
    save_atomically(
        dict(state_dict=model.state_dict(),
             meta=dict(source=args.checkpoint, note='model.backbone.ffn_expansion=False')),
        args.out)
    print(f'wrote {args.out}; use it with --cfg-options model.backbone.ffn_expansion=False')


if __name__ == '__main__':
    main()
