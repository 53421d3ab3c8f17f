"""Checks of configuration values, with one error form for every module.

Each check returns the value or raises ``ValueError`` naming the field, the
value and what is allowed. A bool is not a number here (``True`` is not 1),
a string is not parsed (``'0.5'`` is refused), NaN and infinities are refused.
"""
import math
from typing import Optional

from torch import nn


def check_int(value,
              field: str,
              minimum: Optional[int] = None,
              maximum: Optional[int] = None) -> int:
    """``value`` if it is an int (not a bool) in [minimum, maximum]."""
    allowed = 'an int' + _interval(minimum, maximum, False, False)
    if isinstance(value, bool) or not isinstance(value, int) or \
            not _inside(value, minimum, maximum, False, False):
        raise ValueError(f'{field}={value!r} must be {allowed}')
    return value


def check_bool(value, field: str) -> bool:
    """``value`` if it is a bool (``1`` or ``'true'`` are refused)."""
    if not isinstance(value, bool):
        raise ValueError(f'{field}={value!r} must be True or False')
    return value


def check_number(value,
                 field: str,
                 low: Optional[float] = None,
                 high: Optional[float] = None,
                 low_open: bool = False,
                 high_open: bool = False) -> float:
    """``value`` if it is a finite int or float (not a bool) between ``low`` and
    ``high`` (each bound excluded when ``*_open``)."""
    allowed = 'a finite number' + _interval(low, high, low_open, high_open)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value) or not _inside(value, low, high, low_open, high_open):
        raise ValueError(f'{field}={value!r} must be {allowed}')
    return value


def check_rate(value, field: str) -> float:
    """``value`` if it is a dropout or drop-path rate: a finite number in [0, 1)."""
    return check_number(value, field, 0, 1, high_open=True)


# The flags of torch's norm layers (and mmcv's ``requires_grad``) that a
# norm_cfg may set: each must be a bool (torch takes any truthy value).
NORM_BOOL_KEYS = ('affine', 'bias', 'elementwise_affine', 'requires_grad', 'track_running_stats')
# The values of ``approximate`` torch.nn.GELU takes (any other fails only in
# the forward pass, with an error naming no field).
GELU_APPROXIMATIONS = ('none', 'tanh')


def check_norm_cfg(norm_cfg, field: str = 'norm_cfg') -> dict:
    """``norm_cfg`` if it is a dict with a ``type`` whose ``eps`` (if given)
    is a finite number > 0 (a NaN or negative eps makes every output NaN) and
    whose flags (:data:`NORM_BOOL_KEYS`, if given) are bools."""
    _check_cfg(norm_cfg, field, "dict(type='LN', eps=1e-6)")
    if 'eps' in norm_cfg:
        check_number(norm_cfg['eps'], f'{field}.eps', 0, low_open=True)
    for key in NORM_BOOL_KEYS:
        if key in norm_cfg:
            check_bool(norm_cfg[key], f'{field}.{key}')
    return norm_cfg


def check_act_cfg(act_cfg, field: str = 'act_cfg') -> dict:
    """``act_cfg`` if it is a dict with a ``type`` whose ``inplace`` (if given)
    is a bool and, for GELU, whose ``approximate`` (if given) is one of
    :data:`GELU_APPROXIMATIONS`."""
    _check_cfg(act_cfg, field, "dict(type='GELU')")
    if 'inplace' in act_cfg:
        check_bool(act_cfg['inplace'], f'{field}.inplace')
    act_type = act_cfg['type']
    is_gelu = act_type == 'GELU' or (isinstance(act_type, type) and issubclass(act_type, nn.GELU))
    if is_gelu and 'approximate' in act_cfg and \
            act_cfg['approximate'] not in GELU_APPROXIMATIONS:
        raise ValueError(f"{field}.approximate={act_cfg['approximate']!r} must be one of "
                         f'{GELU_APPROXIMATIONS}')
    return act_cfg


def _check_cfg(cfg, field: str, example: str) -> None:
    if not isinstance(cfg, dict) or 'type' not in cfg:
        raise ValueError(f'{field}={cfg!r} must be a dict with a type, e.g. {example}')


def _inside(value, low, high, low_open: bool, high_open: bool) -> bool:
    above = low is None or (value > low if low_open else value >= low)
    below = high is None or (value < high if high_open else value <= high)
    return above and below


def _interval(low, high, low_open: bool, high_open: bool) -> str:
    if low is not None and high is not None:
        return f" in {'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
    if low is not None:
        return f" {'>' if low_open else '>='} {low}"
    if high is not None:
        return f" {'<' if high_open else '<='} {high}"
    return ''
