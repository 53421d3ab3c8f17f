"""Stop at import on an unsupported torch, mmcv or mmengine (docs/design_notes.md)."""
import importlib
from typing import Dict, Optional

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from .version import __version__

SUPPORTED = {
    'torch': '>=2.1',
    'mmcv': '>=2.0.0,<2.2.0',
    'mmengine': '>=0.8.3,<1.0.0',
}


def installed_versions() -> Dict[str, Optional[str]]:
    """``__version__`` of each package in :data:`SUPPORTED`; None if it does not import."""
    versions = {}
    for name in SUPPORTED:
        try:
            versions[name] = importlib.import_module(name).__version__
        except ImportError:
            versions[name] = None
    return versions


def _supported(version: str, spec: str) -> bool:
    """Pre-releases and local builds count as their release (``2.1.0a0+git4136153``
    is 2.1.0), as NVIDIA's and nightly torch builds are named."""
    try:
        release = Version(version).release
    except InvalidVersion:
        return False
    return SpecifierSet(spec).contains('.'.join(map(str, release)))


def unsupported_message(installed: Dict[str, Optional[str]]) -> Optional[str]:
    """One message naming every unsupported or missing package of ``installed``
    (name -> version or None), or None if all fit."""
    problems = []
    for name, spec in SUPPORTED.items():
        version = installed[name]
        if version is None:
            problems.append(f'{name} is not installed (supported: {name}{spec})')
        elif not _supported(version, spec):
            problems.append(f'{name} {version} is installed (supported: {name}{spec})')
    if not problems:
        return None
    return (f"mmvitdyn {__version__} cannot run with this environment: {'; '.join(problems)}. "
            'Install supported versions (mmcv with its compiled ops, built for your torch), '
            'or set up the tested stack with: bash tools/setup_env.sh')


def check_versions(installed: Optional[Dict[str, Optional[str]]] = None) -> None:
    """Raise ``ImportError`` if a version of ``installed`` (default
    :func:`installed_versions`) is unsupported."""
    message = unsupported_message(installed_versions() if installed is None else installed)
    if message is not None:
        raise ImportError(message)


check_versions()
