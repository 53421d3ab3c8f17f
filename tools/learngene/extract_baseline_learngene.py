"""Extract the learngene of a baseline of the Cluster-Learngene paper.

    python tools/learngene/extract_baseline_learngene.py {heuristic,auto,tleg} \\
        CONFIG CHECKPOINT --out FILE [--cfg-options k=v ...]

heuristic / auto: CONFIG is the ancestry's (a ViT, e.g.
configs/cluster_learngene/deit-s-p16_ancestry_in1k-224px.py, or a LeViT,
configs/cluster_learngene/levit-192_ancestry_in1k-224px.py) and CHECKPOINT
its weights; the learngene is the ancestry's last three blocks
(Heuristic-Learngene) or blocks 0-5 (Auto-Learngene; a LeViT's blocks
counted over its stages in order).
tleg: CONFIG is TLEG's Aux-Net (e.g.
configs/cluster_learngene/tleg-aux-vit-s-p16_levit-384-distill_8xb64-150e_in1k-224px.py)
and CHECKPOINT the trained Aux-Net; the learngene is its theta_A and theta_B.

Descendants read the file with ``LearngeneViT(init_mode=METHOD, learngene=FILE)``
(``LearngeneLeViT`` for a LeViT's).
"""
import mmvitdyn  # noqa: F401 (first: OpenMP's wait policy, before torch loads) isort: skip
import argparse
import os.path as osp

from build_learngene import build_ancestry
from mmengine.config import DictAction
from mmpretrain.models import LeViT

from mmvitdyn.checkpoint import trusted_checkpoints, trusted_names
from mmvitdyn.cli import add_trust_option
from mmvitdyn.engine import SetupError, config_inputs, load_config
from mmvitdyn.learngene import LinearExpansionViT, ViTAncestry, ancestry_for
from mmvitdyn.models import ViT
from mmvitdyn.utils import refuse_overwriting_inputs


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Extract a baseline's learngene")
    parser.add_argument('method', choices=['heuristic', 'auto', 'tleg'])
    parser.add_argument('config', help='config of the ancestry (heuristic, auto) or Aux-Net (tleg)')
    parser.add_argument('checkpoint', help='its trained weights')
    parser.add_argument('--out', required=True, help='learngene file to write')
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
            backbone = build_ancestry(cfg, args.checkpoint, 'cpu').backbone
            tleg = args.method == 'tleg'
            families = ViT if tleg else (ViT, LeViT)
            if tleg != isinstance(backbone,
                                  LinearExpansionViT) or not isinstance(backbone, families):
                raise SetupError(
                    f'{args.method} takes its learngene from '
                    f"{'a LinearExpansionViT (the Aux-Net)' if tleg else 'a ViT or a LeViT'}; "
                    f'the backbone of {args.config} is {type(backbone).__name__}')
            settings = dict(
                config=osp.basename(args.config), checkpoint=osp.basename(args.checkpoint))
            if tleg:
                learngene = ViTAncestry(backbone).extract_expansion(settings)
            else:
                learngene = ancestry_for(backbone).extract_blocks(args.method, settings)
        except (SetupError, ValueError) as err:  # OutputIsInputError too
            parser.error(str(err))
        learngene.save(args.out, inputs)
        print(learngene.summary())
        print(f'wrote {args.out}')


if __name__ == '__main__':
    main()
