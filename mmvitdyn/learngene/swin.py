"""Cluster-Learngene on a Swin Transformer ancestry (mmpretrain's
``SwinTransformer``): its learngene and its descendants.

Per stage, as for a ViT: the heads of every block are clustered on their
MAD inside the (shifted) windows (``WindowAttentionDistanceRecorder``),
adjacent blocks group their FFNs by the rule of ``ffn_grouping`` (groups stay
inside a stage: widths change between stages), and a block keeps per head
centroid its Q/K/V rows and biases, its W^O columns and *its column of the
relative-position-bias table*. The learngene also holds each stage's patch
merging, the patch embedding (with its norm) and the output norms.

A :class:`LearngeneSwin` descendant keeps the ancestry's depths, windows and
head width and has H_a,s / omega_s heads in stage s; head k of a block takes
centroid ``k mod c`` (priority weight-sharing, see ``inheritance``) with its
relative-position-bias column. FFN groups are inherited as independent
copies (how the paper's tables were trained). At omega = 1 with every head
its own cluster the descendant computes what the ancestry computes.
"""
from dataclasses import dataclass, field
from typing import ClassVar, Dict, List, Optional, Sequence, Union

import torch
from mmengine.logging import MMLogger
from mmengine.registry import MODELS
from mmpretrain.models import SwinTransformer
from torch import nn

from ..models.layers.window_msa import HeadWidthWindowMSA
from ..models.utils import loads_checkpoint
from .artefact import (CENTROIDS, LAYER_KEYS, FFNGroup, LearngeneLayer, condense_ffns,
                       condense_layer, ffn_group_from_dict, ffn_group_to_dict, layer_from_dict,
                       layer_to_dict, pick_heads, validate_ffn_groups, validate_layer)
from .ffn_grouping import group_ffns
from .fields import (LearngeneFile, Tensors, check_format, clone_state, expect_int, expect_norm,
                     expect_tensor, expect_type, format_settings, require, validate_settings)
from .head_clustering import HeadCluster, check_clustering_args, cluster_heads
from .inheritance import copy_into, head_assignment, inherit_attention

FORMAT = 'mmvitdyn.swin_learngene'
VERSION = 1
# The keys of mmcv's FFN (Linear-GELU-Dropout, Linear) as FFN_KEYS name them.
SWIN_FFN = {
    'fc1.weight': 'layers.0.0.weight',
    'fc1.bias': 'layers.0.0.bias',
    'fc2.weight': 'layers.1.weight',
    'fc2.bias': 'layers.1.bias'
}
SWIN_ANCESTRY_KEYS = ('embed_dims', 'depths', 'num_heads', 'feedforward_channels', 'window_size',
                      'patch_size', 'patch_resolution', 'qkv_bias', 'out_indices')


@dataclass
class WindowLearngeneLayer(LearngeneLayer):
    """A :class:`LearngeneLayer` of window attention, with ``rel_pos_bias``
    (c, (2Wh-1)(2Ww-1)): each centroid's column of the relative-position-bias table."""
    rel_pos_bias: torch.Tensor


@dataclass
class SwinStage:
    """One stage: ``mad`` (depth, heads), its ``layers``, its ``ffn_groups``
    (block indices within the stage) and its patch merging's state
    (``downsample``; empty for the last stage)."""
    mad: torch.Tensor
    layers: List[WindowLearngeneLayer]
    ffn_groups: List[FFNGroup]
    downsample: Tensors


def swin_ancestry_of(backbone: SwinTransformer) -> dict:
    """The architecture of an mmpretrain ``SwinTransformer`` as the learngene records it."""
    if backbone.use_abs_pos_embed:
        raise ValueError('a Swin ancestry with an absolute position embedding is not supported '
                         '(use_abs_pos_embed=True)')
    first = [stage.blocks[0] for stage in backbone.stages]
    return dict(
        embed_dims=backbone.embed_dims,
        depths=[len(stage.blocks) for stage in backbone.stages],
        num_heads=[block.attn.w_msa.num_heads for block in first],
        feedforward_channels=[block.ffn.layers[0][0].out_features for block in first],
        window_size=first[0].attn.window_size,
        patch_size=backbone.patch_embed.projection.stride[0],
        patch_resolution=list(backbone.patch_resolution),
        qkv_bias=first[0].attn.w_msa.qkv.bias is not None,
        out_indices=sorted(backbone.out_indices))


def stage_dims(ancestry: dict) -> List[int]:
    """Token width of each stage (doubled by every patch merging)."""
    return [ancestry['embed_dims'] * 2**s for s in range(len(ancestry['depths']))]


def head_dims(ancestry: dict) -> List[int]:
    """Head width of each stage: its width over its heads."""
    return [c // h for c, h in zip(stage_dims(ancestry), ancestry['num_heads'])]


@dataclass
class SwinLearngene(LearngeneFile):
    """The condensed Swin ancestry; see the module docstring.

    Args:
        ancestry (dict): See :func:`swin_ancestry_of`.
        settings (dict): How it was made.
        embeddings (dict): The patch embedding (``projection``, ``norm``).
        final_norms (dict): ``norm{i}`` of every output index -> its state.
        stages (list[SwinStage]): One per stage.
    """
    FILE_FORMAT: ClassVar[str] = FORMAT
    FILE_VERSION: ClassVar[int] = VERSION
    WRITER: ClassVar[str] = 'build_learngene.py'

    ancestry: dict
    settings: dict
    embeddings: Tensors
    final_norms: Dict[str, Tensors]
    stages: List[SwinStage] = field(default_factory=list)

    @classmethod
    @torch.no_grad()
    def extract(cls,
                backbone: SwinTransformer,
                mad: Sequence[torch.Tensor],
                clusters: Sequence[Sequence[Sequence[HeadCluster]]],
                ffn_groups: Sequence[Sequence[Sequence[int]]],
                centroid: str = 'select',
                settings: Optional[dict] = None) -> 'SwinLearngene':
        """Condense a Swin given, per stage, its MAD table, the clusters of
        every block (priority order) and its FFN groups."""
        if centroid not in CENTROIDS:
            raise ValueError(f'centroid={centroid!r} is not one of {CENTROIDS}')
        ancestry = swin_ancestry_of(backbone)
        stages = []
        for index, stage in enumerate(backbone.stages):
            blocks = list(stage.blocks)
            layers = []
            for block, block_clusters in zip(blocks, clusters[index]):
                msa = block.attn.w_msa
                layer = condense_layer(msa, block.norm1, block.norm2, block_clusters, centroid)
                table = msa.relative_position_bias_table.t()  # (H, R)
                layers.append(
                    WindowLearngeneLayer(
                        layer.clusters,
                        *(getattr(layer, key) for key in LAYER_KEYS),
                        rel_pos_bias=pick_heads(table, block_clusters, centroid).clone()))

            def ffn_of(block: int, blocks=blocks) -> Tensors:
                ffn = blocks[block].ffn
                return {key: ffn.get_parameter(name) for key, name in SWIN_FFN.items()}

            downsample = {} if stage.downsample is None else clone_state(
                stage.downsample.state_dict())
            stages.append(
                SwinStage(mad[index].detach().cpu().float().clone(), layers,
                          condense_ffns(ffn_groups[index], ffn_of, centroid), downsample))
        final_norms = {
            f'norm{i}': clone_state(getattr(backbone, f'norm{i}').state_dict())
            for i in ancestry['out_indices']
        }
        learngene = cls(ancestry, dict(settings or {}, centroid=centroid),
                        clone_state(backbone.patch_embed.state_dict()), final_norms, stages)
        learngene.validate()
        return learngene

    # ------------------------------------------------------------- queries
    @property
    def num_centroids(self) -> List[List[int]]:
        return [[layer.num_centroids for layer in stage.layers] for stage in self.stages]

    def summary(self) -> str:
        a, lines = self.ancestry, []
        lines.append(f"Learngene of a Swin: depths {a['depths']}, heads {a['num_heads']} of "
                     f"{head_dims(a)}, widths {stage_dims(a)}, window {a['window_size']}, "
                     f"patch {a['patch_size']}")
        lines.append('settings: ' + format_settings(self.settings))
        for index, stage in enumerate(self.stages):
            multi = [list(g.layers) for g in stage.ffn_groups if len(g.layers) > 1]
            lines.append(f'stage {index}: centroids per block '
                         f'{[layer.num_centroids for layer in stage.layers]}, FFN groups of '
                         f'several blocks {multi or "none"}')
        total = sum(t.numel() for t in self._tensors())
        lines.append(f'inherited parameters: {total / 1e6:.3f}M')
        return '\n'.join(lines)

    def _tensors(self) -> List[torch.Tensor]:
        tensors = [*self.embeddings.values()]
        tensors += [t for norm in self.final_norms.values() for t in norm.values()]
        for stage in self.stages:
            tensors += [*stage.downsample.values()]
            tensors += [t for g in stage.ffn_groups for t in g.weights.values()]
            for layer in stage.layers:
                tensors += [
                    layer.qkv_weight, layer.proj_weight, layer.proj_bias, layer.rel_pos_bias,
                    *layer.norm1.values(), *layer.norm2.values()
                ]
                if layer.qkv_bias is not None:
                    tensors.append(layer.qkv_bias)
        return tensors

    # ----------------------------------------------------------- validation
    def validate(self) -> None:
        """Check everything inheritance reads; ``ValueError`` names the field."""
        validate_settings(self.settings)
        a = self._validate_ancestry()
        dims, heads, window = stage_dims(a), a['num_heads'], a['window_size']
        p, c = a['patch_size'], a['embed_dims']
        expect_type(self.embeddings, dict, 'embeddings')
        for key, shape in (('projection.weight', (c, None, p, p)), ('projection.bias', (c, )),
                           ('norm.weight', (c, )), ('norm.bias', (c, ))):
            expect_tensor(require(self.embeddings, key, 'embeddings'), f'embeddings.{key}', shape)
        expect_type(self.final_norms, dict, 'final_norms')
        for index in a['out_indices']:
            expect_norm(
                require(self.final_norms, f'norm{index}', 'final_norms'),
                f'final_norms.norm{index}', dims[index])
        expect_type(self.stages, list, 'stages')
        if len(self.stages) != len(a['depths']):
            raise ValueError(f'learngene has {len(self.stages)} stages, ancestry.depths='
                             f"{a['depths']}")
        table = (2 * window - 1)**2
        for s, stage in enumerate(self.stages):
            where = f'stages[{s}]'
            expect_type(stage, SwinStage, where)
            expect_tensor(stage.mad, f'{where}.mad', (a['depths'][s], heads[s]))
            if not torch.isfinite(stage.mad).all():
                raise ValueError(f'learngene {where}.mad has non-finite values at (block, head) '
                                 f'{torch.nonzero(~torch.isfinite(stage.mad)).tolist()}')
            expect_type(stage.layers, list, f'{where}.layers')
            if len(stage.layers) != a['depths'][s]:
                raise ValueError(f'learngene {where} has {len(stage.layers)} layers, depth '
                                 f"{a['depths'][s]}")
            for index, layer in enumerate(stage.layers):
                field_ = f'{where}.layers[{index}]'
                expect_type(layer, WindowLearngeneLayer, field_)
                validate_layer(layer, field_, heads[s], dims[s], head_dims(a)[s], a['qkv_bias'])
                expect_tensor(layer.rel_pos_bias, f'{field_}.rel_pos_bias',
                              (layer.num_centroids, table))
            validate_ffn_groups(stage.ffn_groups, f'{where}.ffn_groups', a['depths'][s], dims[s],
                                a['feedforward_channels'][s])
            expect_type(stage.downsample, dict, f'{where}.downsample')
            if s < len(self.stages) - 1:
                for key, shape in (('norm.weight', (4 * dims[s], )), ('norm.bias', (4 * dims[s], )),
                                   ('reduction.weight', (2 * dims[s], 4 * dims[s]))):
                    expect_tensor(
                        require(stage.downsample, key, f'{where}.downsample'),
                        f'{where}.downsample.{key}', shape)

    def _validate_ancestry(self) -> dict:
        expect_type(self.ancestry, dict, 'ancestry')
        a = self.ancestry
        for key in SWIN_ANCESTRY_KEYS:
            if key not in a:
                raise ValueError(f'learngene ancestry.{key} is missing')
        for key in ('embed_dims', 'window_size', 'patch_size'):
            expect_int(a[key], f'ancestry.{key}', minimum=1)
        stages = len(a['depths']) if isinstance(a['depths'], list) else 0
        for key in ('depths', 'num_heads', 'feedforward_channels'):
            value = a[key]
            if not isinstance(value, list) or not value or len(value) != stages:
                raise ValueError(f'learngene ancestry.{key}={value!r} must be a list with one '
                                 'int per stage')
            for item in value:
                expect_int(item, f'ancestry.{key}', minimum=1)
        for dims, h in zip(stage_dims(a), a['num_heads']):
            if dims % h:
                raise ValueError(f'learngene ancestry.num_heads={a["num_heads"]} do not divide '
                                 f'the stage widths {stage_dims(a)}')
        expect_type(a['qkv_bias'], bool, 'ancestry.qkv_bias')
        for index in a['out_indices']:
            if not isinstance(index, int) or not 0 <= index < stages:
                raise ValueError(f"learngene ancestry.out_indices={a['out_indices']} must be "
                                 f'stages 0..{stages - 1}')
        return a

    # ----------------------------------------------------------------- I/O
    def to_dict(self) -> dict:
        return dict(
            format=FORMAT,
            version=VERSION,
            ancestry=dict(self.ancestry),
            settings=dict(self.settings),
            embeddings=dict(self.embeddings),
            final_norms={
                k: dict(v)
                for k, v in self.final_norms.items()
            },
            stages=[
                dict(
                    mad=stage.mad,
                    layers=[
                        dict(layer_to_dict(layer), rel_pos_bias=layer.rel_pos_bias)
                        for layer in stage.layers
                    ],
                    ffn_groups=[ffn_group_to_dict(g) for g in stage.ffn_groups],
                    downsample=dict(stage.downsample)) for stage in self.stages
            ])

    @classmethod
    def from_dict(cls, data: dict, source: str = 'learngene data') -> 'SwinLearngene':
        """Read :meth:`to_dict`'s layout; ``ValueError`` names ``source`` and the field."""
        check_format(data, FORMAT, VERSION, source)
        try:
            stages = []
            for s, stage in enumerate(require(data, 'stages', '', list)):
                where = f'stages[{s}]'
                layers = [
                    layer_from_dict(layer, f'{where}.layers[{i}]', WindowLearngeneLayer,
                                    (*LAYER_KEYS, 'rel_pos_bias'))
                    for i, layer in enumerate(require(stage, 'layers', where, list))
                ]
                groups = [
                    ffn_group_from_dict(g, f'{where}.ffn_groups[{i}]')
                    for i, g in enumerate(require(stage, 'ffn_groups', where, list))
                ]
                stages.append(
                    SwinStage(
                        require(stage, 'mad', where), layers, groups,
                        require(stage, 'downsample', where)))
            learngene = cls(
                *(require(data, key, '')
                  for key in ('ancestry', 'settings', 'embeddings', 'final_norms')), stages)
            learngene.validate()
        except ValueError as err:
            raise ValueError(f'{source}: {err}') from err
        return learngene


def condense_swin(backbone: SwinTransformer,
                  mad: Sequence[torch.Tensor],
                  method: str = 'dbscan',
                  eps: float = 10.,
                  min_samples: int = 1,
                  k: Union[int, Sequence[int], None] = None,
                  centroid: str = 'select',
                  ffn_clustering: bool = True,
                  settings: Optional[dict] = None) -> SwinLearngene:
    """Steps 2-4 on a Swin, stage by stage: cluster each block's heads on
    their MAD, group the FFNs of adjacent blocks, extract.

    Args:
        backbone (SwinTransformer): The ancestry.
        mad (Sequence[Tensor]): Per stage, the (depth, heads) MAD table.
        method, eps, min_samples, k, centroid, ffn_clustering: As
            :func:`mmvitdyn.learngene.condense` (``k``: one value, or one per
            block over all stages).
        settings (dict, optional): Recorded as is.
    """
    check_clustering_args(method, eps, min_samples, k)
    depths = [len(stage.blocks) for stage in backbone.stages]
    if len(mad) != len(depths):
        raise ValueError(f'mad has {len(mad)} stage tables, the ancestry {len(depths)} stages')
    if k is not None and not isinstance(k, int):
        k = list(k)
        if len(k) != sum(depths):
            raise ValueError(f'k has {len(k)} entries for {sum(depths)} blocks')
    clusters, groups, start = [], [], 0
    for stage_mad, depth in zip(mad, depths):
        stage_k = k if k is None or isinstance(k, int) else k[start:start + depth]
        start += depth
        stage_clusters = cluster_heads(stage_mad, method, eps, min_samples, stage_k)
        clusters.append(stage_clusters)
        groups.append(
            group_ffns([len(c) for c in stage_clusters], stage_mad.shape[1], ffn_clustering))
    record = dict(
        method=method,
        ffn_groups='adjacent equal counts in a stage' if ffn_clustering else 'disabled')
    record.update(dict(eps=eps, min_samples=min_samples) if method == 'dbscan' else dict(k=k))
    record.update(settings or {})
    return SwinLearngene.extract(backbone, mad, clusters, groups, centroid, record)


@MODELS.register_module()
class LearngeneSwin(SwinTransformer):
    """A Swin descendant of Cluster-Learngene, built from a Swin learngene.

    The widths, depths, windows, head width and patch size are the
    ancestry's (read from the learngene); the heads per stage are the
    descendant's. In :meth:`init_weights` it inherits the learngene (see the
    module docstring) unless ``init_cfg`` loads a checkpoint.

    Args:
        learngene (str): Path of the Swin learngene file.
        arch (dict): ``num_heads`` (one per stage) or ``omega`` (H_a / H_d,
            one value or one per stage); default: the ancestry's heads.
        **kwargs: Other arguments of ``SwinTransformer`` (``img_size``,
            ``out_indices``, ``drop_path_rate``, ``init_cfg`` ...).
    """

    def __init__(self, learngene: str, arch: dict = dict(), **kwargs):
        meta = SwinLearngene.load(learngene, mmap=True)
        a = meta.ancestry
        for key in ('patch_size', 'window_size'):
            value = kwargs.pop(key, a[key])
            if value != a[key]:
                raise ValueError(f"{key}={value} differs from the learngene's {a[key]} "
                                 f'({learngene})')
        heads = self._stage_heads(arch, a['num_heads'])
        stage_cfgs = [
            dict(
                block_cfgs=dict(
                    attn_cfgs=dict(
                        window_msa=HeadWidthWindowMSA, head_dim=d, qkv_bias=a['qkv_bias']),
                    ffn_cfgs=dict(feedforward_channels=f)))
            for d, f in zip(head_dims(a), a['feedforward_channels'])
        ]
        kwargs.setdefault('out_indices', tuple(a['out_indices']))
        super().__init__(
            arch=dict(embed_dims=a['embed_dims'], depths=list(a['depths']), num_heads=heads),
            patch_size=a['patch_size'],
            window_size=a['window_size'],
            stage_cfgs=stage_cfgs,
            **kwargs)
        self.learngene_path = learngene
        self.heads = heads
        # Centroid (priority rank) of every head, per stage and block.
        self.assignments = [[head_assignment(c, h) for c in counts]
                            for counts, h in zip(meta.num_centroids, heads)]
        # Parameter name -> size, for what the learngene initialised.
        self.inherited: Dict[str, int] = {}
        self._register_load_state_dict_pre_hook(self._forget_loaded)

    @staticmethod
    def _stage_heads(arch: dict, ancestry_heads: List[int]) -> List[int]:
        if not isinstance(arch, dict) or set(arch) - {'num_heads', 'omega'}:
            raise ValueError(f"arch must be a dict with 'num_heads' or 'omega', got {arch!r}")
        if 'num_heads' in arch and 'omega' in arch:
            raise ValueError(f'give num_heads ({arch["num_heads"]}) or omega ({arch["omega"]}), '
                             'not both')
        stages = len(ancestry_heads)
        if 'num_heads' in arch:
            heads = list(arch['num_heads'])
        else:
            omega = arch.get('omega', 1)
            omegas = [omega] * stages if isinstance(omega, (int, float)) else list(omega)
            if len(omegas) != stages or not all(o > 0 for o in omegas):
                raise ValueError(f'omega={omega!r} must be > 0, one value or one per stage '
                                 f'({stages})')
            heads = []
            for h, o in zip(ancestry_heads, omegas):
                if abs(h / o - round(h / o)) > 1e-6:
                    raise ValueError(f'omega={o} cannot form heads: {h} / {o} = {h / o:g} is not '
                                     'a whole number')
                heads.append(int(round(h / o)))
        if len(heads) != stages or not all(isinstance(h, int) and h >= 1 for h in heads):
            raise ValueError(f'num_heads={heads} must be one int >= 1 per stage ({stages})')
        return heads

    def init_weights(self):
        """Default init (or the ``init_cfg`` checkpoint), then, unless a
        checkpoint was loaded, inherit the learngene. Logs T-/I-Params."""
        super().init_weights()
        if not loads_checkpoint(self.init_cfg):
            self.inherit_from(SwinLearngene.load(self.learngene_path))
        counts = self.parameter_counts()
        MMLogger.get_current_instance().info(
            f'{type(self).__name__} from {self.learngene_path}: heads per stage {self.heads}; '
            f"T-Params {counts['t_params'] / 1e6:.3f}M, I-Params {counts['i_params'] / 1e6:.3f}M")

    @torch.no_grad()
    def inherit_from(self, learngene: SwinLearngene) -> None:
        """Copy the learngene into this descendant and record in
        :attr:`inherited` every tensor it set.

        Raises:
            ValueError: The learngene lacks or mis-shapes something (named),
                or has other centroid counts than the one it was built from.
        """
        learngene.validate()
        assignments = [[head_assignment(c, h) for c in counts]
                       for counts, h in zip(learngene.num_centroids, self.heads)]
        if assignments != self.assignments:
            raise ValueError(f'this {type(self).__name__} was built from {self.learngene_path} '
                             f'(heads from centroids {self.assignments}); the learngene given '
                             f'assigns {assignments}')
        inherited: Dict[str, int] = {}

        def put(module: nn.Module, name: str, value: torch.Tensor, label: str) -> None:
            copy_into(module, name, value, label)
            inherited[label] = value.numel()

        def put_state(module: nn.Module, state: Tensors, prefix: str) -> None:
            for key, _ in list(module.named_parameters()):
                owner, _, leaf = key.rpartition('.')
                put(
                    module.get_submodule(owner), leaf, require(state, key, prefix),
                    f'{prefix}.{key}')

        put_state(self.patch_embed, learngene.embeddings, 'patch_embed')
        for index in self.out_indices:
            if f'norm{index}' in learngene.final_norms:
                put_state(
                    getattr(self, f'norm{index}'), learngene.final_norms[f'norm{index}'],
                    f'norm{index}')
        for s, (stage, condensed) in enumerate(zip(self.stages, learngene.stages)):
            for b, (block, layer) in enumerate(zip(stage.blocks, condensed.layers)):
                prefix = f'stages.{s}.blocks.{b}'
                assignment = self.assignments[s][b]
                msa = block.attn.w_msa
                written = inherit_attention(msa, layer, assignment, f'{prefix}.attn.w_msa')
                inherited.update({f'{prefix}.attn.w_msa.{k}': v for k, v in written.items()})
                index = torch.as_tensor(assignment, dtype=torch.long)
                put(msa, 'relative_position_bias_table', layer.rel_pos_bias[index].t(),
                    f'{prefix}.attn.w_msa.relative_position_bias_table')
                put_state(block.norm1, layer.norm1, f'{prefix}.norm1')
                put_state(block.norm2, layer.norm2, f'{prefix}.norm2')
                group = next(g for g in condensed.ffn_groups if b in g.layers)
                for key, name in SWIN_FFN.items():
                    owner, _, leaf = name.rpartition('.')
                    put(
                        block.ffn.get_submodule(owner), leaf, group.weights[key],
                        f'{prefix}.ffn.{name}')
            if stage.downsample is not None:
                put_state(stage.downsample, condensed.downsample, f'stages.{s}.downsample')
        self.inherited = inherited

    def parameter_counts(self) -> Dict[str, int]:
        """``t_params``: the descendant's parameters; ``i_params``: those set
        from the learngene (0 after loading its own checkpoint)."""
        return dict(
            t_params=sum(p.numel() for p in self.parameters()),
            i_params=sum(self.inherited.values()))

    def _forget_loaded(self, state_dict, prefix, *args, **kwargs):
        """Load-state-dict pre-hook: loaded tensors no longer count as inherited."""
        self.inherited = {
            name: size
            for name, size in self.inherited.items() if prefix + name not in state_dict
        }
