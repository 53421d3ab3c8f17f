"""The command line the ``*2mmvitdyn.py`` converters share: read, convert, write, summarise.

The conversion itself is :mod:`mmvitdyn.checkpoint.formats`.
"""
import argparse
from typing import List, Optional, Sequence

from mmvitdyn.checkpoint import (CHECKPOINT_FORMATS, UnsafeCheckpointError, convert_checkpoint,
                                 describe_checkpoint, detect_format, jax_num_heads,
                                 load_state_dict_file, to_classifier, trusted_checkpoints,
                                 trusted_names)
from mmvitdyn.cli import add_trust_option
from mmvitdyn.utils import refuse_overwriting_inputs, save_atomically

# The converter of each format.
TOOLS = {
    'timm': 'timm2mmvitdyn.py',
    'jax': 'timm2mmvitdyn.py',
    'mmpretrain': 'mmpretrain2mmvitdyn.py',
    'dyt': 'dyt2mmvitdyn.py',
    'dinov2': 'timm2mmvitdyn.py',
    'openai_clip': 'timm2mmvitdyn.py',
    'dynamicvit': 'dynamicvit2mmvitdyn.py',
}


def summary(info: dict, fmt: str, dst: str, classifier: bool) -> str:
    """Lines describing a converted checkpoint (``info`` from ``describe_checkpoint``)."""
    heads = info['num_heads']
    if heads is None:
        heads = (f'not stored (fused qkv); {info["embed_dims"] // 64} if heads are 64 wide'
                 if info['embed_dims'] % 64 == 0 else 'not stored (fused qkv)')
    grid = 'x'.join(map(str, info['grid'])) if info['grid'] else 'not a square grid + class token'
    lines = [
        f'wrote {dst} ({fmt} -> mmvitdyn{" classifier" if classifier else ""}, '
        f'{info["num_tensors"]} tensors)',
        f'  embed_dims={info["embed_dims"]} depth={info["num_layers"]} heads={heads} '
        f'mlp={info["feedforward_channels"]}',
        f'  patch_size={info["patch_size"]} in_channels={info["in_channels"]} grid={grid}',
    ]
    if info['adapter_bottleneck'] or info['dispatch_parts']:
        lines.append(f'  DyT: adapter bottleneck={info["adapter_bottleneck"]} '
                     f'dispatchers={info["dispatch_parts"]}')
        lines.append('  DyTViT needs: ' + ', '.join(dyt_switches(info)))
    if info['num_predictors']:
        lines.append(f'  DynamicViT: {info["num_predictors"]} prediction modules; prune_loc needs '
                     f'{info["num_predictors"]} blocks (the official DeiT runs: (3, 6, 9))')
    return '\n'.join(lines)


def dyt_switches(info: dict) -> List[str]:
    """The DyTViT settings a converted DyT checkpoint (``describe_checkpoint``) needs."""
    switches = [
        'dispatch=None' if info['keep_layers'] is None else f'keep_layers={info["keep_layers"]}'
    ]
    if info['adapter_scale'] is None:
        switches.append('adapter_cfg.scale=<the value it was trained with: not stored>')
    else:
        switches.append(f'adapter_cfg.scale={info["adapter_scale"]!r}')
    switches.append("adapter_cfg.layer_norm='in' or 'out' (as trained: the keys do not say which)"
                    if info['adapter_layer_norm'] else 'adapter_cfg.layer_norm=None')
    return switches


def convert(formats: Sequence[str], description: str, argv: Optional[List[str]] = None) -> str:
    """Convert ``SRC`` (one of ``formats``) to an mmvitdyn checkpoint ``DST``; print
    and return the summary. Exits with status 2 and a plain message on a file
    that cannot be read, is of another format, or holds what mmvitdyn's ViT lacks."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument('src', help='source checkpoint: a path or URL')
    parser.add_argument('dst', help='output .pth ({"state_dict": ..., "meta": ...})')
    if any('drop_dist_token' in CHECKPOINT_FORMATS.get(fmt).OPTIONS for fmt in formats):
        parser.add_argument(
            '--drop-dist-token',
            action='store_true',
            help='distilled DeiT: drop the distillation token instead of failing')
    parser.add_argument(
        '--classifier',
        action='store_true',
        help='write a classifier checkpoint (backbone.* and head.fc.*) for '
        'load_from, instead of backbone keys for init_cfg')
    add_trust_option(parser)
    args = parser.parse_args(argv)

    try:
        refuse_overwriting_inputs(args.dst, [args.src])
        with trusted_checkpoints(trusted_names(args.trust_checkpoint, [args.src])):
            source = load_state_dict_file(args.src)
        fmt = detect_format(source)
        if fmt not in formats:
            hint = f'; use tools/model_converters/{TOOLS[fmt]}' if fmt in TOOLS else ''
            parser.error(f'{args.src} is a {fmt} checkpoint, not {" or ".join(formats)}{hint}')
        state_dict, _ = convert_checkpoint(
            source, fmt, drop_dist_token=getattr(args, 'drop_dist_token', False))
    except (OSError, ValueError, UnsafeCheckpointError) as err:
        parser.exit(2, f'error: {err}\n')
    info = describe_checkpoint(state_dict, jax_num_heads(source) if fmt == 'jax' else None)
    if args.classifier:
        state_dict = to_classifier(state_dict)
    save_atomically(
        dict(state_dict=state_dict, meta=dict(source=str(args.src), format=fmt)), args.dst,
        [args.src])
    text = summary(info, fmt, args.dst, args.classifier)
    print(text)
    return text
