import pytest

from mmvitdyn.learngene import group_ffns

# Head-centroid counts of DeiT-B (12 heads per layer) reported in the paper.
DEIT_B = {
    1: [10, 10, 12, 10, 10, 11, 11, 9, 11, 7, 4, 3],
    10: [5, 3, 4, 6, 5, 4, 4, 4, 4, 1, 2, 1],
    100: [1] * 12,
}


def multi(groups):
    return [list(g) for g in groups if len(g) > 1]


def test_eps10_on_deit_b_groups_layers_5_to_8():
    groups = group_ffns(DEIT_B[10], 12)
    assert multi(groups) == [[5, 6, 7, 8]]
    assert [layer for g in groups for layer in g] == list(range(12))


def test_eps100_puts_every_ffn_in_one_group():
    assert group_ffns(DEIT_B[100], 12) == [tuple(range(12))]


def test_uncompressed_layers_keep_their_ffn():
    # Equal counts but c_l = H_a: nothing was clustered, nothing is shared.
    assert group_ffns([12, 12, 12], 12) == [(0, ), (1, ), (2, )]
    # eps = 1 on DeiT-B: only runs of equal counts below 12 share an FFN.
    assert multi(group_ffns(DEIT_B[1], 12)) == [[0, 1], [3, 4], [5, 6]]


def test_switch_disables_ffn_clustering():
    assert group_ffns(DEIT_B[100], 12, enabled=False) == [(i, ) for i in range(12)]


def test_explicit_groups_replace_the_rule():
    assert group_ffns(
        DEIT_B[10], 12, groups=[[2, 3], [9, 10, 11]]) == [(0, ), (1, ), (2, 3), (4, ), (5, ), (6, ),
                                                          (7, ), (8, ), (9, 10, 11)]


@pytest.mark.parametrize('groups,match', [
    ([[1, 3]], 'not a run of adjacent layers'),
    ([[1, 2], [2, 3]], 'both hold layer 2'),
    ([[11, 12]], 'layer 12 is out of range'),
    ([[]], 'empty group'),
])
def test_bad_explicit_groups(groups, match):
    with pytest.raises(ValueError, match=match):
        group_ffns(DEIT_B[10], 12, groups=groups)
