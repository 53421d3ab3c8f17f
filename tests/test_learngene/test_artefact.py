import copy
import os

import pytest
import torch

from helpers.learngene import learngene_with_counts, make_ancestry, write_learngene
from mmvitdyn.learngene import Learngene, ViTAncestry, cluster_heads, group_ffns


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
    learngene = ViTAncestry(ancestry).extract(mad, clusters, groups, centroid='average')
    qkv = ancestry.blocks[0].attn.qkv.weight.view(3, 4, 8, 32)
    torch.testing.assert_close(learngene.layers[0].qkv_weight[0], qkv[:, :2].mean(1))
    fc1 = (ancestry.blocks[1].mlp.fc1.weight + ancestry.blocks[2].mlp.fc1.weight) / 2
    torch.testing.assert_close(learngene.ffn_groups[1].weights['fc1.weight'], fc1)
    select = ViTAncestry(ancestry).extract(mad, clusters, groups, centroid='select')
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
    with pytest.raises(
            ValueError,
            match=r'layers\[2\]\.proj_weight has shape \(1, 32, 4\), expected '
            r'\(1, 32, 8\)'):
        Learngene.load(str(tmp_path / 'bad.pth'))
    del data['ffn_groups']
    torch.save(data, tmp_path / 'bad.pth')
    with pytest.raises(ValueError, match='learngene ffn_groups is missing'):
        Learngene.load(str(tmp_path / 'bad.pth'))


def test_missing_file():
    with pytest.raises(
            FileNotFoundError, match='build one with tools/learngene/build_learngene.py'):
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


# ------------------------------------------------- files that cannot load wrong
@pytest.fixture(scope='module')
def valid_data():
    """A learngene as stored: 3 layers of 4 heads with centroids (2, 2, 1)."""
    return learngene_with_counts(make_ancestry(), (2, 2, 1)).to_dict()


def drop(path):
    """Edit deleting the entry at ``path`` (keys and list indices)."""

    def edit(data):
        *parents, last = path
        for key in parents:
            data = data[key]
        del data[last]

    return edit


def put(path, value):

    def edit(data):
        *parents, last = path
        for key in parents:
            data = data[key]
        data[last] = value(data[last]) if callable(value) else value

    return edit


MISSING = [
    *[((key, ), rf': learngene {key} is missing')
      for key in ('ancestry', 'settings', 'mad', 'embeddings', 'final_norm', 'layers',
                  'layer_scales', 'ffn_groups')],
    *[(('ancestry', key), rf'ancestry\.{key} is missing')
      for key in ('embed_dims', 'num_layers', 'num_heads', 'head_dim', 'feedforward_channels',
                  'patch_size', 'patch_resolution', 'num_extra_tokens', 'qkv_bias', 'norm_eps',
                  'act_cfg', 'pre_norm', 'layer_scale_init_value', 'num_reg_tokens', 'dist_token')],
    *[(('embeddings', key), rf'embeddings\.{key} is missing')
      for key in ('patch_embed.proj.weight', 'patch_embed.proj.bias', 'cls_token', 'pos_embed')],
    *[(('final_norm', key), rf'final_norm\.{key} is missing') for key in ('weight', 'bias')],
    *[(('layers', 1, key), rf'layers\[1\]\.{key} is missing')
      for key in ('clusters', 'qkv_weight', 'qkv_bias', 'proj_weight', 'proj_bias', 'norm1',
                  'norm2')],
    *[(('layers', 2, norm, key), rf'layers\[2\]\.{norm}\.{key} is missing')
      for norm in ('norm1', 'norm2') for key in ('weight', 'bias')],
    *[(('layers', 0, 'clusters', 1, key), rf'layers\[0\]\.clusters\[1\]\.{key} is missing')
      for key in ('members', 'mad', 'representative')],
    *[(('ffn_groups', 0, 'weights', key), rf'ffn_groups\[0\]\.weights\.{key} is missing')
      for key in ('fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias')],
    (('ffn_groups', 1, 'layers'), r'ffn_groups\[1\]\.layers is missing'),
]


@pytest.mark.parametrize('path,match', MISSING, ids=['.'.join(map(str, p)) for p, _ in MISSING])
def test_each_missing_entry_is_named(valid_data, path, match):
    data = copy.deepcopy(valid_data)
    drop(path)(data)
    with pytest.raises(ValueError, match=match):
        Learngene.from_dict(data)


NAN = float('nan')
BROKEN = {
    'member out of range':
    (put(('layers', 0, 'clusters', 0, 'members'),
         [0, 4]), r'layers\[0\]\.clusters\[0\]\.members=\[0, 4\] holds 4; heads are '
     r'ints in 0\.\.3'),
    'negative member': (put(('layers', 1, 'clusters', 1, 'members'),
                            [-1, 3]), r'layers\[1\]\.clusters\[1\]\.members=\[-1, 3\] holds -1'),
    'member in two clusters': (put(
        ('layers', 0, 'clusters', 1, 'members'),
        [0, 1]), r'layers\[0\]\.clusters\[1\]\.members=\[0, 1\] repeats heads \[0\]'),
    'unsorted members': (put(('layers', 0, 'clusters', 0, 'members'),
                             [2, 0]), 'must be ascending and unique'),
    'representative outside': (put(
        ('layers', 0, 'clusters', 0, 'representative'),
        1), r'layers\[0\]\.clusters\[0\]\.representative=1 is not one of '
                               r'its members \[0, 2\]'),
    'no cluster': (put(('layers', 2, 'clusters'), []), r'layers\[2\]\.clusters is empty'),
    'NaN MAD': (put(('mad', ), lambda mad: mad.index_put(
        (torch.tensor(1), torch.tensor(2)), torch.tensor(NAN))),
                r'mad has non-finite values \(1; the first at \(1, 2\): nan\)'),
    'infinite query weight': (put(('layers', 1, 'qkv_weight'), lambda w: w.index_put(
        (torch.tensor(0), torch.tensor(1)), torch.tensor(float('inf')))),
                              r'layers\[1\]\.qkv_weight has non-finite values \(\d+;'),
    'NaN FFN weight': (put(
        ('ffn_groups', 0, 'weights', 'fc2.weight'),
        lambda w: w * NAN), r'ffn_groups\[0\]\.weights\.fc2\.weight has non-finite values \(2048;'),
    'NaN position embedding': (put(
        ('embeddings', 'pos_embed'),
        lambda p: p.clone().fill_(NAN)), r'embeddings\.pos_embed has non-finite values \(544;'),
    'object in settings': (put(
        ('settings', 'note'),
        {'nested': 1}), r'settings\.note is a dict; allowed: str, int, float, bool, None'),
    'settings key that is no name': (put(('settings', '\x1b[31mred'),
                                         1), r'settings key .* is not a name'),
    'infinite cluster MAD': (put(
        ('layers', 0, 'clusters', 0, 'mad'),
        float('inf')), r'layers\[0\]\.clusters\[0\]\.mad=inf must be a finite number'),
    'text width': (put(('ancestry', 'embed_dims'),
                       '32'), r"ancestry\.embed_dims='32' must be an int >= 1"),
    'int qkv_bias flag': (put(('ancestry', 'qkv_bias'),
                              1), r'ancestry\.qkv_bias must be a bool, got int'),
    'bad grid': (put(('ancestry', 'patch_resolution'),
                     [4]), r'ancestry\.patch_resolution=\[4\] must be \[rows, cols\]'),
    'list bias': (put(('layers', 0, 'proj_bias'),
                      [0.] * 32), r'layers\[0\]\.proj_bias must be a Tensor, got list'),
    'integer MAD': (put(
        ('mad', ), lambda mad: mad.long()), r'mad has dtype torch\.int64, expected floating point'),
    'embeddings as a list': (put(('embeddings', ), []), 'embeddings must be a dict, got list'),
    'members as an int': (put(('layers', 0, 'clusters', 0, 'members'),
                              3), r'layers\[0\]\.clusters\[0\]\.members must be a tuple, got int'),
    'layers as a dict': (put(('layers', ), {}), 'layers must be a list, got dict'),
    'pos_embed of another grid': (put(
        ('embeddings', 'pos_embed'),
        torch.zeros(1, 10, 32)), r'embeddings\.pos_embed has shape \(1, 10, 32\), expected '
                                  r'\(1, 17, 32\)'),
    'patch embedding of another patch': (put(('embeddings', 'patch_embed.proj.weight'),
                                             torch.zeros(32, 3, 4,
                                                         4)), r'expected \(32, \*, 8, 8\)'),
    'norm of another width': (put(
        ('layers', 1, 'norm1', 'weight'),
        torch.ones(16)), r'layers\[1\]\.norm1\.weight has shape \(16,\), expected \(32,\)'),
    'FFN of another width': (put(
        ('ffn_groups', 1, 'weights', 'fc1.bias'),
        torch.zeros(8)), r'ffn_groups\[1\]\.weights\.fc1\.bias has shape \(8,\), expected '
                             r'\(64,\)'),
    'bias without qkv_bias': (put(
        ('ancestry', 'qkv_bias'),
        False), r'layers\[0\]\.qkv_bias is given but ancestry\.qkv_bias is False'),
    # The family: only known activations, numbers, and tensors that fit it.
    'unknown activation': (put(('ancestry', 'act_cfg'), dict(type='posix.system')),
                           r"ancestry\.act_cfg=\{'type': 'posix.system'\} must be dict\(type=T\) "
                           r"with T one of \('GELU', 'QuickGELU'\)"),
    'activation with arguments': (put(
        ('ancestry', 'act_cfg'),
        dict(type='GELU', inplace=True)), r'ancestry\.act_cfg=.* must be dict\(type=T\)'),
    'zero norm eps': (put(('ancestry', 'norm_eps'),
                          0.), r'ancestry\.norm_eps=0\.0 must be a finite number > 0'),
    'text layer scale': (put(
        ('ancestry', 'layer_scale_init_value'),
        '1e-5'), r"ancestry\.layer_scale_init_value='1e-5' must be a finite number"),
    'registers not counted': (put(('ancestry', 'num_reg_tokens'),
                                  4), r'ancestry\.num_extra_tokens=1 must be 5: the class token, '
                              r'dist_token=False and num_reg_tokens=4'),
    'layer scales of a family without them': (put(
        ('layer_scales', 0),
        {'ls1.gamma': torch.ones(32)}), r"layer_scales\[0\] has keys \['ls1\.gamma'\] that "
                                              r'the ancestry \(qkv_bias=True, norm_eps=1e-06'),
    'layer scales of two layers': (put(
        ('layer_scales', ),
        [{}, {}]), 'learngene has 2 layer_scales entries, ancestry.num_layers=3'),
    'unknown embedding': (put(
        ('embeddings', 'extra'),
        torch.zeros(1)), r"embeddings has keys \['extra'\] that the ancestry"),
}


@pytest.mark.parametrize('name', list(BROKEN))
def test_broken_entries_are_named(valid_data, name):
    edit, match = BROKEN[name]
    data = copy.deepcopy(valid_data)
    edit(data)
    with pytest.raises(ValueError, match=match):
        Learngene.from_dict(data)


def test_a_broken_file_names_the_file_and_the_field(valid_data, tmp_path):
    data = copy.deepcopy(valid_data)
    del data['layers'][2]['norm1']['bias']
    torch.save(data, tmp_path / 'bad.pth')
    with pytest.raises(
            ValueError,
            match=r"learngene file '.*bad.pth': learngene layers\[2\]\.norm1\.bias "
            'is missing'):
        Learngene.load(str(tmp_path / 'bad.pth'))
    assert Learngene.from_dict(copy.deepcopy(valid_data)).num_centroids == [2, 2, 1]


def test_the_summary_prints_settings_escaped(ancestry):
    learngene = learngene_with_counts(ancestry, [2, 2, 1])
    learngene.settings['config'] = 'deit\n\x1b[31mred.py'
    summary = learngene.summary()
    assert "config='deit\\n\\x1b[31mred.py'" in summary and '\x1b' not in summary


@pytest.mark.parametrize('field, tensor, problem', [
    ('mad', lambda t: torch.empty_like(t, device='meta'), 'is a meta tensor'),
    ('qkv_weight', lambda t: torch.empty_like(t, device='meta'), 'is a meta tensor'),
    ('qkv_weight', lambda t: t.reshape(-1)[:1].expand(t.shape), 'has elements that share memory'),
])
def test_a_learngene_tensor_without_data_of_its_own_names_the_file_and_field(
        valid_data, tmp_path, field, tensor, problem):
    """Meta tensors failed at validation with torch's "Tensor.item() cannot be
    called on meta tensors"; a stride-0 view cost its expanded size in memory."""
    data = copy.deepcopy(valid_data)
    owner = data if field == 'mad' else data['layers'][1]
    owner[field] = tensor(owner[field])
    torch.save(data, tmp_path / 'bad.pth')
    where = 'mad' if field == 'mad' else 'layers.1.qkv_weight'
    with pytest.raises(
            ValueError,
            match=rf"learngene file '.*bad.pth' is corrupted.*tensor "
            rf'{where} {problem}'):
        Learngene.load(str(tmp_path / 'bad.pth'))
