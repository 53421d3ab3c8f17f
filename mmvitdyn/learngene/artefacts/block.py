"""The learngenes of the Heuristic- (the ancestry's last three blocks) and Auto-Learngene
(blocks 0-5) baselines: whole blocks, with the ancestry's stem and final norm."""
from dataclasses import dataclass, field
from typing import ClassVar, List, Optional, Tuple

from ..file_format import LearngeneFile, Tensors, expect_norm, expect_type, validate_settings
from .vit import (upgrade_ancestry, validate_ancestry, validate_block, validate_embeddings,
                  warn_version_1)

# Which ancestry blocks each method takes, from the ancestry's depth L.
BLOCK_METHODS = {
    'heuristic': lambda depth: list(range(depth - 3, depth)),  # the last three
    'auto': lambda depth: list(range(6)),  # blocks 0-5
}


def learngene_blocks(method: str, depth: int) -> List[int]:
    """The ancestry blocks ``method`` takes from an ancestry of ``depth`` layers."""
    if method not in BLOCK_METHODS:
        raise ValueError(f'method={method!r} is not one of {sorted(BLOCK_METHODS)}')
    blocks = BLOCK_METHODS[method](depth)
    if blocks[0] < 0 or blocks[-1] >= depth:
        raise ValueError(f'the {method} learngene takes ancestry blocks {blocks}; the ancestry '
                         f'has {depth} (0..{depth - 1})')
    return blocks


def block_sources(method: str, num_blocks: int, num_layers: int) -> List[Optional[int]]:
    """Learngene block of each of ``num_layers`` descendant layers (None: random):
    ``'heuristic'`` the last layers, ``'auto'`` the first."""
    if num_layers < 1:
        raise ValueError(f'num_layers={num_layers} must be >= 1')
    if method == 'heuristic':
        offset = num_layers - num_blocks
        return [i - offset if i >= offset else None for i in range(num_layers)]
    if method == 'auto':
        return [i if i < num_blocks else None for i in range(num_layers)]
    raise ValueError(f'method={method!r} is not one of {sorted(BLOCK_METHODS)}')


@dataclass
class BlockLearngene(LearngeneFile):
    """Whole ancestry blocks: the Heuristic- or Auto-Learngene learngene.

    Args:
        method (str): 'heuristic' or 'auto'.
        ancestry (dict): The ancestry's architecture (``ViTAncestry.describe``).
        layers (tuple[int]): The ancestry block each of ``blocks`` is.
        blocks (list[dict]): Block state dicts (see :func:`~.vit.block_shapes`).
        embeddings (dict): The ancestry's stem; empty in a version-1 file.
        final_norm (dict): State dict of its final norm (empty if none).
        settings (dict): How it was made (recorded as is).
    """
    FILE_FORMAT: ClassVar[str] = 'mmvitdyn.block_learngene'
    FILE_VERSION: ClassVar[int] = 2
    OLDER_VERSIONS: ClassVar[Tuple[int, ...]] = (1, )
    WRITER: ClassVar[str] = 'extract_baseline_learngene.py'

    method: str
    ancestry: dict
    layers: Tuple[int, ...]
    blocks: List[Tensors]
    embeddings: Tensors
    final_norm: Tensors
    settings: dict = field(default_factory=dict)

    def sources(self, num_layers: int) -> List[Optional[int]]:
        """Learngene block of each descendant layer (see :func:`block_sources`)."""
        return block_sources(self.method, len(self.blocks), num_layers)

    def layer_states(self, num_layers: int) -> List[Optional[Tensors]]:
        """The block state dict each descendant layer starts from (None: random)."""
        return [None if s is None else self.blocks[s] for s in self.sources(num_layers)]

    def num_parameters(self) -> int:
        tensors = [*self.embeddings.values(), *self.final_norm.values()]
        return sum(t.numel() for t in tensors) + sum(t.numel() for block in self.blocks
                                                     for t in block.values())

    def summary(self) -> str:
        a = self.ancestry
        return (f"{self.method} learngene: ancestry blocks {list(self.layers)} of "
                f"{a['num_layers']} ({a['embed_dims']} wide, {a['num_heads']} heads of "
                f"{a['head_dim']}, FFN {a['feedforward_channels']}); "
                f'{self.num_parameters() / 1e6:.3f}M parameters')

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first missing, mistyped or mis-shaped field."""
        expect_type(self.method, str, 'method')
        a = validate_ancestry(self.ancestry)
        expected = tuple(learngene_blocks(self.method, a['num_layers']))
        expect_type(self.layers, tuple, 'layers')
        if self.layers != expected:
            raise ValueError(f'learngene layers={list(self.layers)}; the {self.method} learngene '
                             f"of a {a['num_layers']}-layer ancestry holds blocks {list(expected)}")
        expect_type(self.blocks, list, 'blocks')
        if len(self.blocks) != len(self.layers):
            raise ValueError(f'learngene has {len(self.blocks)} blocks for layers '
                             f'{list(self.layers)}')
        for index, block in enumerate(self.blocks):
            validate_block(block, f'blocks[{index}]', a)
        validate_embeddings(self.embeddings, a, optional=True)
        expect_norm(self.final_norm, 'final_norm', a['embed_dims'], optional=True)
        validate_settings(self.settings)

    @classmethod
    def upgrade(cls, data: dict) -> dict:
        """Version 1: a DeiT's family, the blocks alone (no embeddings, no final norm)."""
        data['ancestry'] = upgrade_ancestry(data.get('ancestry'))
        data['embeddings'], data['final_norm'] = {}, {}
        warn_version_1(str(data.get('method')), 'embeddings and final norm')
        return data

    @classmethod
    def decode_field(cls, name: str, value):
        return tuple(value) if name == 'layers' and isinstance(value, list) else value

    def encode_field(self, name: str, value):
        if name == 'layers':
            return list(value)
        if name == 'blocks':
            return [dict(block) for block in value]
        return super().encode_field(name, value)
