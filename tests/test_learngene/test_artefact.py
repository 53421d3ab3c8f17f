import os

import pytest
import torch

from mmvitdyn.learngene import Learngene, cluster_heads, group_ffns

from test_learngene.learngene_testing import make_ancestry, write_learngene


def test_round_trip(ancestry, tmp_path):
    path = tmp_path / 'lg.pth'
    learngene = write_learngene(ancestry, path, eps=1.0)
    loaded = Learngene.load(str(path))
    assert loaded.ancestry == learngene.ancestry and loaded.settings == learngene.settings
    assert loaded.num_centroids == learngene.num_centroids
    assert [g.layers for g in loaded.ffn_groups] == [g.layers for g in learngene.ffn_groups]
    for a, b in zip(loaded.layers, learngene.layers):
        assert a.clusters == b.clusters
        assert torch.equal(a.qkv_weight, b.qkv_weight) and torch.equal(a.proj_weight, b.proj_weight)
    assert torch.equal(loaded.mad, learngene.mad)
    assert torch.equal(loaded.embeddings['pos_embed'], ancestry.pos_embed)
    # Plain containers only: loadable with weights_only=True, no temporary file left.
    torch.load(path, weights_only=True)
    assert os.listdir(tmp_path) == ['lg.pth']


def test_select_centroid_holds_the_representative_head(ancestry, tmp_path):
    learngene = write_learngene(ancestry, tmp_path / 'lg.pth', eps=1.0)
    layer, block = learngene.layers[1], ancestry.blocks[1]
    qkv = block.attn.qkv.weight.view(3, 4, 8, 32)
    proj = block.attn.proj.weight.view(32, 4, 8)
    for rank, cluster in enumerate(layer.clusters):
        head = cluster.representative
        assert torch.equal(layer.qkv_weight[rank], qkv[:, head])
        assert torch.equal(layer.qkv_bias[rank], block.attn.qkv.bias.view(3, 4, 8)[:, head])
        assert torch.equal(layer.proj_weight[rank], proj[:, head])


def test_average_centroid_averages_members_and_ffns(ancestry):
    mad = torch.tensor([[1., 1., 50., 50.], [1., 2., 3., 4.], [1., 2., 3., 4.]])
    clusters = cluster_heads(mad, eps=5)
    groups = group_ffns([len(c) for c in clusters], 4)
    assert groups == [(0, ), (1, 2)]
    learngene = Learngene.extract(ancestry, mad, clusters, groups, centroid='average')
    qkv = ancestry.blocks[0].attn.qkv.weight.view(3, 4, 8, 32)
    torch.testing.assert_close(learngene.layers[0].qkv_weight[0], qkv[:, :2].mean(1))
    fc1 = (ancestry.blocks[1].mlp.fc1.weight + ancestry.blocks[2].mlp.fc1.weight) / 2
    torch.testing.assert_close(learngene.ffn_groups[1].weights['fc1.weight'], fc1)
    select = Learngene.extract(ancestry, mad, clusters, groups, centroid='select')
    assert torch.equal(select.ffn_groups[1].weights['fc1.weight'],
                       ancestry.blocks[1].mlp.fc1.weight)


def test_summary_and_parameter_count(grouped_learngene):
    learngene = Learngene.load(str(grouped_learngene))
    counts = learngene.parameter_counts()
    # 3 layers x 1 centroid x (3*8*32 + 3*8 + 32*8) + 3 x (32 + 4*32) W^O bias and norms.
    assert counts['attention'] == 3 * (768 + 24 + 256) + 3 * (32 + 4 * 32)
    assert counts['ffn'] == 64 * 32 + 64 + 32 * 64 + 32
    assert counts['embeddings'] == 32 * 3 * 8 * 8 + 32 + 32 + 17 * 32 + 2 * 32
    text = learngene.summary()
    assert 'centroids per layer: [1, 1, 1] (total 3 of 12 heads)' in text
    assert 'FFN groups of several layers: [[0, 1, 2]] (1 FFN for 3 layers)' in text
    assert f"inherited parameters: {counts['total'] / 1e6:.3f}M" in text


def test_corrupted_file_is_named(grouped_learngene, tmp_path):
    data = grouped_learngene.read_bytes()
    broken = tmp_path / 'broken.pth'
    broken.write_bytes(data[:len(data) // 2])
    with pytest.raises(ValueError, match=r"learngene file '.*broken.pth' is corrupted"):
        Learngene.load(str(broken))


def test_other_torch_files_are_not_learngenes(tmp_path):
    path = tmp_path / 'ckpt.pth'
    torch.save(dict(state_dict={'w': torch.zeros(1)}), path)
    with pytest.raises(ValueError, match='is not a learngene'):
        Learngene.load(str(path))


def test_inconsistent_content_names_the_field(grouped_learngene, tmp_path):
    data = torch.load(grouped_learngene, weights_only=True)
    data['layers'][2]['proj_weight'] = torch.zeros(1, 32, 4)
    torch.save(data, tmp_path / 'bad.pth')
    with pytest.raises(ValueError,
                       match=r'layer 2 proj_weight has shape \(1, 32, 4\), expected \(1, 32, 8\)'):
        Learngene.load(str(tmp_path / 'bad.pth'))
    del data['ffn_groups']
    torch.save(data, tmp_path / 'bad.pth')
    with pytest.raises(ValueError, match="incomplete: .*'ffn_groups'"):
        Learngene.load(str(tmp_path / 'bad.pth'))


def test_missing_file():
    with pytest.raises(FileNotFoundError,
                       match='build one with tools/learngene/build_learngene.py'):
        Learngene.load('no/such/learngene.pth')


def test_failed_write_keeps_the_previous_file(grouped_learngene, monkeypatch):
    before = grouped_learngene.read_bytes()
    learngene = Learngene.load(str(grouped_learngene))

    def failing_save(obj, f, *args, **kwargs):
        open(f, 'wb').write(b'partial')
        raise OSError('disk full')

    monkeypatch.setattr(torch, 'save', failing_save)
    with pytest.raises(OSError, match='disk full'):
        learngene.save(str(grouped_learngene))
    assert grouped_learngene.read_bytes() == before
    assert not [p for p in os.listdir(grouped_learngene.parent) if 'tmp' in p]


def test_ancestry_without_qkv_bias(tmp_path):
    model = make_ancestry(qkv_bias=False)
    learngene = write_learngene(model, tmp_path / 'lg.pth', eps=1.0)
    assert learngene.ancestry['qkv_bias'] is False
    assert all(layer.qkv_bias is None for layer in Learngene.load(str(tmp_path / 'lg.pth')).layers)
