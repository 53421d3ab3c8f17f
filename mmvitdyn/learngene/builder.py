"""Steps 1-4 in one call: from an ancestry of any family and images to a learngene."""
from typing import Iterable, List, Optional, Sequence, Union

import torch
from torch import nn

from .ancestries import CondenseSettings, ancestry_for
from .artefacts.swin import SwinLearngene
from .artefacts.vit import Learngene


@torch.no_grad()
def record_attention_distance(backbone: nn.Module, batches: Iterable[torch.Tensor]):
    """Run ``backbone`` (eval mode) over ``batches`` of images (B, 3, H, W), preprocessed as
    the ancestry was trained, recording every head's MAD; returns the recorder."""
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
    """Steps 2-4 of a ``backbone`` (``ViT``, Swin or LeViT) ancestry: cluster, group, extract.

    Args:
        mad (Tensor | list[Tensor]): (num_layers, num_heads) MAD table, or one per stage.
        num_images (int): Images the MAD was averaged over (recorded).
        method, eps, min_samples, k, centroid, ffn_clustering, ffn_groups, settings: See
            :class:`~.ancestries.CondenseSettings` (``settings`` is its ``extra``).
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
    """Steps 1-4: :func:`condense` ``backbone`` on the MAD of ``batches`` (images (B, 3, H, W)
    preprocessed as in its training) and write the learngene to ``out`` (atomically) if given."""
    how = CondenseSettings(method, eps, min_samples, k, centroid, ffn_clustering, ffn_groups,
                           settings)  # checked before the pass over the images
    recorder = record_attention_distance(backbone, batches)
    learngene = ancestry_for(backbone).condense(recorder.mean(), recorder.num_images, how)
    if out is not None:
        learngene.save(out)
    return learngene
