"""Earlier names of renamed configs: a config whose only statement is
``_base_ = ['./<current name>.py']`` keeps a renamed config's old path
loadable (and its old name known to ``get_model``)."""
import ast
from pathlib import Path
from typing import Dict, List, Optional


def renamed_to(path) -> Optional[str]:
    """The file name of the config that ``path`` is an earlier name of, or None.

    An earlier name is a config whose only statement (comments aside) is
    ``_base_ = ['./<current name>.py']``: it inherits one config of its own
    folder and changes nothing.
    """
    body = ast.parse(Path(path).read_text()).body
    if len(body) != 1 or not isinstance(body[0], ast.Assign) or len(body[0].targets) != 1:
        return None
    target, value = body[0].targets[0], body[0].value
    if getattr(target, 'id', None) != '_base_' or not isinstance(value, ast.List):
        return None
    bases = value.elts
    base = bases[0].value if len(bases) == 1 and isinstance(bases[0], ast.Constant) else None
    if not isinstance(base, str) or not base.startswith('./') or not base.endswith('.py'):
        return None
    name = base[len('./'):]
    return None if '/' in name else name


def earlier_names(folder: Path) -> Dict[str, List[str]]:
    """Current config file name -> the stems of its earlier names in ``folder``."""
    names: Dict[str, List[str]] = {}
    for path in sorted(Path(folder).glob('*.py')):
        current = renamed_to(path)
        if current is not None:
            names.setdefault(current, []).append(path.stem)
    return names
