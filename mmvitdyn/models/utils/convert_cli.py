"""The command line shared by ``tools/model_converters/*2mmvitdyn.py``."""
import argparse
from typing import List, Optional, Sequence

from ...utils import save_atomically
from .checkpoint_convert import (convert_checkpoint, describe_checkpoint, detect_format,
                                 jax_num_heads, to_classifier)
from .pretrained import load_state_dict_file

TOOLS = {
    'timm': 'timm2mmvitdyn.py',
    'jax': 'timm2mmvitdyn.py',
    'mmpretrain': 'mmpretrain2mmvitdyn.py',
    'dyt': 'dyt2mmvitdyn.py',
}


def summary(info: dict, fmt: str, dst: str, classifier: bool) -> str:
    """Lines describing a converted checkpoint (see ``describe_checkpoint``)."""
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
    return '\n'.join(lines)


def main(formats: Sequence[str], description: str, argv: Optional[List[str]] = None) -> str:
    """Convert ``SRC`` (one of ``formats``) to an mmvitdyn checkpoint ``DST``.

    Returns:
        str: The printed summary.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument('src', help='source checkpoint: a path or URL')
    parser.add_argument('dst', help='output .pth ({"state_dict": ..., "meta": ...})')
    parser.add_argument('--drop-dist-token', action='store_true',
                        help='distilled DeiT: drop the distillation token instead of failing')
    parser.add_argument('--classifier', action='store_true',
                        help='write a classifier checkpoint (backbone.* and head.fc.*) for '
                        'load_from, instead of backbone keys for init_cfg')
    args = parser.parse_args(argv)

    source = load_state_dict_file(args.src)
    fmt = detect_format(source)
    if fmt not in formats:
        hint = f'; use tools/model_converters/{TOOLS[fmt]}' if fmt in TOOLS else ''
        raise SystemExit(f'{args.src} is a {fmt} checkpoint, not {" or ".join(formats)}{hint}')
    state_dict, _ = convert_checkpoint(source, fmt, drop_dist_token=args.drop_dist_token)
    info = describe_checkpoint(state_dict, jax_num_heads(source) if fmt == 'jax' else None)
    if args.classifier:
        state_dict = to_classifier(state_dict)
    save_atomically(dict(state_dict=state_dict, meta=dict(source=str(args.src), format=fmt)),
                    args.dst)
    text = summary(info, fmt, args.dst, args.classifier)
    print(text)
    return text
