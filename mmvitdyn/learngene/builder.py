"""Steps 1-4 in one call: from an ancestry ViT and images to a learngene."""
import time
from contextlib import contextmanager
from typing import Dict, Iterable, Optional, Sequence, Tuple, Union

import torch
from torch import nn

from .artefact import CENTROIDS, Learngene
from .attention_distance import record_attention_distance
from .ffn_grouping import group_ffns
from .head_clustering import check_clustering_args, cluster_heads


@contextmanager
def timed(timings: Dict[str, float], stage: str, device: torch.device):
    """Add the wall time of the block to ``timings[stage]`` (GPU work included)."""
    sync = torch.cuda.synchronize if device.type == 'cuda' else (lambda: None)
    sync()
    start = time.perf_counter()
    yield
    sync()
    timings[stage] = timings.get(stage, 0.) + time.perf_counter() - start


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
                    settings: Optional[dict] = None) -> Tuple[Learngene, Dict[str, float]]:
    """Condense an ancestry ViT into a learngene, timing each stage.

    Args:
        backbone (nn.Module): mmvitdyn ``ViT`` ancestry (evaluated in eval mode).
        batches (Iterable[Tensor]): Images (B, 3, H, W) preprocessed exactly
            as in the ancestry's training (the data_preprocessor's mean/std).
        method, eps, min_samples, k: Head clustering (see ``cluster_heads``).
        centroid (str): 'select' or 'average' (see ``Learngene.extract``).
        ffn_clustering (bool): False disables FFN grouping (ablation).
        ffn_groups (Sequence[Sequence[int]], optional): Explicit FFN groups.
        out (str, optional): Write the learngene here (atomically).
        settings (dict, optional): Extra entries recorded in the learngene.

    Returns:
        tuple[Learngene, dict]: The learngene and seconds per stage
        ('mad', 'cluster', 'extract', and 'write' when ``out`` is given).
    """
    check_clustering_args(method, eps, min_samples, k)
    if centroid not in CENTROIDS:
        raise ValueError(f'centroid={centroid!r} is not one of {CENTROIDS}')
    device = next(backbone.parameters()).device
    timings: Dict[str, float] = {}
    with timed(timings, 'mad', device):
        recorder = record_attention_distance(backbone, batches)
        mad = recorder.mean()
    with timed(timings, 'cluster', device):
        clusters = cluster_heads(mad, method, eps, min_samples, k)
        groups = group_ffns([len(c) for c in clusters], mad.shape[1], ffn_clustering, ffn_groups)
    record = dict(method=method,
                  num_images=recorder.num_images,
                  ffn_groups='explicit' if ffn_groups is not None else
                  ('adjacent equal counts' if ffn_clustering else 'disabled'))
    record.update(dict(eps=eps, min_samples=min_samples) if method == 'dbscan' else dict(k=k))
    record.update(settings or {})
    with timed(timings, 'extract', device):
        learngene = Learngene.extract(backbone, mad, clusters, groups, centroid, record)
    if out is not None:
        with timed(timings, 'write', device):
            learngene.save(out)
    return learngene, timings
