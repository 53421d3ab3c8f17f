import pytest

from mmvitdyn.learngene import (FFNRun, Learngene, ffn_runs, head_assignment, heads_per_layer,
                                layer_sources, plan_descendant)


def test_head_assignment_when_centroids_do_not_divide_heads():
    # c_l = 5 -> H_d = 12: shared twice in turn, then the two biggest once more.
    assert head_assignment(5, 12) == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1]
    # c_l = 5 -> H_d = 8: each once, then the three biggest.
    assert head_assignment(5, 8) == [0, 1, 2, 3, 4, 0, 1, 2]


def test_head_assignment_when_centroids_divide_heads():
    assert head_assignment(2, 8) == [0, 1] * 4
    assert head_assignment(1, 3) == [0, 0, 0]


def test_fewer_heads_than_centroids_take_the_top_ones():
    assert head_assignment(6, 4) == [0, 1, 2, 3]


def test_no_centroid_cannot_form_heads():
    with pytest.raises(ValueError, match='0 centroids'):
        head_assignment(0, 4)


@pytest.mark.parametrize('kwargs,heads', [
    (dict(), [12] * 4),
    (dict(num_heads=6), [6] * 4),
    (dict(num_heads=[1, 2, 3, 4]), [1, 2, 3, 4]),
    (dict(omega=1.5), [8] * 4),
    (dict(omega=2), [6] * 4),
    (dict(omega=[1, 2, 3, 4]), [12, 6, 4, 3]),
    (dict(num_heads=(3, 12), head_schedule='linear-incrementing'), [3, 6, 9, 12]),
    (dict(num_heads=(12, 3), head_schedule='linear-decrementing'), [12, 9, 6, 3]),
])
def test_heads_per_layer(kwargs, heads):
    assert heads_per_layer(4, 12, **kwargs) == heads


def test_linear_schedule_rounds_over_many_layers():
    assert heads_per_layer(
        12, 12, num_heads=(6, 12),
        head_schedule='linear-incrementing') == [6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12]


@pytest.mark.parametrize(
    'layers,ancestry_heads,schedule,heads',
    [
        # The paper's descendants of DeiT-B: omega 2 / 1.5 / 1 over the thirds.
        (12, 12, 'incrementing', [6] * 4 + [8] * 4 + [12] * 4),
        (12, 12, 'decrementing', [12] * 4 + [8] * 4 + [6] * 4),
        # Thirds of 10 layers: layer l in third 3l // 10, i.e. 4 + 3 + 3 layers.
        (10, 12, 'incrementing', [6] * 4 + [8] * 3 + [12] * 3),
        # DeiT-S (6 heads): 3, 4, 6.
        (6, 6, 'incrementing', [3, 3, 4, 4, 6, 6]),
    ])
def test_paper_schedules(layers, ancestry_heads, schedule, heads):
    assert heads_per_layer(layers, ancestry_heads, head_schedule=schedule) == heads


@pytest.mark.parametrize('kwargs,match', [
    (dict(omega=5), r'omega=5 cannot form heads: H_a / omega = 12 / 5 = 2.4'),
    (dict(omega=0), 'must be > 0'),
    (dict(num_heads=0), 'layer 0 would have 0 heads'),
    (dict(num_heads=[2, 2]), 'num_heads has 2 entries for 4 layers'),
    (dict(num_heads=4, omega=2), 'not both'),
    (dict(num_heads=6, head_schedule='linear-incrementing'), r'needs num_heads=\(low, high\)'),
    (dict(num_heads=(6, 12), head_schedule='up'), 'not one of'),
    (dict(num_heads=6, head_schedule='incrementing'),
     r"head_schedule='incrementing' sets the heads from omega = \(2.0, 1.5, 1.0\)"),
])
def test_heads_that_cannot_be_formed(kwargs, match):
    with pytest.raises(ValueError, match=match):
        heads_per_layer(4, 12, **kwargs)


def test_depth_rule():
    assert layer_sources(12, 6) == [0, 1, 2, 3, 4, 5]
    assert layer_sources(4, 10) == [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]
    with pytest.raises(ValueError, match='num_layers=0'):
        layer_sources(12, 0)


def test_ffn_runs_follow_groups_and_restart_on_repetition():
    # Learngene of 4 layers with FFN groups {0}, {1, 2, 3}.
    group_of_layer = [0, 1, 1, 1]
    assert ffn_runs([0, 1, 2], group_of_layer) == [FFNRun(0, (0, )), FFNRun(1, (1, 2))]
    assert ffn_runs(layer_sources(4, 7), group_of_layer) == [
        FFNRun(0, (0, )),
        FFNRun(1, (1, 2, 3)),
        FFNRun(0, (4, )),
        FFNRun(1, (5, 6))
    ]


def test_plan_layout(grouped_learngene):
    learngene = Learngene.load(str(grouped_learngene))
    plan = plan_descendant(learngene, [2, 2, 2, 2, 1])
    assert plan.sources == [0, 1, 2, 0, 1]
    assert plan.assignments == [[0, 0]] * 4 + [[0]]
    assert plan.layout().tolist() == [[0, 2, 0, 0, 2], [1, 2, 0, 1, 2], [2, 2, 0, 2, 2],
                                      [0, 2, 1, 0, 2], [1, 1, 1, 1, 1]]
    independent = plan_descendant(learngene, [2, 2, 2, 2, 1], 'independent', tie_heads=True)
    # No expanded runs; tied heads: one distinct head per layer.
    assert independent.layout()[:, 2:].tolist() == [[-1, 0, 1]] * 5
    with pytest.raises(ValueError, match="ffn_sharing='shared' is not one of"):
        plan_descendant(learngene, [2], 'shared')
