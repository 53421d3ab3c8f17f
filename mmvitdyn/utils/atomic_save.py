"""Writing checkpoints and artefacts so that no half-written file is ever visible."""
import os
from pathlib import Path

import torch


def save_atomically(obj: dict, dst: str) -> None:
    """``torch.save`` to a temporary sibling of ``dst``, then rename it into place."""
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(f'.{dst.name}.tmp-{os.getpid()}')
    try:
        torch.save(obj, tmp)
        os.replace(tmp, dst)
    finally:
        tmp.unlink(missing_ok=True)
