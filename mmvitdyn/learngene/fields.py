"""What learngene files are made of, and the checks that name a broken field.

Every learngene file (the Cluster-Learngene artefacts of ViT and Swin
ancestries, the baselines' block and TLEG learngenes) is a plain
``torch.save`` of dicts, lists, numbers, strings and tensors with a
``format`` and a ``version`` entry, read by mmvitdyn's safe checkpoint loader
(never unpickled in full) and written atomically. The ViT ones share the description of the ancestry
(:func:`ancestry_of`) and, for whole blocks, the block state dict of
mmvitdyn's ViT (:func:`block_shapes`). The checks raise ``ValueError``
naming the field, its value and what is allowed.
"""
import os.path as osp
from typing import ClassVar, Dict, Optional, Tuple

import torch
from torch import nn

from ..utils import load_checkpoint_file, save_atomically

Tensors = Dict[str, torch.Tensor]
NORM_KEYS = ('weight', 'bias')
POSITIVE_ANCESTRY_KEYS = ('embed_dims', 'num_layers', 'num_heads', 'head_dim',
                          'feedforward_channels', 'patch_size')
ANCESTRY_KEYS = POSITIVE_ANCESTRY_KEYS + ('patch_resolution', 'num_extra_tokens', 'qkv_bias')


def ancestry_of(backbone: nn.Module) -> dict:
    """The architecture of an mmvitdyn ``ViT`` as a learngene records it.

    Returns:
        dict: ``embed_dims``, ``num_layers``, ``num_heads``, ``head_dim``,
        ``feedforward_channels``, ``patch_size``, ``patch_resolution`` (the
        grid its position embedding is for), ``num_extra_tokens``, ``qkv_bias``.
    """
    attn = backbone.blocks[0].attn
    return dict(
        embed_dims=backbone.embed_dims,
        num_layers=len(backbone.blocks),
        num_heads=attn.num_heads,
        head_dim=attn.head_dim,
        feedforward_channels=backbone.blocks[0].mlp.fc1.out_features,
        patch_size=backbone.patch_size,
        patch_resolution=list(backbone.patch_resolution),
        num_extra_tokens=backbone.num_prefix_tokens,
        qkv_bias=attn.qkv.bias is not None)


def clone_state(state: Tensors) -> Tensors:
    """A detached copy of a state dict."""
    return {key: value.detach().clone() for key, value in state.items()}


def validate_ancestry(ancestry) -> dict:
    """Check an :func:`ancestry_of` dict; returns it."""
    expect_type(ancestry, dict, 'ancestry')
    for key in ANCESTRY_KEYS:
        if key not in ancestry:
            raise ValueError(f'learngene ancestry.{key} is missing')
    for key in POSITIVE_ANCESTRY_KEYS:
        expect_int(ancestry[key], f'ancestry.{key}', minimum=1)
    expect_int(ancestry['num_extra_tokens'], 'ancestry.num_extra_tokens', minimum=0)
    expect_type(ancestry['qkv_bias'], bool, 'ancestry.qkv_bias')
    grid = ancestry['patch_resolution']
    if not isinstance(grid, (list, tuple)) or len(grid) != 2:
        raise ValueError(f'learngene ancestry.patch_resolution={grid!r} must be [rows, cols]')
    for value in grid:
        expect_int(value, 'ancestry.patch_resolution', minimum=1)
    return ancestry


def block_shapes(ancestry: dict) -> Dict[str, Tuple[int, ...]]:
    """Key -> shape of the state dict of one block of the ancestry (C wide,
    H heads of D, FFN F): norms, ``attn.qkv`` (3HD, C), ``attn.proj`` (C, HD),
    ``mlp.fc1`` (F, C), ``mlp.fc2`` (C, F), with their biases."""
    c, inner, f = ancestry['embed_dims'], ancestry['num_heads'] * ancestry['head_dim'], \
        ancestry['feedforward_channels']
    shapes = {
        'norm1.weight': (c, ), 'norm1.bias': (c, ),
        'attn.qkv.weight': (3 * inner, c),
        'attn.proj.weight': (c, inner), 'attn.proj.bias': (c, ),
        'norm2.weight': (c, ), 'norm2.bias': (c, ),
        'mlp.fc1.weight': (f, c), 'mlp.fc1.bias': (f, ),
        'mlp.fc2.weight': (c, f), 'mlp.fc2.bias': (c, ),
    }  # yapf: disable
    if ancestry['qkv_bias']:
        shapes['attn.qkv.bias'] = (3 * inner, )
    return shapes


def validate_block(state, field: str, ancestry: dict) -> None:
    """Check a whole block's state dict: every key of :func:`block_shapes`
    with its shape, and no other."""
    shapes = block_shapes(ancestry)
    expect_type(state, dict, field)
    extra = sorted(set(state) - set(shapes))
    if extra:
        raise ValueError(f'learngene {field} has keys {extra} that a block of the ancestry '
                         f'(qkv_bias={ancestry["qkv_bias"]}) does not have')
    for key, shape in shapes.items():
        expect_tensor(require(state, key, field), f'{field}.{key}', shape)


# ------------------------------------------------------------------- I/O
def load_file(path: str, file_format: str, version: int, tool: str, mmap: bool = False) -> dict:
    """Read a learngene file and check its ``format`` and ``version``;
    ``tool`` (under tools/learngene/) is named if the file is missing.

    Raises:
        FileNotFoundError: No such file.
        ValueError: The file is corrupted, of another format or version.
    """
    if not osp.isfile(path):
        raise FileNotFoundError(f'learngene file {path!r} does not exist (build one with '
                                f'tools/learngene/{tool})')
    try:
        data = load_checkpoint_file(path, 'cpu', mmap=mmap)
    except Exception as err:  # refused, damaged or not a torch file
        raise ValueError(
            f'learngene file {path!r} is corrupted or not a torch file: '
            f'{type(err).__name__}: {err} (learngene files are only ever read as '
            f'plain data, trusted or not; rebuild it with tools/learngene/{tool})') from err
    check_format(data, file_format, version, f'learngene file {path!r}')
    return data


class LearngeneFile:
    """Saving and loading of a learngene kind, for dataclasses with ``validate``,
    ``to_dict`` and ``from_dict(data, source)``.

    Subclasses set ``FILE_FORMAT`` and ``FILE_VERSION`` (the file's ``format``
    and ``version`` entries) and ``WRITER``, the tool under tools/learngene/
    that writes such files (named when a file is missing).
    """
    FILE_FORMAT: ClassVar[str]
    FILE_VERSION: ClassVar[int]
    WRITER: ClassVar[str]

    def save(self, path: str) -> None:
        """Check the learngene, then write it atomically (temporary file, rename)."""
        self.validate()
        save_atomically(self.to_dict(), path)

    @classmethod
    def load(cls, path: str, mmap: bool = False):
        """Read and check a learngene file of this kind.

        Args:
            path (str): The file.
            mmap (bool): Map tensors lazily from the file (cheap when only
                the structure is needed). Defaults to False.

        Raises:
            FileNotFoundError: No such file.
            ValueError: The file is corrupted, of another kind, or inconsistent.
        """
        data = load_file(path, cls.FILE_FORMAT, cls.FILE_VERSION, cls.WRITER, mmap)
        return cls.from_dict(data, f'learngene file {path!r}')


def check_format(data, file_format: str, version: int, source: str) -> None:
    """``data`` is a dict of ``file_format`` and ``version``; ``source`` names it in errors."""
    if not isinstance(data, dict) or data.get('format') != file_format:
        found = data.get('format') if isinstance(data, dict) else None
        raise ValueError(f'{source} is not a learngene of format {file_format!r} (its format '
                         f'entry is {found!r})')
    if data.get('version') != version:
        raise ValueError(f"{source} has {file_format} version {data.get('version')!r}; this "
                         f'mmvitdyn reads version {version}')


# ---------------------------------------------------------------- checks
def require(mapping, key: str, where: str, kind: type = object):
    """``mapping[key]``; ``ValueError`` naming ``where.key`` when it is absent
    (or not of ``kind``)."""
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
    """``settings``: a dict of identifier-like keys and plain values (str, int,
    float, bool, None, or lists/tuples of them); returns it."""
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
