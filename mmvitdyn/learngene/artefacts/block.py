"""The learngenes of the Heuristic- and Auto-Learngene baselines: whole
blocks of the ancestry.

- Heuristic-Learngene (Wang et al., 2022) takes the ancestry's last three
  blocks as the learngene. A descendant stacks them, in order, on top of
  randomly initialised lower layers: in an L-layer descendant, layers
  L-3..L-1 inherit them (a descendant of fewer than 3 layers takes the
  last of them).
- Auto-Learngene (Wang et al., 2023) as the Cluster-Learngene paper
  compares it: blocks 0-5 of the ancestry. A descendant's layers 0-5 inherit
  them in order and its deeper layers are random.

A block is inherited whole, at the ancestry's width and heads (norms,
Q/K/V with biases, W^O, FFN, layer scales). As in the Cluster-Learngene
paper's comparison, which loads the ancestry without the dropped blocks and
the classifier, the learngene also holds the ancestry's embeddings and
final norm: a descendant inherits them, and only its other layers and its
classifier start random.
"""
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
    """Learngene block of each of ``num_layers`` descendant layers (None: random).

    ``'heuristic'``: the blocks sit on top (the last layers); ``'auto'``: at
    the bottom (the first layers). Shallower descendants keep the blocks
    nearest their end (heuristic: the last ones; auto: the first ones).
    """
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
        blocks (list[dict]): Block state dicts (``norm1.weight``,
            ``attn.qkv.weight`` (3HD, C), ``mlp.fc1.weight`` (F, C) ...).
        embeddings (dict): The ancestry's stem (see
            :class:`~.vit.Learngene`); empty in a version-1 file.
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
        """Raise ``ValueError`` naming the first missing, mistyped or
        mis-shaped field."""
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
        """Version 1: a DeiT's family (see :func:`~.vit.upgrade_ancestry`),
        the blocks alone (no embeddings, no final norm)."""
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
