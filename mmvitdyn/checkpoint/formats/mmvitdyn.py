"""mmvitdyn's own layout with DyT parts: nothing to convert."""
from typing import Any, Mapping

from ..vit_names import is_dyt_param
from .registry import CHECKPOINT_FORMATS, CheckpointFormat, StateDict


@CHECKPOINT_FORMATS.register_module(name='mmvitdyn')
class MMViTDyTFormat(CheckpointFormat):
    """Block keys with adapters or dispatchers (``blocks.{i}.adapter.*``, ...)."""
    PRIORITY = 50

    def detect(self, state_dict: Mapping[str, Any]) -> bool:
        return any(k.startswith('blocks.') and is_dyt_param(k) for k in state_dict)

    def convert(self, state_dict: Mapping[str, Any], **options) -> StateDict:
        return dict(state_dict)
