"""Step 2 of Cluster-Learngene: cluster each layer's heads by their MAD.

Density-based clustering (scikit-learn's DBSCAN) adapts the number of
clusters per layer; k-means with a fixed k per layer is the comparison the
paper makes. Clusters are returned in *priority order*: largest first, ties
broken by the lowest head index in the cluster.
"""
from dataclasses import dataclass
from typing import List, Sequence, Tuple, Union

import numpy as np
import torch

METHODS = ('dbscan', 'kmeans')
# Relative tolerance of "nearest the cluster mean" (see ``make_cluster``).
REPRESENTATIVE_RTOL = 1e-6


@dataclass(frozen=True)
class HeadCluster:
    """Heads of one layer grouped together.

    Args:
        members (tuple[int]): Head indices, ascending.
        mad (float): Mean MAD of the members (pixels).
        representative (int): The member whose MAD is closest to ``mad``
            (ties: the lowest head index); the ``select`` centroid.
    """
    members: Tuple[int, ...]
    mad: float
    representative: int

    @property
    def size(self) -> int:
        return len(self.members)


def make_cluster(members: Sequence[int], mad_row: Sequence[float]) -> HeadCluster:
    """A :class:`HeadCluster` of ``members`` given the layer's MAD values.

    The representative is the member nearest the mean MAD. Distances within
    ``REPRESENTATIVE_RTOL`` times the largest member MAD of the nearest one
    count as ties (members symmetric about the mean differ only by rounding,
    which depends on the dtype), and ties go to the lowest head index.
    ``mad_row`` keeps its dtype (float32 or float64) for the arithmetic.
    """
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
    """DBSCAN labels of every layer's heads, from one scikit-learn fit.

    Each head is the point (layer * 2 eps, MAD): heads of different layers
    are more than eps apart, so no neighbourhood crosses a layer and the fit
    equals one DBSCAN per layer (labels are unique across layers; -1 is noise).

    Args:
        mad (np.ndarray): (num_layers, num_heads) MAD values.

    Returns:
        np.ndarray: (num_layers, num_heads) integer labels.
    """
    from sklearn.cluster import DBSCAN
    check_dbscan_args(eps, min_samples)
    layers, heads = mad.shape
    points = np.stack([np.repeat(np.arange(layers) * 2. * eps, heads), mad.reshape(-1)], axis=1)
    labels = DBSCAN(eps=eps, min_samples=min_samples).fit(points).labels_
    return labels.reshape(layers, heads)


def kmeans_clusters(mad_row: Sequence[float], k: int, seed: int = 0) -> List[HeadCluster]:
    """Cluster one layer's heads into ``k`` groups with k-means on their MAD.

    Returns:
        list[HeadCluster]: In priority order; fewer than ``k`` when heads
        share MAD values.
    """
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
    """Cluster the heads of every layer.

    Args:
        mad (Tensor): (num_layers, num_heads) MAD table.
        method (str): 'dbscan' (adaptive, the method) or 'kmeans' (fixed k).
        eps (float): DBSCAN radius in pixels. Defaults to 10.
        min_samples (int): DBSCAN's MinHds. Defaults to 1 (no noise heads).
        k (int | Sequence[int], optional): k-means clusters, one value for
            every layer or one per layer. Required for 'kmeans'.
        seed (int): k-means random state. Defaults to 0.

    Returns:
        list[list[HeadCluster]]: Per layer, the clusters in priority order.

    Raises:
        ValueError: Bad arguments, or a layer where every head is noise
            (no centroid can be formed).
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
