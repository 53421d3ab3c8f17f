"""The LeViT descendant of Cluster-Learngene and its block baselines: ``LearngeneLeViT``."""
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple, Union

import torch
from mmengine.logging import MMLogger
from mmengine.registry import MODELS
from mmpretrain.models import LeViT
from torch import nn

from ...checkpoint import loads_checkpoint
from ...utils import check_int
from ..ancestries.levit import HSWISH, stage_layout
from ..artefacts.levit import (HEAD_AXES, LeViTBlockLearngene, LeViTLayer, LeViTLearngene,
                               merge_heads)
from ..file_format import Tensors
from ..inheritance import (check_built_from, copy_state, copy_tensors, head_assignment,
                           heads_per_layer, layer_sources)
from .inheritance_record import InheritanceRecord

DESCENDANT_ARCH_KEYS = ('num_heads', 'omega', 'depths')
AnyLeViTLearngene = Union[LeViTLearngene, LeViTBlockLearngene]
# An attention block and its MLP: (module, its name in the descendant) each.
BlockPair = Tuple[Tuple[nn.Module, str], Tuple[nn.Module, str]]


class ClusterInit:
    """``init_mode='cluster'``: a :class:`LeViTLearngene`; descendant block i of a stage takes
    learngene layer i mod (ancestry depth), its heads the layer's centroids by priority, its MLP
    the layer's FFN group."""

    def load(self, path: str, mmap: bool) -> LeViTLearngene:
        return LeViTLearngene.load(path, mmap=mmap)

    def check_heads(self, heads: List[int], ancestry: dict) -> None:
        """Any heads per stage."""

    def sources(self, learngene: LeViTLearngene, depths: Sequence[int]) -> List[List[int]]:
        """Learngene layer of every block, per stage."""
        return [layer_sources(old, new) for old, new in zip(learngene.ancestry['depths'], depths)]

    def assignments(self, learngene: LeViTLearngene, sources: List[List[int]],
                    heads: List[int]) -> List[List[List[int]]]:
        """Centroid of every head of every block, per stage."""
        return [[head_assignment(counts[source], h) for source in stage]
                for counts, stage, h in zip(learngene.num_centroids, sources, heads)]

    def built_from(self, model: 'LearngeneLeViT', learngene: LeViTLearngene) -> Tuple[dict, dict]:
        """What ``model`` was built with and what ``learngene`` gives, for ``check_built_from``."""
        return ({
            'heads from centroids': model.assignments
        }, {
            'heads from centroids': self.assignments(learngene, model.sources, model.heads)
        })

    def downsample_states(self, learngene: LeViTLearngene,
                          stage: int) -> Tuple[Tuple[Tensors, str], ...]:
        """(state, learngene field) of the subsample attention before ``stage`` and of its MLP."""
        condensed = learngene.stages[stage]
        return ((condensed.downsample, f'stages[{stage}].downsample'),
                (condensed.downsample_mlp, f'stages[{stage}].downsample_mlp'))

    def copy_block(self, learngene: LeViTLearngene, stage: int, source: int,
                   assignment: Sequence[int], pair: BlockPair, inherited: Dict[str, int]) -> None:
        """Copy learngene layer ``source`` of ``stage`` (heads ``assignment``) and its FFN group
        into ``pair``, recording the parameters in ``inherited``."""
        (attn, attn_name), (mlp, mlp_name) = pair
        condensed = learngene.stages[stage]
        copy_tensors(attn, head_tensors(condensed.layers[source], assignment), attn_name, inherited)
        group = condensed.group_of(source)
        copy_state(mlp, condensed.ffn_groups[group].weights, mlp_name,
                   f'stages[{stage}].ffn_groups[{group}]', inherited)


@dataclass(frozen=True)
class BlockInit:
    """``init_mode`` ``method`` ('heuristic' / 'auto'): a :class:`LeViTBlockLearngene` of that
    method; whole blocks of the ancestry's heads where it has them, the others random."""

    method: str

    def load(self, path: str, mmap: bool) -> LeViTBlockLearngene:
        learngene = LeViTBlockLearngene.load(path, mmap=mmap)
        if learngene.method != self.method:
            raise ValueError(f"init_mode={self.method!r} needs a {self.method} learngene; {path} "
                             f"is the {learngene.method} learngene")
        return learngene

    def check_heads(self, heads: List[int], ancestry: dict) -> None:
        """``ValueError`` unless ``heads`` per stage are the ancestry's."""
        if heads != ancestry['num_heads']:
            raise ValueError(f"init_mode={self.method!r} inherits whole blocks of "
                             f"{ancestry['num_heads']} heads per stage; arch gives {heads} (keep "
                             "the learngene's)")

    def sources(self, learngene: LeViTBlockLearngene,
                depths: Sequence[int]) -> List[List[Optional[int]]]:
        """Learngene block of every block (None: random), per stage."""
        return learngene.sources(list(depths))

    def assignments(self, learngene: LeViTBlockLearngene, sources: List[List[Optional[int]]],
                    heads: List[int]) -> List[List[List[int]]]:
        """Every head its own, per block and stage."""
        return [[list(range(h))] * len(stage) for stage, h in zip(sources, heads)]

    def built_from(self, model: 'LearngeneLeViT',
                   learngene: LeViTBlockLearngene) -> Tuple[dict, dict]:
        """What ``model`` was built with and what ``learngene`` gives, for ``check_built_from``."""
        return ({
            'learngene blocks': model.sources
        }, {
            'learngene blocks': self.sources(learngene, model.depths)
        })

    def downsample_states(self, learngene: LeViTBlockLearngene,
                          stage: int) -> Tuple[Tuple[Tensors, str], ...]:
        """(state, learngene field) of the subsample attention before ``stage`` and of its MLP."""
        return ((learngene.downsamples[stage], f'downsamples[{stage}]'),
                (learngene.downsample_mlps[stage], f'downsample_mlps[{stage}]'))

    def copy_block(self, learngene: LeViTBlockLearngene, stage: int, source: int,
                   assignment: Sequence[int], pair: BlockPair, inherited: Dict[str, int]) -> None:
        """Copy learngene block ``source`` into ``pair`` (``stage``, ``assignment``: unused),
        recording the parameters in ``inherited``."""
        for (module, name), part in zip(pair, ('attn', 'mlp')):
            copy_state(module, learngene.blocks[source][part], name, f'blocks[{source}].{part}',
                       inherited)


# init_mode -> how it initialises.
INIT_MODES = {
    'cluster': ClusterInit(),
    'heuristic': BlockInit('heuristic'),
    'auto': BlockInit('auto'),
}


class LeViTArch(dict):
    """A dict ``arch`` for mmpretrain's ``LeViT`` (1.2): holds the keys it checks (``embed_dim``,
    ``num_heads``, ``depth``, ``key_dim``) and answers those it reads (``embed_dims``, ...)."""
    # The keys LeViT reads -> those it checks for.
    CHECKED = {'embed_dims': 'embed_dim', 'depths': 'depth', 'key_dims': 'key_dim'}

    def __missing__(self, key: str):
        if key not in self.CHECKED:
            raise KeyError(key)
        return self[self.CHECKED[key]]


def levit_arch(embed_dims: Sequence[int], num_heads: Sequence[int], depths: Sequence[int],
               key_dims: Sequence[int]) -> LeViTArch:
    """The ``arch`` of a LeViT with these per-stage widths, heads, depths and key widths."""
    return LeViTArch(
        embed_dim=list(embed_dims),
        num_heads=list(num_heads),
        depth=list(depths),
        key_dim=list(key_dims))


def descendant_stages(arch: dict, ancestry: dict) -> Tuple[List[int], List[int]]:
    """Heads and depth of every stage of a descendant from ``arch`` (``num_heads`` or ``omega``,
    H_a / H_d, and ``depths``: each one value or one per stage; default the ``ancestry``'s);
    ``ValueError`` names a bad entry and what is allowed."""
    if not isinstance(arch, dict) or set(arch) - set(DESCENDANT_ARCH_KEYS):
        raise ValueError(f'arch={arch!r} must be a dict of {list(DESCENDANT_ARCH_KEYS)}')
    stages = len(ancestry['num_heads'])

    def per_stage(key: str, default) -> list:
        value = arch.get(key, default)
        values = list(value) if isinstance(value, (list, tuple)) else [value] * stages
        if len(values) != stages:
            raise ValueError(f'arch.{key}={value!r} must be one value or one per stage ({stages})')
        return values

    nums, omegas = per_stage('num_heads', None), per_stage('omega', None)
    for num in nums:
        if num is not None:
            check_int(num, 'arch.num_heads', minimum=1)
    heads = [
        heads_per_layer(1, h, num_heads=n, omega=o)[0]
        for h, n, o in zip(ancestry['num_heads'], nums, omegas)
    ]
    depths = per_stage('depths', ancestry['depths'])
    for depth in depths:
        check_int(depth, 'arch.depths', minimum=1)
    return heads, depths


@MODELS.register_module()
class LearngeneLeViT(InheritanceRecord, LeViT):
    """A LeViT descendant of Cluster-Learngene, built from a LeViT learngene.

    Widths, key widths, grids, ratios, activations, stem and subsample attentions are the
    ancestry's; heads and depths per stage are the descendant's. :meth:`init_weights` inherits
    the learngene unless ``init_cfg`` loads a checkpoint.

    Args:
        learngene (str): Path of the LeViT learngene file.
        arch (dict): ``num_heads`` or ``omega`` (H_a / H_d), and ``depths``: each one value or
            one per stage. Defaults to the ancestry's heads and depths.
        init_mode (str): 'cluster' (a Cluster-Learngene file), or 'heuristic' / 'auto' (a
            block learngene: whole blocks of the ancestry's heads, the others random). Defaults
            to 'cluster'.
        **kwargs: Other arguments of ``LeViT`` (``out_indices``, ``drop_path_rate``,
            ``init_cfg``); ``img_size``, ``patch_size``, ``attn_ratio``, ``mlp_ratio`` and
            ``act_cfg`` default to the ancestry's and may not differ; ``deploy`` is refused.
    """

    def __init__(self, learngene: str, arch: dict = dict(), init_mode: str = 'cluster', **kwargs):
        meta = self._load_learngene(learngene, init_mode, mmap=True)
        a = meta.ancestry
        if kwargs.pop('deploy', False):
            raise ValueError('deploy=True: a descendant inherits LeViT before its BatchNorms are '
                             'fused; call switch_to_deploy() after init_weights()')
        fixed = dict(
            img_size=a['resolutions'][0] * a['patch_size'],
            patch_size=a['patch_size'],
            attn_ratio=a['attn_ratio'],
            mlp_ratio=a['mlp_ratio'],
            act_cfg=HSWISH)
        for key, value in fixed.items():
            given = kwargs.pop(key, value)
            if given != value:
                raise ValueError(f"{key}={given!r} differs from the learngene's {value!r} "
                                 f'({learngene})')
        heads, depths = descendant_stages(arch, a)
        INIT_MODES[init_mode].check_heads(heads, a)
        super().__init__(
            arch=levit_arch(a['embed_dims'], heads, depths, a['key_dims']), **fixed, **kwargs)
        self.learngene_path = learngene
        self.init_mode = init_mode
        self.heads = heads
        # Learngene block of every block (None: random), and centroid
        # (priority rank) of every head, per stage.
        self.sources = self.init_strategy.sources(meta, depths)
        self.assignments = self.init_strategy.assignments(meta, self.sources, heads)
        # Parameter name -> size, for what the learngene initialised.
        self.inherited: Dict[str, int] = {}
        self._register_load_state_dict_pre_hook(self.forget_loaded)

    @property
    def init_strategy(self) -> Union[ClusterInit, BlockInit]:
        """How :attr:`init_mode` initialises (:data:`INIT_MODES`)."""
        return INIT_MODES[self.init_mode]

    @staticmethod
    def _load_learngene(path: str, init_mode: str, mmap: bool = False) -> AnyLeViTLearngene:
        """The learngene of ``init_mode`` read from ``path``."""
        if not isinstance(init_mode, str) or init_mode not in INIT_MODES:
            raise ValueError(f'init_mode={init_mode!r} is not one of {list(INIT_MODES)}')
        return INIT_MODES[init_mode].load(path, mmap)

    def init_weights(self):
        """Default init (or the ``init_cfg`` checkpoint), then inherit unless a checkpoint was
        loaded; logs T-/I-Params."""
        super().init_weights()
        if not loads_checkpoint(self.init_cfg):
            self.inherit_from(self._load_learngene(self.learngene_path, self.init_mode))
        counts = self.parameter_counts()
        MMLogger.get_current_instance().info(
            f'{type(self).__name__} ({self.init_mode}) from {self.learngene_path}: heads per '
            f'stage {self.heads}, depths {self.depths}, learngene blocks {self.sources}; '
            f'T-Params {counts["t_params"] / 1e6:.3f}M, I-Params {counts["i_params"] / 1e6:.3f}M')

    @torch.no_grad()
    def inherit_from(self, learngene: AnyLeViTLearngene) -> None:
        """Copy the learngene in; record in :attr:`inherited` every parameter it set.

        Raises:
            ValueError: The learngene lacks or mis-shapes something (named), or has other centroid
                counts (blocks) than the one it was built from.
        """
        learngene.validate()
        strategy = self.init_strategy
        check_built_from(self, self.learngene_path, *strategy.built_from(self, learngene))
        inherited: Dict[str, int] = {}
        copy_state(self.patch_embed, learngene.embeddings, 'patch_embed', 'embeddings', inherited)
        for s, stage in enumerate(self.stages):
            layout = stage_layout(stage)
            if layout.downsample is not None:
                attn, mlp = layout.downsample
                (attn_state, attn_field), (mlp_state,
                                           mlp_field) = strategy.downsample_states(learngene, s)
                copy_state(stage[attn], attn_state, f'stages.{s}.{attn}', attn_field, inherited)
                copy_state(stage[mlp].block, mlp_state, f'stages.{s}.{mlp}.block', mlp_field,
                           inherited)
            for (attn, mlp), source, assignment in zip(layout.blocks, self.sources[s],
                                                       self.assignments[s]):
                if source is not None:
                    pair = ((stage[attn].block, f'stages.{s}.{attn}.block'),
                            (stage[mlp].block, f'stages.{s}.{mlp}.block'))
                    strategy.copy_block(learngene, s, source, assignment, pair, inherited)
        self.inherited = inherited
        self.train(self.training)  # LeViT's attentions cache their biases in eval mode


def head_tensors(layer: LeViTLayer, assignment: Sequence[int]) -> Tensors:
    """The state of an attention block whose head k is centroid ``assignment[k]`` of ``layer``
    (the :data:`HEAD_AXES` slices in order, and the BatchNorm after W^O)."""
    index = torch.as_tensor(list(assignment), dtype=torch.long)
    tensors = {key: merge_heads(layer.heads[key][index], axis) for key, axis in HEAD_AXES.items()}
    tensors.update({f'proj.1.bn.{key}': value for key, value in layer.proj_bn.items()})
    return tensors
