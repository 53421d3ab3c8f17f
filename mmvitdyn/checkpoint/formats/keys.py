"""Key rewriting the format converters share."""
import re
from typing import Any, Mapping, Sequence, Tuple


def check_supported(state_dict: Mapping[str, Any], unsupported: Mapping[str, str],
                    source: str) -> None:
    """Raise ``ValueError`` for a key holding a fragment of ``unsupported``
    (fragment -> feature, matched against ``'.' + key``), naming the feature."""
    for key in state_dict:
        for fragment, feature in unsupported.items():
            if fragment in f'.{key}':
                raise ValueError(f'{source} checkpoint key {key!r} belongs to {feature}, '
                                 "which mmvitdyn's ViT does not implement")


def rename(key: str, renames: Sequence[Tuple[str, str]]) -> str:
    """``key`` rewritten by the first (pattern, replacement) of ``renames`` that matches."""
    for pattern, replacement in renames:
        new, count = re.subn(pattern, replacement, key)
        if count:
            return new
    return key
