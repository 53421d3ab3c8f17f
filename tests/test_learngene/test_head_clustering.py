import numpy as np
import pytest
import torch

from mmvitdyn.learngene import (HeadCluster, cluster_heads, dbscan_labels, kmeans_clusters,
                                make_cluster, priority_order)


def members(clusters):
    return [c.members for c in clusters]


def dbscan_clusters(mad_row, **kwargs):
    """The DBSCAN clusters of one layer of MADs ``mad_row``."""
    return cluster_heads(torch.tensor([mad_row], dtype=torch.float64), **kwargs)[0]


def test_dbscan_chains_neighbours_within_eps():
    # 10 -> 18 -> 26 are each 8 px apart: one chain with eps 10 although the
    # ends are 16 px apart; 40 is 14 px from 26: its own cluster.
    mad = [10., 18., 26., 40.]
    assert members(dbscan_clusters(mad, eps=10)) == [(0, 1, 2), (3, )]
    assert members(dbscan_clusters(mad, eps=7)) == [(0, ), (1, ), (2, ), (3, )]
    assert members(dbscan_clusters(mad, eps=14)) == [(0, 1, 2, 3)]


def test_eps_is_inclusive_like_sklearn():
    assert members(dbscan_clusters([0., 10.], eps=10)) == [(0, 1)]


def test_priority_order_by_size_then_lowest_head():
    mad = [50., 1., 50.5, 2., 90., 3., 70.]
    clusters = dbscan_clusters(mad, eps=1.5)
    # Sizes: {1,3,5} 3, {0,2} 2, {6} 1, {4} 1 -> singletons ordered by head index.
    assert members(clusters) == [(1, 3, 5), (0, 2), (4, ), (6, )]


def test_ties_between_equal_sizes_go_to_the_lowest_head_index():
    shuffled = [
        make_cluster([5, 6], [0] * 8),
        make_cluster([0, 7], [0] * 8),
        make_cluster([3], [0] * 8)
    ]
    assert members(priority_order(shuffled)) == [(0, 7), (5, 6), (3, )]


def test_select_representative_is_closest_to_the_mean_lowest_index_on_ties():
    cluster = make_cluster([3, 1, 2], [0., 10., 12., 14.])
    assert cluster == HeadCluster((1, 2, 3), 12., 2)
    tie = make_cluster([0, 1], [4., 6.])
    assert tie.representative == 0 and tie.mad == 5.


@pytest.mark.parametrize('dtype,low,high', [
    (np.float32, '1.9833163', '4.916823'),
    (np.float64, '42.93542360508843', '112.08522191474997'),
])
def test_members_symmetric_about_their_mean_tie_to_the_lowest_head(dtype, low, high):
    row = np.zeros(6, dtype=dtype)
    row[2], row[5] = dtype(low), dtype(high)
    # In this dtype the rounded mean is nearer the higher head: a plain
    # argmin of the distances would pick head 5.
    distance = np.abs(row[[2, 5]] - row[[2, 5]].mean())
    assert distance[1] < distance[0]
    assert make_cluster([5, 2], row).representative == 2
    # A real difference (2e-4 px, ten times the tolerance) still decides: mean
    # 10, head 3 at 10 beats head 2 at 9.9998.
    row[[1, 2, 3, 4]] = [0., 9.9998, 10., 20.0002]
    assert make_cluster([1, 2, 3, 4], row).representative == 3


def test_min_samples_makes_noise_heads():
    mad = [10., 11., 12., 40.]
    assert members(dbscan_clusters(mad, eps=2, min_samples=2)) == [(0, 1, 2)]


def test_layer_of_only_noise_cannot_form_centroids():
    with pytest.raises(ValueError, match='layer 1: .*all 3 heads as noise'):
        cluster_heads(torch.tensor([[1., 1., 1.], [0., 50., 100.]]), eps=1, min_samples=2)


@pytest.mark.parametrize('eps', [0, -1.])
def test_eps_must_be_positive(eps):
    with pytest.raises(ValueError, match='eps=.* must be > 0'):
        cluster_heads(torch.zeros(2, 3), eps=eps)


def test_min_samples_must_be_positive_int():
    with pytest.raises(ValueError, match='min_samples'):
        cluster_heads(torch.zeros(2, 3), min_samples=0)


def test_cluster_heads_per_layer_counts_adapt():
    mad = torch.tensor([[10., 11., 50., 51.], [10., 30., 50., 70.], [10., 10.5, 11., 11.5]])
    counts = [len(c) for c in cluster_heads(mad, eps=5)]
    assert counts == [2, 4, 1]


def test_kmeans_fixed_k_per_layer():
    mad = torch.tensor([[10., 11., 50., 51.], [10., 30., 50., 70.]])
    layers = cluster_heads(mad, method='kmeans', k=2)
    assert [members(c) for c in layers] == [[(0, 1), (2, 3)], [(0, 1), (2, 3)]]
    layers = cluster_heads(mad, method='kmeans', k=[1, 4])
    assert [len(c) for c in layers] == [1, 4]
    # Fewer distinct values than k: as many clusters as values.
    assert members(kmeans_clusters([5., 5., 5.], k=2)) == [(0, 1, 2)]


@pytest.mark.parametrize('kwargs,match', [
    (dict(method='kmeans'), 'needs k'),
    (dict(method='kmeans', k=5), r'k=5 must be an int in \[1, 4\]'),
    (dict(method='kmeans', k=[2]), 'k has 1 entries for 2 layers'),
    (dict(method='optics'), 'not one of'),
])
def test_bad_clustering_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        cluster_heads(torch.zeros(2, 4), **kwargs)


@pytest.mark.parametrize('min_samples', [1, 2, 3])
def test_one_fit_for_all_layers_equals_one_dbscan_per_layer(min_samples):
    from sklearn.cluster import DBSCAN
    mad = np.random.default_rng(0).uniform(0, 60, size=(6, 12))
    labels = dbscan_labels(mad, eps=4., min_samples=min_samples)
    for row, layer_labels in zip(mad, labels):
        expected = DBSCAN(eps=4., min_samples=min_samples).fit(row[:, None]).labels_
        # Same partition and the same noise heads, whatever the label numbers.
        assert np.array_equal(layer_labels == -1, expected == -1)
        same = layer_labels[:, None] == layer_labels[None]
        assert np.array_equal(same, expected[:, None] == expected[None])
