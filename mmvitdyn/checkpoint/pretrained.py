"""Load pretrained ViT weights from any supported format, with a plain report."""
import io
import re
from collections import Counter
from dataclasses import dataclass
from typing import Dict, List, Optional

import torch
from mmengine import fileio
from mmengine.logging import MMLogger
from mmengine.runner import CheckpointLoader
from torch import nn

from .formats import StateDict, convert_checkpoint
from .loader import load_npz_file
from .vit_names import REL_POS_TABLES, is_dyt_param

# Checkpoint keys (after conversion) that only a ViT built with a family's
# option holds: loading them into a model without it would silently drop what
# the features depend on, so they are refused, naming the option.
FAMILY_KEYS = (
    (r'^reg_token$', 'num_reg_tokens=<registers>'),
    (r'^norm_pre\.', 'pre_norm=True'),
    (r'^blocks\.\d+\.ls[12]\.gamma$', 'layer_scale_init_value=<float>'),
)

LAYOUT_WORDS = {
    'timm': "keys of timm's ViT, which mmvitdyn's ViT uses as they are",
    'mmvitdyn': "mmvitdyn's DyT layout",
}


@dataclass
class LoadReport:
    """What :func:`load_pretrained` did: the checkpoint, its detected format,
    the model keys loaded, those missing that the model's ``is_new_param``
    creates (adapters, dispatchers, a pyramid ...), the other missing ones and
    the checkpoint keys ignored."""
    checkpoint: str
    format: str
    loaded: List[str]
    missing_new: List[str]
    missing: List[str]
    unexpected: List[str]


def group_keys(keys: List[str]) -> str:
    """``blocks.0.x``, ``blocks.1.x`` -> ``blocks.*.x (x2)``: a compact key list."""
    counts = Counter(re.sub(r'\.\d+\.', '.*.', k) for k in keys)
    return ', '.join(p if n == 1 else f'{p} (x{n})' for p, n in counts.items())


def unwrap_state_dict(checkpoint: dict) -> dict:
    """The tensors of a checkpoint: under ``state_dict`` (mmengine), ``model``
    (DeiT, official DyT), or the checkpoint itself."""
    for key in ('state_dict', 'model'):
        if isinstance(checkpoint.get(key), dict):
            return checkpoint[key]
    return checkpoint


def load_state_dict_file(filename: str, map_location: str = 'cpu') -> dict:
    """The unwrapped tensors of a checkpoint file (path or URL); ``.npz`` files
    (Flax ViTs) as name -> array, through :func:`load_npz_file`."""
    if str(filename).endswith('.npz'):
        return load_npz_file(io.BytesIO(fileio.get(filename)), str(filename))
    return unwrap_state_dict(CheckpointLoader.load_checkpoint(filename, map_location=map_location))


def strip_prefix(state_dict: dict, prefix: str) -> dict:
    """Keep the keys starting with ``prefix``, without it."""
    out = {k[len(prefix):]: v for k, v in state_dict.items() if k.startswith(prefix)}
    if not out:
        raise ValueError(f'no checkpoint key starts with prefix={prefix!r} '
                         f'(first keys: {list(state_dict)[:5]})')
    return out


# Tables the backbones resize on load: the position grid and the relative-position tables.
RESIZED_ON_LOAD = re.compile(r'(^pos_embed|\.(' + '|'.join(REL_POS_TABLES) + '))$')


def shape_mismatches(state_dict: StateDict, model_state: Dict[str, torch.Tensor]) -> List[str]:
    """``key: checkpoint (..) vs model (..)`` for each shared key whose shapes
    differ, but for tables of the same width resized on load (:data:`RESIZED_ON_LOAD`)."""
    lines = []
    for key, value in state_dict.items():
        if key not in model_state or value.shape == model_state[key].shape:
            continue
        if RESIZED_ON_LOAD.search(key) and value.shape[-1] == model_state[key].shape[-1]:
            continue
        lines.append(
            f'{key}: checkpoint {tuple(value.shape)} vs model {tuple(model_state[key].shape)}')
    return lines


def loads_checkpoint(init_cfg) -> bool:
    """Whether a module's ``init_cfg`` loads a checkpoint (``type='Pretrained'``)."""
    return isinstance(init_cfg, dict) and init_cfg.get('type') == 'Pretrained'


def load_pretrained(model: nn.Module,
                    checkpoint: str,
                    prefix: Optional[str] = None,
                    map_location: str = 'cpu') -> LoadReport:
    """Load a ViT checkpoint of any supported format into ``model`` and log a report.

    Args:
        model (nn.Module): The model, e.g. a ViT or DyTViT backbone.
        checkpoint (str): Path or URL of the checkpoint.
        prefix (str, optional): Load only keys under this prefix, e.g.
            ``'backbone.'`` for a classifier checkpoint. Defaults to None.
        map_location (str): Where tensors are loaded. Defaults to 'cpu'.

    Returns:
        LoadReport: What was loaded, missing and ignored.

    Raises:
        ValueError: Shape mismatches (all listed), an unknown layout, or a
            family's tokens or layers the model lacks.
    """
    state_dict = load_state_dict_file(checkpoint, map_location)
    if prefix:
        state_dict = strip_prefix(state_dict, prefix)
    state_dict, fmt = convert_checkpoint(state_dict)
    model_state = model.state_dict()
    if 'dist_token' in state_dict and 'dist_token' not in model_state:
        raise ValueError(
            f"checkpoint {checkpoint} is a distilled DeiT (it has 'dist_token') and "
            f'{type(model).__name__} has no distillation token: build it with dist_token=True, '
            'or convert the checkpoint with drop_dist_token=True (--drop-dist-token) to drop '
            'the token and its position embedding (the class-token features then differ)')
    lacking = [(option, key) for key in state_dict if key not in model_state
               for pattern, option in FAMILY_KEYS if re.search(pattern, key)]
    if lacking:
        options = sorted({option for option, _ in lacking})
        raise ValueError(
            f'checkpoint {checkpoint} comes from a ViT family {type(model).__name__} is not built '
            f'as: it has {group_keys([key for _, key in lacking])}; build the model with '
            f'{options} (configs/_base_/models/vit-families.py has each family)')
    mismatches = shape_mismatches(state_dict, model_state)
    if mismatches:
        raise ValueError(f'checkpoint {checkpoint} does not fit {type(model).__name__}: '
                         f'{len(mismatches)} shape mismatch(es):\n  ' + '\n  '.join(mismatches))
    missing, unexpected = model.load_state_dict(state_dict, strict=False)
    is_new = getattr(model, 'is_new_param', is_dyt_param)
    report = LoadReport(
        checkpoint=str(checkpoint),
        format=fmt,
        loaded=[k for k in state_dict if k in model_state],
        missing_new=[k for k in missing if is_new(k)],
        missing=[k for k in missing if not is_new(k)],
        unexpected=list(unexpected))
    log_report(report, type(model).__name__)
    return report


def describe_layout(fmt: str) -> str:
    """A :func:`detect_format` name as the load log words it."""
    return LAYOUT_WORDS.get(fmt, f'{fmt} layout, converted')


def log_report(report: LoadReport, model_name: str) -> None:
    """Log a :class:`LoadReport` through the current ``MMLogger``."""
    logger = MMLogger.get_current_instance()
    logger.info(f'Loaded {len(report.loaded)} tensors into {model_name} from '
                f'{report.checkpoint} ({describe_layout(report.format)})')
    if report.missing_new:
        logger.info(f'Parts {model_name} adds, not in the checkpoint, initialised by it '
                    f'({len(report.missing_new)}): {group_keys(report.missing_new)}')
    if report.missing:
        logger.warning(f'Weights of {model_name} missing from the checkpoint, left as initialised '
                       f'({len(report.missing)}): {group_keys(report.missing)}')
    if report.unexpected:
        logger.info(f'Checkpoint tensors {model_name} has no place for, ignored '
                    f'({len(report.unexpected)}): {group_keys(report.unexpected)}')
