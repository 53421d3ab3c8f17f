"""Export a trained Cluster-Learngene descendant with plain FFNs and heads.

    python tools/learngene/materialize_descendant.py CONFIG CHECKPOINT --out FILE

Each FFN that shares its group's W through the learnable expansion g becomes
a plain FFN holding its current W_t = g_t(W), and tied heads become
independent heads, so the exported model needs no expansion at inference.
Outputs are unchanged. Load the result with the same config and
``--cfg-options model.backbone.ffn_sharing=independent model.backbone.tie_heads=False``.
"""
import mmvitdyn  # noqa: F401 (first: OpenMP's wait policy, before torch loads) isort: skip
import argparse

from mmengine.config import DictAction
from mmengine.runner import load_checkpoint

from mmvitdyn.apis import init_model
from mmvitdyn.checkpoint import trusted_checkpoints, trusted_names
from mmvitdyn.cli import add_trust_option
from mmvitdyn.engine import SetupError, config_inputs, load_config
from mmvitdyn.learngene import LearngeneViT
from mmvitdyn.utils import OutputIsInputError, refuse_overwriting_inputs, save_atomically

MATERIALIZED = 'model.backbone.ffn_sharing=independent model.backbone.tie_heads=False'


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description='Materialise the FFNs and heads of a learngene descendant')
    parser.add_argument('config', help='config of the descendant')
    parser.add_argument('checkpoint', help='checkpoint of the trained descendant')
    parser.add_argument('--out', required=True, help='checkpoint to write')
    parser.add_argument(
        '--cfg-options', nargs='+', action=DictAction, help='override config entries')
    add_trust_option(parser)
    return parser, parser.parse_args(argv)


def main(argv=None):
    parser, args = parse_args(argv)
    with trusted_checkpoints(trusted_names(args.trust_checkpoint, [args.checkpoint])):
        try:
            cfg = load_config(args.config, args.cfg_options)
            inputs = config_inputs(cfg) + [args.checkpoint]
            refuse_overwriting_inputs(args.out, inputs)
            model = init_model(cfg)
            if not isinstance(model.backbone, LearngeneViT):
                raise SetupError(
                    f'the backbone of {args.config} is {type(model.backbone).__name__}, '
                    'not a LearngeneViT')
        except (SetupError, OutputIsInputError) as err:
            parser.error(str(err))
        load_checkpoint(model, args.checkpoint, map_location='cpu', strict=True)
        model.backbone.materialize()
        save_atomically(
            dict(
                state_dict=model.state_dict(), meta=dict(source=args.checkpoint,
                                                         note=MATERIALIZED)), args.out, inputs)
        print(f'wrote {args.out}; use it with --cfg-options {MATERIALIZED}')


if __name__ == '__main__':
    main()
