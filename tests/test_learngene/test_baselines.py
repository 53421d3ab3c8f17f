"""The paper's learngene baselines as initialisation modes of LearngeneViT:
Heuristic-Learngene (the ancestry's last three blocks on top), Auto-Learngene
(blocks 0-5 at the bottom) and TLEG (layer l = theta_A + l / L theta_B,
theta_A and theta_B trained in the Aux-Net); each also inherits the
ancestry's embeddings and final norm. Expected weights are read from the
ancestry / Aux-Net directly."""

import pytest
import torch

from helpers.learngene import broken, make_ancestry, write_learngene
from helpers.models import TINY_ARCH, images, tiny
from helpers.tools import REPO, load_tool
from mmvitdyn.learngene import (BlockLearngene, LearngeneViT, LinearExpansionViT, TLEGLearngene,
                                ViTAncestry, learngene_blocks)
from mmvitdyn.learngene.artefacts.vit import VERSION_1_FAMILY
from mmvitdyn.models import ViT

ARCH7 = dict(TINY_ARCH, num_layers=7)  # deep enough for both block rules, which then differ
C, F = TINY_ARCH['embed_dims'], TINY_ARCH['feedforward_channels']
# One block by hand: 2 norms, q/k/v (+ bias), W^O (+ bias), fc1, fc2.
BLOCK = 2 * 2 * C + (3 * C * C + 3 * C) + (C * C + C) + (F * C + F) + (C * F + C)
EMBED = (C * 3 * 8 * 8 + C) + C + 17 * C  # patch embedding, class token, position embedding
STEM = ('patch_embed.proj.weight', 'patch_embed.proj.bias', 'cls_token', 'pos_embed', 'norm.weight',
        'norm.bias')


@pytest.fixture(scope='module')
def ancestry():
    return perturb_stem(make_ancestry(ARCH7))


def save(learngene, tmp_path, name):
    path = str(tmp_path / name)
    learngene.save(path)
    return path


def descendant(path, init_mode, **kwargs):
    model = LearngeneViT(learngene=path, init_mode=init_mode, img_size=32, out_type='raw', **kwargs)
    model.init_weights()
    return model.eval()


def same_block(ours, theirs) -> bool:
    theirs = dict(theirs.named_parameters())
    return all(torch.equal(p, theirs[name]) for name, p in ours.named_parameters())


def perturb_stem(model):
    """Move the stem and final norm away from any initialisation (biases start at 0)."""
    with torch.no_grad():
        for key in STEM:
            model.get_parameter(key).normal_(0, 0.5)
    return model


def assert_same_stem(model, ancestry):
    """The embeddings and final norm are the ancestry's (read from its state dict)."""
    ours, theirs = model.state_dict(), ancestry.state_dict()
    for key in STEM:
        assert torch.equal(ours[key], theirs[key]), key


# --------------------------------------------------- Heuristic, Auto-Learngene
@pytest.mark.parametrize('method,blocks', [('heuristic', (4, 5, 6)), ('auto', (0, 1, 2, 3, 4, 5))])
def test_block_learngene_holds_the_rule_s_blocks(ancestry, tmp_path, method, blocks):
    loaded = BlockLearngene.load(
        save(ViTAncestry(ancestry).extract_blocks(method), tmp_path, 'b.pth'))
    assert loaded.method == method and loaded.layers == blocks
    for state, index in zip(loaded.blocks, blocks):
        theirs = dict(ancestry.blocks[index].named_parameters())
        assert sorted(state) == sorted(theirs)
        assert all(torch.equal(state[k], theirs[k]) for k in theirs)
    assert loaded.num_parameters() == len(blocks) * BLOCK + EMBED + 2 * C
    for key in STEM:
        theirs = ancestry.state_dict()[key]
        ours = loaded.final_norm[key[5:]] if key.startswith('norm.') else loaded.embeddings[key]
        assert torch.equal(ours, theirs), key


@pytest.mark.parametrize(
    'method,num_layers,sources',
    [
        # The last three blocks on top of random lower layers.
        ('heuristic', 8, [None] * 5 + [4, 5, 6]),
        ('heuristic', 3, [4, 5, 6]),
        ('heuristic', 2, [5, 6]),
        # Blocks 0-5 at the bottom, deeper layers random.
        ('auto', 8, [0, 1, 2, 3, 4, 5, None, None]),
        ('auto', 4, [0, 1, 2, 3]),
    ])
def test_block_baseline_descendants(ancestry, tmp_path, method, num_layers, sources):
    path = save(ViTAncestry(ancestry).extract_blocks(method), tmp_path, 'b.pth')
    model = descendant(path, method, arch=dict(num_layers=num_layers))
    for layer, source in enumerate(sources):
        if source is None:
            assert not any(same_block(model.blocks[layer], b) for b in ancestry.blocks), layer
        else:
            assert same_block(model.blocks[layer], ancestry.blocks[source]), layer
    # The embeddings and final norm are the ancestry's, as the paper's
    # comparison loads them (the ancestry without the other blocks and the head).
    assert_same_stem(model, ancestry)
    inherited = sum(s is not None for s in sources)
    assert model.parameter_counts() == dict(
        t_params=EMBED + num_layers * BLOCK + 2 * C,
        i_params=inherited * BLOCK + EMBED + 2 * C,
        trainable=EMBED + num_layers * BLOCK + 2 * C)
    # An inherited block computes what the ancestry's does.
    last = max(layer for layer, source in enumerate(sources) if source is not None)
    x = torch.randn(2, 17, C)
    with torch.no_grad():
        torch.testing.assert_close(model.blocks[last](x), ancestry.blocks[sources[last]](x))


def test_block_rule_needs_a_deep_enough_ancestry():
    assert learngene_blocks('heuristic', 12) == [9, 10, 11]
    with pytest.raises(
            ValueError, match=r'takes ancestry blocks \[0, 1, 2, 3, 4, 5\]; the '
            'ancestry has 4'):
        learngene_blocks('auto', 4)
    with pytest.raises(ValueError, match="method='random' is not one of"):
        learngene_blocks('random', 12)


# -------------------------------------------------------------------- TLEG
def aux_net(num_layers=4, seed=0) -> LinearExpansionViT:
    """An Aux-Net with theta_A and theta_B far from their start (as if trained)."""
    aux = tiny(
        LinearExpansionViT, seed=seed, arch=dict(TINY_ARCH, num_layers=num_layers), out_type='raw')
    with torch.no_grad():
        for param in [*aux.theta_a.parameters(), *aux.theta_b.parameters()]:
            param.normal_(0, 0.2)
    return perturb_stem(aux)


def test_aux_net_layers_are_linear_expansions():
    aux = aux_net()
    plain = tiny(ViT, arch=dict(TINY_ARCH, num_layers=4), out_type='raw')
    plain.load_state_dict({
        k: v
        for k, v in aux.state_dict().items() if not k.startswith('theta')
    },
                          strict=False)
    with torch.no_grad():
        for block, c in zip(plain.blocks, (0., .25, .5, .75)):
            for name, param in block.named_parameters():
                param.copy_(aux.theta_a.get_parameter(name) + c * aux.theta_b.get_parameter(name))
        torch.testing.assert_close(aux(images())[0], plain(images())[0])


def test_aux_net_trains_theta_a_and_theta_b_and_stays_an_expansion():
    aux = aux_net().train()
    names = {n for n, _ in aux.named_parameters()}
    assert not any(n.startswith('blocks.') for n in [*names, *aux.state_dict()])
    assert sum(p.numel() for p in aux.parameters()) == EMBED + 2 * BLOCK + 2 * C
    optimizer = torch.optim.SGD(aux.parameters(), lr=0.1)
    aux(images())[0].square().mean().backward()
    assert aux.theta_b.mlp.fc1.weight.grad.abs().sum() > 0
    before = aux.theta_b.mlp.fc1.weight.detach().clone()
    optimizer.step()
    assert not torch.equal(aux.theta_b.mlp.fc1.weight, before)
    # The blocks hold no copy: every layer computes with the current expansion.
    assert all(not list(block.parameters()) for block in aux.blocks)
    for index, c in enumerate((0., .25, .5, .75)):
        expected = aux.theta_a.mlp.fc1.weight + c * aux.theta_b.mlp.fc1.weight
        torch.testing.assert_close(aux.block_tensors(index)['mlp.fc1.weight'], expected)


def test_aux_net_norms_start_as_layer_norm():
    aux = tiny(LinearExpansionViT, arch=dict(TINY_ARCH, num_layers=4))
    assert torch.equal(aux.theta_b.norm1.weight, torch.zeros(C))
    for index in range(4):
        assert torch.equal(aux.block_tensors(index)['norm2.weight'], torch.ones(C))
        assert torch.equal(aux.block_tensors(index)['norm2.bias'], torch.zeros(C))


@pytest.mark.parametrize('num_layers,coefficients', [(3, (0., 1 / 3, 2 / 3)), (1, (0., )),
                                                     (6, (0., 1 / 6, 2 / 6, .5, 4 / 6, 5 / 6))])
def test_tleg_descendant_layers(tmp_path, num_layers, coefficients):
    aux = aux_net()
    path = save(ViTAncestry(aux).extract_expansion(), tmp_path, 'tleg.pth')
    model = descendant(path, 'tleg', arch=dict(num_layers=num_layers))
    for block, c in zip(model.blocks, coefficients):
        for name, param in block.named_parameters():
            expected = aux.theta_a.get_parameter(name) + c * aux.theta_b.get_parameter(name)
            torch.testing.assert_close(param, expected, rtol=0, atol=1e-7)
    # As TLEG's public code loads them: the Aux-Net's embeddings and final norm.
    assert_same_stem(model, aux)
    counts = model.parameter_counts()
    assert counts['i_params'] == num_layers * BLOCK + EMBED + 2 * C
    # The layers train as independent parameters.
    assert counts['trainable'] == EMBED + num_layers * BLOCK + 2 * C


@pytest.mark.parametrize('num_layers', [2, 5])
def test_tleg_coefficient_written_out(tmp_path, num_layers):
    """Layer l (0-based) of an L-layer descendant starts as theta_A + l / L
    theta_B (TLEG's public code: ``i / num_layers`` in its descendant loader,
    written out here, L even and odd); at the Aux-Net's own depth the
    descendant computes what the Aux-Net computes."""
    aux = aux_net(num_layers=3)
    path = save(ViTAncestry(aux).extract_expansion(), tmp_path, 'tleg.pth')
    model = descendant(path, 'tleg', arch=dict(num_layers=num_layers))
    for layer, block in enumerate(model.blocks):
        for name, param in block.named_parameters():
            theta_a, theta_b = aux.theta_a.get_parameter(name), aux.theta_b.get_parameter(name)
            expected = theta_a + layer / num_layers * theta_b
            torch.testing.assert_close(param, expected, rtol=0, atol=1e-7)
    same_depth = descendant(path, 'tleg', arch=dict(num_layers=3))
    with torch.no_grad():
        torch.testing.assert_close(same_depth(images())[0], aux(images())[0])


@pytest.mark.parametrize('version', [1, 2])
def test_an_older_tleg_file_keeps_its_aux_nets_layers(tmp_path, version):
    """Versions 1 and 2 come from an Aux-Net that expanded with l / (L - 1):
    at its own depth a descendant has that Aux-Net's layers, written out here
    as theta_A + l / (L - 1) theta_B from the file's tensors. (Version 1 also
    records no family settings, embeddings or final norm.)"""
    data = ViTAncestry(aux_net(num_layers=3)).extract_expansion().to_dict()
    data['version'] = version
    if version == 1:
        data['ancestry'] = {
            key: value
            for key, value in data['ancestry'].items()
            if key not in (*VERSION_1_FAMILY, 'dist_token')
        }
        del data['embeddings'], data['final_norm']
    path = str(tmp_path / f'v{version}.pth')
    torch.save(data, path)
    model = descendant(path, 'tleg', arch=dict(num_layers=3))
    for layer, block in enumerate(model.blocks):
        for name, param in block.named_parameters():
            expected = data['theta_a'][name] + layer / 2 * data['theta_b'][name]
            torch.testing.assert_close(param, expected, rtol=0, atol=1e-6)


# ------------------------------------------------------------------ errors
def test_init_mode_and_file_must_agree(ancestry, tmp_path):
    auto = save(ViTAncestry(ancestry).extract_blocks('auto'), tmp_path, 'auto.pth')
    with pytest.raises(
            ValueError,
            match=r"init_mode='heuristic' needs a heuristic learngene; "
            r'.*auto.pth is the auto learngene'):
        LearngeneViT(learngene=auto, init_mode='heuristic', img_size=32)
    with pytest.raises(
            ValueError,
            match="is not a learngene of format 'mmvitdyn.tleg_learngene' "
            r"\(its format entry is 'mmvitdyn.block_learngene'\)"):
        LearngeneViT(learngene=auto, init_mode='tleg', img_size=32)
    cluster = tmp_path / 'cluster.pth'
    write_learngene(make_ancestry(), cluster, eps=1.0)
    with pytest.raises(
            ValueError,
            match="format 'mmvitdyn.block_learngene' "
            r"\(its format entry is 'mmvitdyn.learngene'\)"):
        LearngeneViT(learngene=str(cluster), init_mode='auto', img_size=32)
    with pytest.raises(
            ValueError,
            match=r"init_mode='kmeans' is not one of \['cluster', "
            r"'heuristic', 'auto', 'tleg'\]"):
        LearngeneViT(learngene=auto, init_mode='kmeans', img_size=32)


@pytest.mark.parametrize('kwargs,match', [
    (dict(arch=dict(num_heads=2)),
     r"init_mode='auto' inherits whole layers of 4 heads; arch gives layers of \[2\] heads"),
    (dict(arch=dict(omega=2)), r'of 4 heads; arch gives layers of \[2\] heads'),
    (dict(qkv_bias=False), r"qkv_bias=False differs from the learngene's layers"),
])
def test_whole_layers_keep_the_learngene_s_heads(ancestry, tmp_path, kwargs, match):
    auto = save(ViTAncestry(ancestry).extract_blocks('auto'), tmp_path, 'auto.pth')
    with pytest.raises(ValueError, match=match):
        LearngeneViT(learngene=auto, init_mode='auto', img_size=32, **kwargs)


@pytest.mark.parametrize('where,value,match', [
    (('blocks', 1, 'mlp.fc1.bias'), ..., r'blocks\[1\]\.mlp\.fc1\.bias is missing'),
    (('blocks', 0, 'attn.qkv.weight'), torch.zeros(
        3, 32), r'blocks\[0\]\.attn\.qkv\.weight has shape \(3, 32\), expected \(96, 32\)'),
    (('blocks', 0, 'attn.qkv.extra'), torch.zeros(3), r"keys \['attn.qkv.extra'\]"),
    (('layers', ), [0, 1, 2], r'layers=\[0, 1, 2\]; the heuristic learngene of a 7-layer '
     r'ancestry holds blocks \[4, 5, 6\]'),
    (('blocks', ), [], r'has 0 blocks for layers \[4, 5, 6\]'),
    (('ancestry', 'num_heads'), 0, r'ancestry\.num_heads=0 must be an int >= 1'),
    (('method', ), ..., 'learngene method is missing'),
])
def test_broken_block_learngene_names_the_field(ancestry, tmp_path, where, value, match):
    data = broken(ViTAncestry(ancestry).extract_blocks('heuristic').to_dict(), where, value)
    torch.save(data, tmp_path / 'broken.pth')
    with pytest.raises(ValueError, match=match):
        BlockLearngene.load(str(tmp_path / 'broken.pth'))


@pytest.mark.parametrize('where,value,match', [
    (('theta_b', 'norm2.weight'), ..., r'theta_b\.norm2\.weight is missing'),
    (('theta_a', 'mlp.fc2.weight'), torch.zeros(
        64, 32, dtype=torch.int64), r'theta_a\.mlp\.fc2\.weight has dtype torch.int64'),
    (('theta_a', ), None, 'theta_a must be a dict, got NoneType'),
])
def test_broken_tleg_learngene_names_the_field(tmp_path, where, value, match):
    data = broken(ViTAncestry(aux_net()).extract_expansion().to_dict(), where, value)
    torch.save(data, tmp_path / 'broken.pth')
    with pytest.raises(ValueError, match=match):
        TLEGLearngene.load(str(tmp_path / 'broken.pth'))


def test_inheriting_another_learngene_is_refused_and_counts_nothing(ancestry, tmp_path):
    model = descendant(
        save(ViTAncestry(ancestry).extract_blocks('auto'), tmp_path, 'a.pth'),
        'auto',
        arch=dict(num_layers=4))
    model.inherited = {}
    with pytest.raises(
            ValueError,
            match=r'\(learngene BlockLearngene, layers \[0, 1, 2, 3\]\); the learngene given '
            r'has learngene TLEGLearngene, layers \[0, 1, 2, 3\]'):
        model.inherit_from(ViTAncestry(aux_net()).extract_expansion())
    assert model.parameter_counts()['i_params'] == 0


# ------------------------------------------------------------------- tool
def test_extract_tool(tmp_path, capsys):
    """Both kinds from configs: a ViT ancestry and the same config's backbone
    as an Aux-Net (--cfg-options model.backbone.type=LinearExpansionViT)."""
    from mmengine.config import Config
    from mmengine.registry import MODELS, init_default_scope
    config = REPO / 'configs/vit/vit-mini-p4_1xb32-20e_digits-32px.py'
    init_default_scope('mmpretrain')
    tool = load_tool('learngene/extract_baseline_learngene.py')
    for method, backbone in (('heuristic', 'ViT'), ('tleg', 'LinearExpansionViT')):
        cfg = Config.fromfile(config)
        cfg.model.backbone.type = backbone
        model = MODELS.build(cfg.model)
        model.init_weights()
        torch.save(dict(state_dict=model.state_dict()), tmp_path / f'{method}_ckpt.pth')
        out = tmp_path / f'{method}.pth'
        tool.main([
            method,
            str(config),
            str(tmp_path / f'{method}_ckpt.pth'), '--out',
            str(out), '--cfg-options', f'model.backbone.type={backbone}'
        ])
        assert f'wrote {out}' in capsys.readouterr().out
        if method == 'heuristic':
            learngene = BlockLearngene.load(str(out))
            assert learngene.layers == (3, 4, 5)  # of the 6-layer demo ViT
            assert torch.equal(learngene.blocks[2]['mlp.fc2.weight'],
                               model.backbone.blocks[5].mlp.fc2.weight)
        else:
            learngene = TLEGLearngene.load(str(out))
            assert torch.equal(learngene.theta_b['attn.proj.weight'],
                               model.backbone.theta_b.attn.proj.weight)
    with pytest.raises(SystemExit) as exit_info:
        tool.main([
            'tleg',
            str(config),
            str(tmp_path / 'heuristic_ckpt.pth'), '--out',
            str(tmp_path / 'x.pth')
        ])
    assert exit_info.value.code == 2
    assert 'tleg takes its learngene from a LinearExpansionViT (the Aux-Net); the backbone of' \
        in capsys.readouterr().err


def test_aux_net_flops_are_those_of_a_vit_of_its_shape():
    """The Aux-Net's layers are supplied in the block step; FLOP tracing still works."""
    from mmvitdyn.analysis import count_flops
    x = images(1)
    assert count_flops(aux_net(), (x, )) == count_flops(
        tiny(ViT, arch=dict(TINY_ARCH, num_layers=4), out_type='raw'), (x, )) > 0


def test_an_aux_net_is_recorded_layer_by_layer():
    """MAD is recorded on the blocks' attentions only, not on theta_A / theta_B."""
    from mmvitdyn.learngene import record_attention_distance
    mad = record_attention_distance(aux_net(), [images(2)]).mean()
    assert mad.shape == (4, TINY_ARCH['num_heads'])
