"""Step 2 of Cluster-Learngene: cluster each layer's heads by their MAD (DBSCAN or k-means),
in priority order."""
from dataclasses import dataclass
from typing import List, Sequence, Tuple, Union

import numpy as np
import torch

METHODS = ('dbscan', 'kmeans')
# Relative tolerance of "nearest the cluster mean" (see ``make_cluster``).
REPRESENTATIVE_RTOL = 1e-6


@dataclass(frozen=True)
class HeadCluster:
    """Heads of one layer: ``members`` (ascending), their mean ``mad`` (pixels) and the
    ``representative``, the member nearest ``mad`` (ties: lowest index), ``select``'s centroid."""
    members: Tuple[int, ...]
    mad: float
    representative: int

    @property
    def size(self) -> int:
        return len(self.members)


def make_cluster(members: Sequence[int], mad_row: Sequence[float]) -> HeadCluster:
    """A :class:`HeadCluster` of ``members`` given the layer's MAD values (kept in their dtype)."""
    members = tuple(sorted(int(m) for m in members))
    row = np.asarray(mad_row)
    values = row[list(members)] if np.issubdtype(row.dtype, np.floating) else \
        row[list(members)].astype(np.float64)
    mean = values.mean()
    distance = np.abs(values - mean)
    tolerance = REPRESENTATIVE_RTOL * float(np.abs(values).max())
    # flatnonzero is ascending, so the first candidate is the lowest head index.
    nearest = np.flatnonzero(distance <= distance.min() + tolerance)[0]
    return HeadCluster(members, float(mean), members[int(nearest)])


def priority_order(clusters: Sequence[HeadCluster]) -> List[HeadCluster]:
    """Largest cluster first; equal sizes by their lowest head index."""
    return sorted(clusters, key=lambda c: (-c.size, c.members[0]))


def _clusters_from_labels(labels: np.ndarray, mad_row: Sequence[float]) -> List[HeadCluster]:
    clusters = [
        make_cluster(np.flatnonzero(labels == label), mad_row) for label in np.unique(labels)
        if label >= 0
    ]
    return priority_order(clusters)


def dbscan_labels(mad: np.ndarray, eps: float = 10., min_samples: int = 1) -> np.ndarray:
    """(num_layers, num_heads) DBSCAN labels of the heads of ``mad`` (num_layers, num_heads) from
    one fit, equal to one per layer (labels unique across layers, -1 noise)."""
    from sklearn.cluster import DBSCAN
    check_dbscan_args(eps, min_samples)
    layers, heads = mad.shape
    points = np.stack([np.repeat(np.arange(layers) * 2. * eps, heads), mad.reshape(-1)], axis=1)
    labels = DBSCAN(eps=eps, min_samples=min_samples).fit(points).labels_
    return labels.reshape(layers, heads)


def kmeans_clusters(mad_row: Sequence[float], k: int, seed: int = 0) -> List[HeadCluster]:
    """The k-means clusters (at most ``k``) of one layer's heads, in priority order."""
    from sklearn.cluster import KMeans
    values = np.asarray(mad_row, dtype=np.float64).reshape(-1, 1)
    if not isinstance(k, (int, np.integer)) or not 1 <= k <= len(values):
        raise ValueError(f'k={k!r} must be an int in [1, {len(values)}] (the number of heads)')
    k = min(int(k), len(np.unique(values)))
    labels = KMeans(n_clusters=k, n_init=10, random_state=seed).fit(values).labels_
    return _clusters_from_labels(labels, mad_row)


def check_clustering_args(method: str, eps: float, min_samples: int, k) -> None:
    """Raise ``ValueError`` for arguments :func:`cluster_heads` cannot use."""
    if method not in METHODS:
        raise ValueError(f'method={method!r} is not one of {METHODS}')
    if method == 'dbscan':
        check_dbscan_args(eps, min_samples)
    elif k is None:
        raise ValueError("method='kmeans' needs k (an int, or one per layer)")


def check_dbscan_args(eps: float, min_samples: int) -> None:
    if not eps > 0:
        raise ValueError(f'eps={eps!r} must be > 0 (a MAD difference in pixels)')
    if not isinstance(min_samples, (int, np.integer)) or min_samples < 1:
        raise ValueError(f'min_samples (MinHds)={min_samples!r} must be an int >= 1')


def cluster_heads(mad: torch.Tensor,
                  method: str = 'dbscan',
                  eps: float = 10.,
                  min_samples: int = 1,
                  k: Union[int, Sequence[int], None] = None,
                  seed: int = 0) -> List[List[HeadCluster]]:
    """Per layer, the clusters of the heads of ``mad`` (num_layers, num_heads), priority order.

    Args:
        method (str): 'dbscan' (adaptive) or 'kmeans' (fixed k).
        eps (float): DBSCAN radius in pixels. Defaults to 10.
        min_samples (int): DBSCAN's MinHds. Defaults to 1 (no noise heads).
        k (int | Sequence[int], optional): k-means clusters, one or one per layer; for 'kmeans'.
        seed (int): k-means random state. Defaults to 0.

    Raises:
        ValueError: Bad arguments, or a layer where every head is noise.
    """
    check_clustering_args(method, eps, min_samples, k)
    rows = mad.detach().cpu().double().numpy()
    if rows.ndim != 2:
        raise ValueError(f'mad must be (num_layers, num_heads), got shape {tuple(mad.shape)}')
    if method == 'dbscan':
        labels = dbscan_labels(rows, eps, min_samples)
        layers = [
            _clusters_from_labels(layer_labels, row) for layer_labels, row in zip(labels, rows)
        ]
    else:
        ks = [k] * len(rows) if isinstance(k, (int, np.integer)) else list(k)
        if len(ks) != len(rows):
            raise ValueError(f'k has {len(ks)} entries for {len(rows)} layers')
        layers = [kmeans_clusters(row, layer_k, seed) for row, layer_k in zip(rows, ks)]
    for index, clusters in enumerate(layers):
        if not clusters:
            raise ValueError(
                f'layer {index}: DBSCAN(eps={eps}, min_samples={min_samples}) marks all '
                f'{rows.shape[1]} heads as noise, so no head centroid can be formed; '
                'raise eps or lower min_samples (MinHds)')
    return layers
