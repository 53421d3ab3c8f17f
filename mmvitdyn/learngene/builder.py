"""Steps 1-4 in one call: from an ancestry and images to a learngene, for
any ancestry family (:func:`~.ancestries.ancestry_for`)."""
from typing import Iterable, List, Optional, Sequence, Union

import torch
from torch import nn

from .ancestries import CondenseSettings, ancestry_for
from .artefacts.swin import SwinLearngene
from .artefacts.vit import Learngene


@torch.no_grad()
def record_attention_distance(backbone: nn.Module, batches: Iterable[torch.Tensor]):
    """Run ``backbone`` (in eval mode) over ``batches`` and record every head's
    MAD with its family's recorder.

    Args:
        backbone (nn.Module): The ancestry: mmvitdyn's ViT, or mmpretrain's
            SwinTransformer (MAD inside its windows).
        batches (Iterable[Tensor]): Preprocessed images (B, 3, H, W), i.e.
            already normalised exactly as the model was trained.

    Returns:
        The recorder (``mean()``, ``num_images``).
    """
    recorder = ancestry_for(backbone).recorder()
    backbone.eval()
    with recorder.recording():
        for images in batches:
            backbone(images)
    return recorder


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
    """Steps 2-4: cluster the heads by their MAD, group the FFNs, extract
    (the family's :meth:`~.ancestries.Ancestry.condense`).

    Args:
        backbone (nn.Module): mmvitdyn ``ViT`` ancestry, or mmpretrain
            ``SwinTransformer`` (stage by stage).
        mad (Tensor | list[Tensor]): (num_layers, num_heads) MAD table
            (step 1); for a Swin one per stage.
        num_images (int): Images the MAD was averaged over (recorded).
        method, eps, min_samples, k: Head clustering (see ``cluster_heads``).
        centroid (str): 'select' or 'average'.
        ffn_clustering (bool): False disables FFN grouping (ablation).
        ffn_groups (Sequence[Sequence[int]], optional): Explicit FFN groups.
        settings (dict, optional): Extra entries recorded in the learngene.
    """
    how = CondenseSettings(method, eps, min_samples, k, centroid, ffn_clustering, ffn_groups,
                           settings)
    return ancestry_for(backbone).condense(mad, num_images, how)


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
    how = CondenseSettings(method, eps, min_samples, k, centroid, ffn_clustering, ffn_groups,
                           settings)  # checked before the pass over the images
    recorder = record_attention_distance(backbone, batches)
    learngene = ancestry_for(backbone).condense(recorder.mean(), recorder.num_images, how)
    if out is not None:
        learngene.save(out)
    return learngene
