"""The registry of checkpoint source formats, and detecting and converting through it."""
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Dict, List, Mapping, Optional, Tuple

import torch
from mmengine.registry import Registry

StateDict = Dict[str, torch.Tensor]

CHECKPOINT_FORMATS = Registry('checkpoint format')


class CheckpointFormat(ABC):
    """A source layout of ViT weights, registered by name in :data:`CHECKPOINT_FORMATS`."""
    # Where detect_format tries this format: lower first.
    PRIORITY: ClassVar[int]
    # The options of convert_checkpoint that convert takes.
    OPTIONS: ClassVar[Tuple[str, ...]] = ()

    @abstractmethod
    def detect(self, state_dict: Mapping[str, Any]) -> bool:
        """Whether ``state_dict`` (name -> tensor or array) is in this layout."""

    @abstractmethod
    def convert(self, state_dict: Mapping[str, Any], **options) -> StateDict:
        """``state_dict`` with mmvitdyn keys; ``options`` are those of :attr:`OPTIONS`."""


def registered_formats() -> List[Tuple[str, CheckpointFormat]]:
    """(name, format) of every registered format, in detection order."""
    formats = [(name, cls()) for name, cls in CHECKPOINT_FORMATS.module_dict.items()]
    return sorted(formats, key=lambda item: item[1].PRIORITY)


def format_names() -> Tuple[str, ...]:
    """The registered format names, in detection order."""
    return tuple(name for name, _ in registered_formats())


def detect_format(state_dict: Mapping[str, Any]) -> str:
    """The first registered format (in :func:`format_names` order) that detects
    ``state_dict``; ``ValueError`` naming some keys when none does."""
    for name, fmt in registered_formats():
        if fmt.detect(state_dict):
            return name
    raise ValueError(
        f'unknown checkpoint layout (first keys: {list(state_dict)[:5]}); known formats are '
        f"{format_names()}. If the ViT sits under a prefix (e.g. 'backbone.'), pass "
        "prefix='backbone.'")


def convert_checkpoint(state_dict: Mapping[str, Any],
                       fmt: Optional[str] = None,
                       drop_dist_token: bool = False) -> Tuple[StateDict, str]:
    """(``state_dict`` with mmvitdyn keys, its format): converted from ``fmt``
    (detected when None); ``drop_dist_token`` reaches the formats declaring it."""
    fmt = detect_format(state_dict) if fmt is None else fmt
    if fmt not in CHECKPOINT_FORMATS.module_dict:
        raise ValueError(f'fmt={fmt!r} is not one of {format_names()}')
    converter = CHECKPOINT_FORMATS.module_dict[fmt]()
    options = {
        k: v
        for k, v in dict(drop_dist_token=drop_dist_token).items() if k in converter.OPTIONS
    }
    return converter.convert(state_dict, **options), fmt
