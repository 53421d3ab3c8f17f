import pytest

from helpers.learngene import make_ancestry, write_learngene


@pytest.fixture
def ancestry():
    return make_ancestry()


@pytest.fixture
def lossless_learngene(ancestry, tmp_path):
    """Every head its own cluster: the learngene holds the whole ancestry."""
    learngene = write_learngene(ancestry, tmp_path / 'lossless.pth', eps=1e-6)
    assert learngene.num_centroids == [4, 4, 4]
    return tmp_path / 'lossless.pth'


@pytest.fixture
def grouped_learngene(ancestry, tmp_path):
    """One centroid per layer, so all three FFNs form one group."""
    learngene = write_learngene(ancestry, tmp_path / 'grouped.pth', eps=1e3)
    assert [g.layers for g in learngene.ffn_groups] == [(0, 1, 2)]
    return tmp_path / 'grouped.pth'
