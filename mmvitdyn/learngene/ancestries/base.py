"""What learngene building asks of an ancestry family (:class:`Ancestry`, found by
:func:`ancestry_for`), and the condense steps the families share."""
import pkgutil
import sys
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import singledispatch
from importlib import import_module
from typing import Callable, ClassVar, List, Optional, Sequence, Tuple, Union

import torch
from torch import nn

from ..artefacts.layers import FFN_KEYS, FFNGroup, LearngeneLayer
from ..ffn_grouping import Groups, group_ffns
from ..file_format import Tensors
from ..head_clustering import HeadCluster, check_clustering_args, cluster_heads

CENTROIDS = ('select', 'average')


class Ancestry(ABC):
    """An ancestry ``backbone`` (trained, of one family): its MAD recorder, condense, extract."""

    def __init__(self, backbone: nn.Module):
        self.backbone = backbone

    @abstractmethod
    def describe(self) -> dict:
        """The architecture the learngene records (its ``ancestry`` entry)."""

    @abstractmethod
    def recorder(self):
        """A MAD recorder: ``recording()`` context, ``mean()``, ``num_images``."""

    @abstractmethod
    def condense(self, mad, num_images: int, how: 'CondenseSettings'):
        """Steps 2-4 as ``how`` says: cluster the heads on the recorder's ``mad`` (averaged
        over ``num_images``, recorded), group the FFNs, extract."""

    @abstractmethod
    def extract(self,
                mad,
                clusters,
                ffn_groups,
                centroid: str = 'select',
                settings: Optional[dict] = None):
        """Step 4: the learngene, from the MAD, head clusters and FFN groups of :meth:`condense`."""


class StagedAncestry(Ancestry):
    """An ancestry built in stages (Swin, LeViT), condensed stage by stage."""
    # The family, named in errors.
    FAMILY: ClassVar[str]

    @abstractmethod
    def stage_depths(self) -> List[int]:
        """The attention blocks of every stage."""

    def stage_tables(self, mad) -> Sequence[torch.Tensor]:
        """One (depth, heads) MAD table per stage from the recorder's MAD (by default, itself)."""
        return mad

    def condense(self, mad, num_images: int, how: 'CondenseSettings'):
        """See :meth:`Ancestry.condense`; ``how.k`` one value or one per block over all stages,
        explicit FFN groups refused."""
        clusters, groups, rule = condense_stages(
            self.stage_tables(mad), self.stage_depths(), how, self.FAMILY)
        return self.extract(mad, clusters, groups, how.centroid, how.record(rule, num_images))


def check_centroid(centroid: str) -> None:
    """Raise ``ValueError`` unless ``centroid`` is one of :data:`CENTROIDS`."""
    if centroid not in CENTROIDS:
        raise ValueError(f'centroid={centroid!r} is not one of {CENTROIDS}')


@singledispatch
def ancestry_for(backbone: nn.Module) -> Ancestry:
    """The :class:`Ancestry` of ``backbone``'s family (importing the family modules if needed);
    ``ValueError`` if no family module registers its class."""
    if import_family_modules():
        return ancestry_for(backbone)
    families = sorted(cls.__name__ for cls in ancestry_for.registry if cls is not object)
    raise ValueError(f'{type(backbone).__name__} is not an ancestry family learngenes are built '
                     f'from ({", ".join(families)} or their subclasses); convert the checkpoint '
                     "to mmvitdyn's ViT first (tools/model_converters/)")


def import_family_modules() -> bool:
    """Import the modules of this package not imported yet; whether there were any."""
    package = sys.modules[__package__]
    names = [f'{__package__}.{info.name}' for info in pkgutil.iter_modules(package.__path__)]
    missing = [name for name in names if name not in sys.modules]
    for name in missing:
        import_module(name)
    return bool(missing)


@dataclass(frozen=True)
class CondenseSettings:
    """How steps 2-4 condense an ancestry; ``ValueError`` names a setting they cannot use.

    Args:
        method, eps, min_samples, k: Head clustering (see ``cluster_heads``).
        centroid (str): 'select' or 'average' (see :func:`pick_heads`).
        ffn_clustering, ffn_groups: False disables FFN grouping (ablation); explicit groups.
        extra (dict, optional): Further entries the learngene records.
    """
    method: str = 'dbscan'
    eps: float = 10.
    min_samples: int = 1
    k: Union[int, Sequence[int], None] = None
    centroid: str = 'select'
    ffn_clustering: bool = True
    ffn_groups: Optional[Sequence[Sequence[int]]] = None
    extra: Optional[dict] = None

    def __post_init__(self):
        check_clustering_args(self.method, self.eps, self.min_samples, self.k)
        check_centroid(self.centroid)

    def record(self, ffn_rule: str, num_images: int) -> dict:
        """What a learngene's ``settings`` records of steps 1-3."""
        record = dict(method=self.method, ffn_groups=ffn_rule)
        record.update(
            dict(eps=self.eps, min_samples=self.min_samples) if self.method == 'dbscan' else dict(
                k=self.k))
        record.update({'num_images': num_images, **(self.extra or {})})
        return record


def clone_state(state: Tensors) -> Tensors:
    """A detached copy of a state dict."""
    return {key: value.detach().clone() for key, value in state.items()}


def pick_heads(tensor: torch.Tensor, clusters: Sequence[HeadCluster],
               centroid: str) -> torch.Tensor:
    """(H, ...) per-head tensor -> (c, ...), one row per cluster: its
    representative's (``select``) or its members' mean (``average``)."""
    if centroid == 'select':
        return torch.stack([tensor[c.representative] for c in clusters])
    return torch.stack([tensor[list(c.members)].mean(0) for c in clusters])


def substate(state: Tensors, prefix: str) -> Tensors:
    """The entries of ``state`` under ``prefix``, with the prefix removed."""
    return {key[len(prefix):]: value for key, value in state.items() if key.startswith(prefix)}


@torch.no_grad()
def condense_attention(attn: Tensors,
                       num_heads: int,
                       norm1: Tensors,
                       norm2: Tensors,
                       clusters: Sequence[HeadCluster],
                       centroid: str,
                       layer_class: type = LearngeneLayer,
                       **extra) -> LearngeneLayer:
    """One attention layer of ``num_heads`` heads condensed to a ``layer_class``
    (:class:`LearngeneLayer` or a subclass with fields ``extra``).

    Args:
        attn (dict): ``qkv.weight`` (3HD, C), ``qkv.bias`` (3HD, ; optional), ``proj.weight``
            (C, HD) and ``proj.bias`` (C, ).
        norm1, norm2 (dict): The layer's norms' state dicts.
        clusters, centroid: The head clusters in priority order; see :func:`pick_heads`.
    """
    h = num_heads
    d = attn['qkv.weight'].shape[0] // (3 * h)
    qkv = attn['qkv.weight'].view(3, h, d, -1).transpose(0, 1)  # (H, 3, D, C)
    bias = attn.get('qkv.bias')
    proj = attn['proj.weight'].view(-1, h, d).transpose(0, 1)  # (H, C, D)
    return layer_class(
        clusters=list(clusters),
        qkv_weight=pick_heads(qkv, clusters, centroid),
        qkv_bias=None if bias is None else pick_heads(
            bias.view(3, h, d).transpose(0, 1), clusters, centroid),
        proj_weight=pick_heads(proj, clusters, centroid),
        proj_bias=attn['proj.bias'].detach().clone(),
        norm1=clone_state(norm1),
        norm2=clone_state(norm2),
        **extra)


@torch.no_grad()
def condense_ffns(ffn_groups: Groups,
                  ffn_of: Callable[[int], Tensors],
                  centroid: str,
                  keys: Sequence[str] = FFN_KEYS) -> List[FFNGroup]:
    """One FFN per group (its ``keys`` from ``ffn_of(layer)``): the first layer's
    (``select``) or the members' mean (``average``)."""
    groups = []
    for group in ffn_groups:
        members = group if centroid == 'average' else group[:1]
        states = [ffn_of(i) for i in members]
        weights = {key: torch.stack([s[key] for s in states]).mean(0) for key in keys}
        groups.append(FFNGroup(tuple(group), weights))
    return groups


def condense_stages(mad: Sequence[torch.Tensor], depths: Sequence[int], how: CondenseSettings,
                    family: str) -> Tuple[List[List[List[HeadCluster]]], List[Groups], str]:
    """Steps 2-3 stage by stage, given one (depth_s, heads_s) ``mad`` table and the ``depths``
    of every stage (``how.k``: one or one per block; ``family`` named in errors); returns per
    stage the blocks' clusters (priority order), per stage its FFN groups, and the rule."""
    if how.ffn_groups is not None:
        raise ValueError(f'ffn_groups={how.ffn_groups!r}: explicit FFN groups are not '
                         f'supported for a {family} ancestry (its groups are found per stage)')
    if len(mad) != len(depths):
        raise ValueError(f'mad has {len(mad)} stage tables, the ancestry {len(depths)} stages')
    k = how.k
    if k is not None and not isinstance(k, int):
        k = list(k)
        if len(k) != sum(depths):
            raise ValueError(f'k has {len(k)} entries for {sum(depths)} blocks')
    clusters, groups, start = [], [], 0
    for stage_mad, depth in zip(mad, depths):
        stage_k = k if k is None or isinstance(k, int) else k[start:start + depth]
        start += depth
        stage_clusters = cluster_heads(stage_mad, how.method, how.eps, how.min_samples, stage_k)
        clusters.append(stage_clusters)
        groups.append(
            group_ffns([len(c) for c in stage_clusters], stage_mad.shape[1], how.ffn_clustering))
    rule = 'adjacent equal counts in a stage' if how.ffn_clustering else 'disabled'
    return clusters, groups, rule
