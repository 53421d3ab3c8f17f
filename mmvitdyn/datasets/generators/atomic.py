"""Publish a generated data set atomically, with a ``.complete`` marker of how it
was made (docs/data_checks.md)."""
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict

MARKER = '.complete'


@dataclass(frozen=True)
class GeneratedSet:
    """A generated set: ``root`` (Path), ``counts`` (per split), ``created`` now."""
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
        params (dict): JSON-able parameters; the set is reused when they match.
        write (callable): Writes the set into a folder, returns images per split.
        overwrite (bool): Replace an existing ``out_dir``. Defaults to False.

    Returns:
        GeneratedSet: The set, created now or found complete.

    Raises:
        FileExistsError: ``out_dir`` exists, is not the same complete set, and
            ``overwrite`` is False.
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
