"""Publish a generated data set atomically, with a marker of how it was made.

A generator writes into a hidden sibling of ``out_dir`` and the finished
folder is renamed into place, so ``out_dir`` is either absent or complete.
The ``.complete`` marker inside it records the generator and its parameters;
reading it is all a repeated call costs.
"""
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict

MARKER = '.complete'


@dataclass(frozen=True)
class GeneratedSet:
    """A generated data set on disk.

    Args:
        root (Path): The data root.
        counts (dict[str, int]): Number of images per split.
        created (bool): False when an identical set was already there.
    """
    root: Path
    counts: Dict[str, int]
    created: bool

    def summary(self) -> str:
        """One line saying what was written, or that it was already there."""
        counts = ', '.join(f'{n} {split}' for split, n in self.counts.items())
        state = 'wrote' if self.created else 'up to date:'
        return f'{state} {self.root} ({counts} images)'


def write_atomically(out_dir: str,
                     generator: str,
                     params: dict,
                     write: Callable[[Path], Dict[str, int]],
                     overwrite: bool = False) -> GeneratedSet:
    """Run ``write(tmp_dir)`` and rename ``tmp_dir`` to ``out_dir``.

    Args:
        out_dir (str): Where the data set goes.
        generator (str): Name and format version, e.g. ``'digits/1'``.
        params (dict): JSON-able generation parameters; the set is reused
            only when they match the marker's.
        write (callable): Writes the set into the given folder and returns
            the number of images per split.
        overwrite (bool): Replace an existing ``out_dir``. Defaults to False.

    Returns:
        GeneratedSet: The set, created now or found complete.

    Raises:
        FileExistsError: ``out_dir`` exists, ``overwrite`` is False, and it
            is not a complete set made with the same generator and params.
    """
    out = Path(out_dir)
    # A JSON round trip turns tuples into lists, as they are read back.
    wanted = json.loads(json.dumps({'generator': generator, 'params': params}))
    if out.exists() and not overwrite:
        marker = out / MARKER
        if not marker.is_file():
            raise FileExistsError(f'out_dir {str(out)!r} exists but has no {MARKER} marker, so '
                                  'it is not a complete generated set; pass overwrite=True '
                                  '(--overwrite) to replace it')
        found = json.loads(marker.read_text())
        if {key: found.get(key) for key in wanted} != wanted:
            raise FileExistsError(f'out_dir {str(out)!r} holds {found.get("generator")} with '
                                  f'params {found.get("params")}, not {generator} with params '
                                  f'{wanted["params"]}; pass overwrite=True (--overwrite) to '
                                  'regenerate it')
        return GeneratedSet(out, found['counts'], created=False)

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f'.{out.name}.tmp-{os.getpid()}')
    old = out.with_name(f'.{out.name}.old-{os.getpid()}')
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        counts = write(tmp)
        marker_text = json.dumps({**wanted, 'counts': counts}, indent=2, sort_keys=True)
        (tmp / MARKER).write_text(marker_text + '\n')
        if out.exists():
            os.replace(out, old)
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)
    return GeneratedSet(out, counts, created=True)
