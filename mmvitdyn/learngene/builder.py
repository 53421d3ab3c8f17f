"""Steps 1-4 in one call: from an ancestry ViT and images to a learngene."""
from typing import Iterable, List, Optional, Sequence, Union

import torch
from mmpretrain.models import SwinTransformer
from torch import nn

from .artefact import CENTROIDS, Learngene
from .attention_distance import record_attention_distance
from .ffn_grouping import group_ffns
from .head_clustering import check_clustering_args, cluster_heads
from .swin import SwinLearngene, condense_swin


def check_build_args(method: str, eps: float, min_samples: int, k, centroid: str) -> None:
    """Raise ``ValueError`` for arguments :func:`condense` cannot use."""
    check_clustering_args(method, eps, min_samples, k)
    if centroid not in CENTROIDS:
        raise ValueError(f'centroid={centroid!r} is not one of {CENTROIDS}')


def condense(backbone: nn.Module,
             mad: Union[torch.Tensor, List[torch.Tensor]],
             num_images: int,
             method: str = 'dbscan',
             eps: float = 10.,
             min_samples: int = 1,
             k: Union[int, Sequence[int], None] = None,
             centroid: str = 'select',
             ffn_clustering: bool = True,
             ffn_groups: Optional[Sequence[Sequence[int]]] = None,
             settings: Optional[dict] = None) -> Union[Learngene, SwinLearngene]:
    """Steps 2-4: cluster the heads by their MAD, group the FFNs, extract.

    Args:
        backbone (nn.Module): mmvitdyn ``ViT`` ancestry, or mmpretrain
            ``SwinTransformer`` (stage by stage, see ``condense_swin``).
        mad (Tensor | list[Tensor]): (num_layers, num_heads) MAD table
            (step 1); for a Swin one per stage.
        num_images (int): Images the MAD was averaged over (recorded).
        method, eps, min_samples, k: Head clustering (see ``cluster_heads``).
        centroid (str): 'select' or 'average' (see ``Learngene.extract``).
        ffn_clustering (bool): False disables FFN grouping (ablation).
        ffn_groups (Sequence[Sequence[int]], optional): Explicit FFN groups.
        settings (dict, optional): Extra entries recorded in the learngene.
    """
    check_build_args(method, eps, min_samples, k, centroid)
    if isinstance(backbone, SwinTransformer):
        if ffn_groups is not None:
            raise ValueError(f'ffn_groups={ffn_groups!r}: explicit FFN groups are not supported '
                             'for a Swin ancestry (its groups are found per stage)')
        return condense_swin(backbone, mad, method, eps, min_samples, k, centroid, ffn_clustering,
                             dict(settings or {}, num_images=num_images))
    clusters = cluster_heads(mad, method, eps, min_samples, k)
    groups = group_ffns([len(c) for c in clusters], mad.shape[1], ffn_clustering, ffn_groups)
    record = dict(
        method=method,
        num_images=num_images,
        ffn_groups='explicit' if ffn_groups is not None else
        ('adjacent equal counts' if ffn_clustering else 'disabled'))
    record.update(dict(eps=eps, min_samples=min_samples) if method == 'dbscan' else dict(k=k))
    record.update(settings or {})
    return Learngene.extract(backbone, mad, clusters, groups, centroid, record)


def build_learngene(backbone: nn.Module,
                    batches: Iterable[torch.Tensor],
                    method: str = 'dbscan',
                    eps: float = 10.,
                    min_samples: int = 1,
                    k: Union[int, Sequence[int], None] = None,
                    centroid: str = 'select',
                    ffn_clustering: bool = True,
                    ffn_groups: Optional[Sequence[Sequence[int]]] = None,
                    out: Optional[str] = None,
                    settings: Optional[dict] = None) -> Union[Learngene, SwinLearngene]:
    """Condense an ancestry ViT or Swin into a learngene (steps 1-4).

    Args:
        backbone (nn.Module): mmvitdyn ``ViT`` or mmpretrain
            ``SwinTransformer`` ancestry (evaluated in eval mode).
        batches (Iterable[Tensor]): Images (B, 3, H, W) preprocessed exactly
            as in the ancestry's training (the data_preprocessor's mean/std).
        method, eps, min_samples, k, centroid, ffn_clustering, ffn_groups,
            settings: See :func:`condense`.
        out (str, optional): Write the learngene here (atomically).

    Returns:
        Learngene | SwinLearngene: The learngene.
    """
    check_build_args(method, eps, min_samples, k, centroid)  # before the pass over the images
    recorder = record_attention_distance(backbone, batches)
    learngene = condense(backbone, recorder.mean(), recorder.num_images, method, eps, min_samples,
                         k, centroid, ffn_clustering, ffn_groups, settings)
    if out is not None:
        learngene.save(out)
    return learngene
