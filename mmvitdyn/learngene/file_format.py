"""The learngene file: its header, its I/O and the checks that name a broken field."""
import dataclasses
from typing import Any, ClassVar, Dict, Iterable, Optional, Sequence, Tuple

import torch

from ..checkpoint import load_checkpoint_file
from ..utils import save_atomically

Tensors = Dict[str, torch.Tensor]
NORM_KEYS = ('weight', 'bias')


# ------------------------------------------------------------------- I/O
def load_file(path: str,
              file_format: str,
              versions: Sequence[int],
              tool: str,
              mmap: bool = False) -> dict:
    """Read a learngene file, check its ``format`` and ``version`` (one of ``versions``); name
    ``tool`` (under tools/learngene/) if the file is missing or corrupted.

    Raises:
        FileNotFoundError: No such file.
        ValueError: The file is corrupted, of another format or version.
    """
    try:
        data = load_checkpoint_file(path, 'cpu', mmap=mmap)
    except FileNotFoundError:
        raise FileNotFoundError(f'learngene file {path!r} does not exist or is not a file '
                                f'(build one with tools/learngene/{tool})') from None
    except Exception as err:  # refused, damaged or not a torch file
        raise ValueError(
            f'learngene file {path!r} is corrupted or not a torch file: '
            f'{type(err).__name__}: {err} (learngene files are only ever read as '
            f'plain data, trusted or not; rebuild it with tools/learngene/{tool})') from err
    check_format(data, file_format, versions, f'learngene file {path!r}')
    return data


class LearngeneFile:
    """A learngene dataclass as a file: header, field entries, checks.

    Subclasses are dataclasses with ``validate()`` and set ``FILE_FORMAT``, ``FILE_VERSION``,
    ``WRITER`` (the tool that writes them) and ``OLDER_VERSIONS`` (read via :meth:`upgrade`);
    :meth:`encode_field` / :meth:`decode_field` convert fields that are not plain data.
    """
    FILE_FORMAT: ClassVar[str]
    FILE_VERSION: ClassVar[int]
    OLDER_VERSIONS: ClassVar[Tuple[int, ...]] = ()
    WRITER: ClassVar[str]

    @classmethod
    def versions(cls) -> Tuple[int, ...]:
        """The file versions this kind reads: its own and ``OLDER_VERSIONS``."""
        return (cls.FILE_VERSION, *cls.OLDER_VERSIONS)

    @classmethod
    def upgrade(cls, data: dict) -> dict:
        """An ``OLDER_VERSIONS`` file's fields (a dict, unchecked) in this version's layout;
        ``ValueError`` (named) if they cannot be."""
        raise NotImplementedError(f'{cls.__name__} reads no older file versions')

    def encode_field(self, name: str, value: Any) -> Any:
        """Field ``name`` as file data; dicts and lists are copied one level."""
        return type(value)(value) if isinstance(value, (dict, list)) else value

    @classmethod
    def decode_field(cls, name: str, value: Any) -> Any:
        """File data of field ``name`` as the dataclass holds it."""
        return value

    def to_dict(self) -> dict:
        """The file's content: ``format``, ``version`` and every field."""
        data = dict(format=self.FILE_FORMAT, version=self.FILE_VERSION)
        for item in dataclasses.fields(self):
            data[item.name] = self.encode_field(item.name, getattr(self, item.name))
        return data

    @classmethod
    def from_dict(cls, data: dict, source: str = 'learngene data'):
        """Read :meth:`to_dict`'s layout and validate it; ``ValueError`` names ``source`` and the
        missing, mistyped or inconsistent field."""
        check_format(data, cls.FILE_FORMAT, cls.versions(), source)
        try:
            if data['version'] != cls.FILE_VERSION:
                data = cls.upgrade(dict(data))
            learngene = cls(
                **{
                    item.name: cls.decode_field(item.name, require(data, item.name, ''))
                    for item in dataclasses.fields(cls)
                })
            learngene.validate()
        except ValueError as err:
            raise ValueError(f'{source}: {err}') from err
        return learngene

    def save(self, path: str, inputs: Iterable = ()) -> None:
        """Check, then write atomically, refusing a ``path`` among ``inputs``
        (:func:`~mmvitdyn.utils.atomic_target`)."""
        self.validate()
        save_atomically(self.to_dict(), path, inputs)

    @classmethod
    def load(cls, path: str, mmap: bool = False):
        """Read and check a learngene file of this kind; ``mmap`` maps tensors lazily.

        Raises:
            FileNotFoundError: No such file.
            ValueError: The file is corrupted, of another kind, or inconsistent.
        """
        data = load_file(path, cls.FILE_FORMAT, cls.versions(), cls.WRITER, mmap)
        return cls.from_dict(data, f'learngene file {path!r}')


def check_format(data, file_format: str, versions: Sequence[int], source: str) -> None:
    """``data`` is a dict of ``file_format`` and one of ``versions``; ``source`` in errors."""
    if not isinstance(data, dict) or data.get('format') != file_format:
        found = data.get('format') if isinstance(data, dict) else None
        raise ValueError(f'{source} is not a learngene of format {file_format!r} (its format '
                         f'entry is {found!r})')
    version = data.get('version')
    if type(version) is not int or version not in versions:
        readable = ', '.join(map(str, versions))
        raise ValueError(f'{source} has {file_format} version {version!r}; this mmvitdyn reads '
                         f'version {readable}')


# ---------------------------------------------------------------- checks
def require(mapping, key: str, where: str, kind: type = object):
    """``mapping[key]``; ``ValueError`` naming ``where.key`` if absent (or not of ``kind``)."""
    field = f'{where}.{key}' if where else key
    expect_type(mapping, dict, where or 'the file')
    if key not in mapping:
        raise ValueError(f'learngene {field} is missing')
    expect_type(mapping[key], kind, field)
    return mapping[key]


def expect_type(value, kind, field: str) -> None:
    if not isinstance(value, kind):
        names = ' or '.join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind, )))
        raise ValueError(f'learngene {field} must be a {names}, got {type(value).__name__}')


def expect_int(value, field: str, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f'learngene {field}={value!r} must be an int >= {minimum}')


def expect_tensor(value, field: str, shape: Tuple[Optional[int], ...]) -> None:
    """A dense, finite floating tensor of ``shape`` (None: any size on that axis)."""
    expect_type(value, torch.Tensor, field)
    if value.layout != torch.strided:
        raise ValueError(f'learngene {field} is a {value.layout} tensor, expected a dense one')
    if not value.is_floating_point():
        raise ValueError(f'learngene {field} has dtype {value.dtype}, expected floating point')
    got = tuple(value.shape)
    if len(got) != len(shape) or any(e is not None and g != e for g, e in zip(got, shape)):
        expected = ', '.join('*' if e is None else str(e) for e in shape)
        expected = f'({expected},)' if len(shape) == 1 else f'({expected})'
        raise ValueError(f'learngene {field} has shape {got}, expected {expected}')
    finite = torch.isfinite(value)
    if not finite.all():
        first = tuple(torch.nonzero(~finite)[0].tolist())
        raise ValueError(f'learngene {field} has non-finite values ({int((~finite).sum())}; '
                         f'the first at {first}: {value[first].item()})')


# What a learngene's ``settings`` (how it was made) may hold: plain values.
SETTING_VALUES = (str, int, float, bool, type(None))


def validate_settings(settings) -> dict:
    """``settings``: identifier-like keys, plain values (str, int, float, bool, None, or
    lists/tuples of them); returns it."""
    expect_type(settings, dict, 'settings')
    for key, value in settings.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise ValueError(f'learngene settings key {key!r} is not a name (letters, digits, _)')
        items = value if isinstance(value, (list, tuple)) else [value]
        if not all(isinstance(item, SETTING_VALUES) for item in items):
            raise ValueError(f'learngene settings.{key} is a {type(value).__name__}; allowed: '
                             'str, int, float, bool, None, or lists of them')
    return settings


def format_settings(settings: dict) -> str:
    """``key=value`` pairs with the values escaped (``repr``), for summaries."""
    return ', '.join(f'{key}={value!r}' for key, value in settings.items())


def expect_norm(state, field: str, width: int, optional: bool = False) -> None:
    """A LayerNorm state (``weight`` and ``bias`` of (C, )); empty if ``optional``."""
    expect_type(state, dict, field)
    if optional and not state:
        return
    for key in NORM_KEYS:
        expect_tensor(require(state, key, field), f'{field}.{key}', (width, ))
