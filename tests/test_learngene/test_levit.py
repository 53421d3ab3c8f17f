"""Cluster-Learngene on a LeViT ancestry (mmpretrain's LeViT): MAD of its
attention blocks and subsample attentions against a count by hand, the
LearngeneLeViT descendant (lossless at omega = 1; fewer heads and other
depths take their centroids, FFN groups and subsample attentions), the
Heuristic- / Auto-Learngene descendants (whole blocks where the ancestry has
them, the rest random, gradients everywhere), the learngene files' checks,
and build_learngene.py / extract_baseline_learngene.py on LeViT-192."""
import math

import pytest
import torch
import torch.nn.functional as F
from mmengine.config import Config
from mmengine.registry import MODELS, init_default_scope
from mmpretrain.models import LeViT
from PIL import Image

from helpers.learngene import broken, mad_with_counts
from helpers.models import images
from helpers.tools import REPO, load_tool
from mmvitdyn.learngene import LeViTLearngene, build_learngene, condense, record_attention_distance
from mmvitdyn.learngene.ancestries.levit import LeViTAncestry, LeViTMAD
from mmvitdyn.learngene.artefacts.levit import LeViTBlockLearngene
from mmvitdyn.learngene.descendants.levit import LearngeneLeViT, levit_arch

# 16 / 24 / 32 wide, 2 / 3 / 4 heads of key width 4 (values 8), 2 blocks a
# stage; 80 px images: grids 5, 3, 2 (the subsample attentions: 4 and 6
# heads, their queries on every second point, the last one on the last row).
ARCH = dict(embed_dims=[16, 24, 32], num_heads=[2, 3, 4], depths=[2, 2, 2], key_dims=[4, 4, 4])
SIZE = 80
LEVIT_CFG = REPO / 'configs/cluster_learngene/levit-192_ancestry_in1k-224px.py'


def levit(seed=0, **arch) -> LeViT:
    """A tiny random LeViT (``ARCH``, with ``arch``'s changes) in eval mode
    whose attention is far from uniform and whose BatchNorms are no identities."""
    torch.manual_seed(seed)
    model = LeViT(levit_arch(**dict(ARCH, **arch)), img_size=SIZE, out_indices=(0, 1, 2))
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d)):
                module.weight.uniform_(0.5, 2.)
                module.bias.normal_(0, 0.2)
                module.running_mean.normal_(0, 0.2)
                module.running_var.uniform_(0.5, 2.)
            if hasattr(module, 'attention_biases'):
                module.attention_biases.normal_(0, 2.)
    model.eval()  # LeViT.train returns None
    return model


def descendant(path, **kwargs) -> LearngeneLeViT:
    model = LearngeneLeViT(learngene=str(path), out_indices=(0, 1, 2), **kwargs)
    model.eval()  # before inheriting: LeViT caches its attention biases in eval mode
    model.init_weights()
    return model


def linear_bn(module, x):
    """A LeViT LinearBatchNorm in evaluation, by hand."""
    bn = module.bn
    y = x @ module.linear.weight.t()
    return (y - bn.running_mean) / torch.sqrt(bn.running_var + bn.eps) * bn.weight + bn.bias


def condensed(ancestry, counts):
    """A learngene whose blocks have ``counts`` (per stage) centroids."""
    mad = LeViTMAD([mad_with_counts(c, h) for c, h in zip(counts, ARCH['num_heads'])],
                   [None, torch.zeros(4), torch.zeros(6)])
    learngene = condense(ancestry, mad, num_images=0, eps=10.)
    assert learngene.num_centroids == [list(c) for c in counts]
    return learngene


@pytest.fixture(scope='module')
def learngene_file(tmp_path_factory):
    path = tmp_path_factory.mktemp('levit') / 'lg.pth'
    condensed(levit(), [(2, 1), (1, 1), (3, 2)]).save(str(path))
    return path


# --------------------------------------------------------------------- MAD
def test_mad_of_blocks_and_subsample_attentions_by_hand():
    ancestry = levit()
    x = images(2, SIZE)
    seen = {}
    hooks = [
        module.register_forward_hook(
            lambda m, args, out, name=name: seen.__setitem__(name, (m, args[0], out)))
        for name, module in ancestry.named_modules() if hasattr(module, 'attention_biases')
    ]
    with torch.no_grad():
        ancestry(x)
    for hook in hooks:
        hook.remove()
    mad = record_attention_distance(ancestry, [x[:1], x[1:]]).mean()
    # Stage s: grid side and cell in pixels (16 x 2^s); a subsample attention
    # before stage s has the keys of stage s - 1 and queries every second point.
    sides, pixels = [5, 3, 2], [16, 32, 64]
    for name, (attn, tokens, out) in seen.items():
        s, position = int(name.split('.')[1]), int(name.split('.')[2])
        subsample = position == 0 and s > 0
        side, cell = (sides[s - 1], pixels[s - 1]) if subsample else (sides[s], pixels[s])
        b, n, _ = tokens.shape
        h, kd = attn.num_heads, attn.key_dim
        with torch.no_grad():
            if subsample:
                k, v = linear_bn(attn.kv, tokens).view(b, n, h, -1).split([kd, 4 * kd], -1)
                coarse = tokens.view(b, side, side,
                                     -1)[:, ::2, ::2].reshape(b, -1, tokens.shape[-1])
                q = linear_bn(attn.q[1], coarse).view(b, -1, h, kd)
            else:
                q, k, v = linear_bn(attn.qkv, tokens).view(b, n, h, -1).split([kd, kd, 2 * kd], -1)
            scores = torch.einsum('bqhd,bkhd->bhqk', q, k) / math.sqrt(kd)
            probs = (scores + attn.attention_biases[:, attn.attention_bias_idxs]).softmax(-1)
            # The probabilities are those the block computed: they give its output.
            mixed = torch.einsum('bhqk,bkhd->bqhd', probs, v).flatten(2)
            torch.testing.assert_close(linear_bn(attn.proj[1], F.hardswish(mixed)), out)
        assert probs.max() > 2 / n and probs.min() < 0.5 / n  # far from uniform
        queries = [(i, j) for i in range(0, side, 2) for j in range(0, side, 2)] if subsample \
            else [(i, j) for i in range(side) for j in range(side)]
        keys = [(i, j) for i in range(side) for j in range(side)]
        rows = probs.tolist()
        expected = [
            sum(
                sum(rows[image][head][qi][ki] * cell * math.hypot(qr - kr, qc - kc)
                    for ki, (kr, kc) in enumerate(keys))
                for qi, (qr, qc) in enumerate(queries)) / len(queries) / b for head in range(h)
            for image in range(b)
        ]
        per_head = torch.tensor(expected).view(h, b).sum(1)
        if subsample:
            recorded = mad.downsamples[s]
        else:
            recorded = mad.blocks[s][(position - 2 * (s > 0)) // 2]
        torch.testing.assert_close(recorded, per_head.float(), rtol=1e-5, atol=1e-4)
    assert len(seen) == 2 * 3 + 2 and mad.downsamples[0] is None


# ------------------------------------------------------- learngene, descendant
def test_lossless_inheritance_at_omega_1(tmp_path):
    ancestry = levit()
    learngene = build_learngene(ancestry, [images(2, SIZE)], eps=1e-6, out=str(tmp_path / 'lg.pth'))
    assert learngene.num_centroids == [[2, 2], [3, 3], [4, 4]]
    model = descendant(tmp_path / 'lg.pth')
    x = images(2, SIZE, seed=5)
    with torch.no_grad():
        for ours, theirs in zip(model(x), ancestry(x)):
            torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)
    counts = model.parameter_counts()
    assert counts['t_params'] == counts['i_params'] == sum(p.numel() for p in ancestry.parameters())


def test_fewer_heads_and_other_depths_take_their_centroids(learngene_file):
    ancestry = levit()
    # Stage 0: 1 head, 1 block of 2; stage 1: 2 heads from 1 centroid, 3
    # blocks (block 2 repeats block 0); stage 2: 3 heads of 4.
    model = descendant(learngene_file, arch=dict(num_heads=[1, 2, 3], depths=[1, 3, 2]))
    assert (model.heads, model.depths) == ([1, 2, 3], [1, 3, 2])
    # By hand from condensed()'s MAD tables (head h in cluster h % c; the
    # centroid nearest its cluster's mean MAD, ties to the lower head; the
    # biggest cluster first): per stage and block, the ancestry block of the
    # attention, of the FFN (its group's first), and the ancestry head of every head.
    attention = [[0], [0, 1, 0], [0, 1]]
    ffn = [[0], [0, 0, 0], [0, 1]]
    heads = [[[0]], [[1, 1], [1, 1], [1, 1]], [[0, 1, 2], [0, 1, 0]]]
    rows, values = 16, 8  # per head: 4 + 4 + 8 Q/K/V rows, 8 values
    for s, (stage, theirs) in enumerate(zip(model.stages, ancestry.stages)):
        first = 2 if s else 0
        if s:  # the subsample attention and its MLP, whole
            for ours, their in ((stage[0], theirs[0]), (stage[1], theirs[1])):
                for key, value in their.state_dict().items():
                    assert torch.equal(ours.state_dict()[key], value), (s, key)
        assert len(stage) == first + 2 * len(heads[s])
        for block, sources in enumerate(heads[s]):
            ours = stage[first + 2 * block].block
            their = theirs[first + 2 * attention[s][block]].block
            for head, r in enumerate(sources):
                mine, its = slice(head * rows, (head + 1) * rows), slice(r * rows, (r + 1) * rows)
                assert torch.equal(ours.qkv.linear.weight[mine], their.qkv.linear.weight[its])
                for key in ('weight', 'bias', 'running_mean', 'running_var'):
                    assert torch.equal(
                        getattr(ours.qkv.bn, key)[mine],
                        getattr(their.qkv.bn, key)[its])
                assert torch.equal(ours.proj[1].linear.weight[:, head * values:(head + 1) * values],
                                   their.proj[1].linear.weight[:, r * values:(r + 1) * values])
                assert torch.equal(ours.attention_biases[head], their.attention_biases[r])
            assert torch.equal(ours.proj[1].bn.running_mean, their.proj[1].bn.running_mean)
            mlp = stage[first + 2 * block + 1].block
            their_mlp = theirs[first + 2 * ffn[s][block] + 1].block
            for key, value in their_mlp.state_dict().items():
                assert torch.equal(mlp.state_dict()[key], value), (s, block, key)
    assert torch.equal(model.patch_embed.patch_embed[0].bn.running_var,
                       ancestry.patch_embed.patch_embed[0].bn.running_var)
    with torch.no_grad():
        assert model(images(1, SIZE))[2].shape == (1, 32, 2, 2)


@pytest.mark.parametrize('kwargs,match', [
    (dict(arch=dict(omega=3)), r'omega=3 cannot form heads: H_a / omega = 2 / 3 = 0.666667'),
    (dict(arch=dict(depths=[2, 0, 2])), r'arch.depths=0 must be an int >= 1'),
    (dict(arch=dict(num_heads=[1, 2])), r'arch.num_heads=\[1, 2\] must be one value or one per '
     r'stage \(3\)'),
    (dict(arch=dict(embed_dims=[8, 8, 8])),
     r"must be a dict of \['num_heads', 'omega', 'depths'\]"),
    (dict(img_size=96), "img_size=96 differs from the learngene's 80"),
    (dict(deploy=True), 'deploy=True: a descendant inherits LeViT before its BatchNorms'),
])
def test_bad_descendants_name_the_problem(learngene_file, kwargs, match):
    with pytest.raises(ValueError, match=match):
        LearngeneLeViT(learngene=str(learngene_file), **kwargs)


@pytest.mark.parametrize('where,value,match', [
    (('stages', 1, 'layers', 0, 'heads', 'attention_biases'), torch.zeros(
        1, 1, 25), r'stages\[1\]\.layers\[0\]\.heads\.attention_biases has shape \(1, 1, 25\), '
     r'expected \(1, 1, 9\)'),
    (('stages', 2, 'layers', 1, 'heads', 'qkv.bn.running_var'), ..., r'stages\[2\]\.layers\[1\]'
     r'\.heads\.qkv\.bn\.running_var is missing'),
    (('stages', 0, 'layers', 0, 'proj_bn', 'weight'), torch.zeros(15),
     r'stages\[0\]\.layers\[0\]\.proj_bn\.weight has shape \(15,\), expected \(16,\)'),
    (('stages', 1, 'ffn_groups', 0, 'weights', 'linear1.bn.running_mean'), ...,
     r'stages\[1\]\.ffn_groups\[0\]\.weights\.linear1\.bn\.running_mean is missing'),
    (('stages', 2, 'downsample_mad'), torch.zeros(4), r'stages\[2\]\.downsample_mad has shape '
     r'\(4,\), expected \(6,\)'),
    (('stages', 1, 'downsample'), {}, r'stages\[1\]\.downsample is empty'),
    (('ancestry', 'resolutions'), [5, 3], r'ancestry\.resolutions=\[5, 3\] must be a list with '
     'one int per stage'),
])
def test_broken_levit_learngene_names_the_field(learngene_file, tmp_path, where, value, match):
    data = torch.load(str(learngene_file), weights_only=True)
    torch.save(broken(data, where, value), tmp_path / 'broken.pth')
    with pytest.raises(ValueError, match=match):
        LeViTLearngene.load(str(tmp_path / 'broken.pth'))


def test_a_deployed_levit_is_refused():
    ancestry = levit()
    ancestry.switch_to_deploy()
    with pytest.raises(ValueError, match=r'a deployed LeViT \(deploy=True'):
        LeViTAncestry(ancestry).describe()


# --------------------------------------------------------------- baselines
# A tiny LeViT of 3 / 3 / 2 blocks: 8 blocks over the stages in order. As the
# Cluster-Learngene code loads DeiT for its baselines (models/__init__.py:245-
# 251: the 12 blocks without blocks 0-8, or without 6-11, at their own
# indices), Heuristic-Learngene keeps the last three blocks (6, 7 of stage 2
# and block 2 of stage 1), Auto-Learngene blocks 0-5 (stages 0 and 1); the
# stem and the subsample attentions with their MLPs are the ancestry's.
BASELINE_DEPTHS = [3, 3, 2]
INHERITED_BLOCKS = {
    'heuristic': {(1, 2), (2, 0), (2, 1)},
    'auto': {(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)},
}


@pytest.fixture(scope='module')
def block_learngenes(tmp_path_factory):
    root = tmp_path_factory.mktemp('levit-blocks')
    ancestry = levit(depths=BASELINE_DEPTHS)
    for method in INHERITED_BLOCKS:
        LeViTAncestry(ancestry).extract_blocks(method).save(str(root / f'{method}.pth'))
    return ancestry, {method: root / f'{method}.pth' for method in INHERITED_BLOCKS}


def block_pairs(model: LeViT):
    """(stage, block) -> (attention, MLP) modules of each attention block."""
    pairs = {}
    for s, stage in enumerate(model.stages):
        first = 2 if s else 0
        for b in range((len(stage) - first) // 2):
            pairs[s, b] = (stage[first + 2 * b].block, stage[first + 2 * b + 1].block)
    return pairs


@pytest.mark.parametrize('method', sorted(INHERITED_BLOCKS))
def test_block_baselines_inherit_whole_blocks_where_the_ancestry_has_them(block_learngenes, method):
    ancestry, files = block_learngenes
    torch.manual_seed(1)
    model = descendant(files[method], init_mode=method)
    assert (model.heads, model.depths) == (ARCH['num_heads'], BASELINE_DEPTHS)
    ours, theirs = block_pairs(model), block_pairs(ancestry)
    assert sorted(ours) == sorted(theirs) and len(ours) == 8
    inherited = 0
    for position, (attn, mlp) in ours.items():
        for mine, its in zip((attn, mlp), theirs[position]):
            same = [
                torch.equal(value,
                            its.state_dict()[key]) for key, value in mine.state_dict().items()
                if value.is_floating_point()
            ]
            if position in INHERITED_BLOCKS[method]:
                assert all(same), (method, position)
                inherited += sum(p.numel() for p in its.parameters())
        if position not in INHERITED_BLOCKS[method]:  # random
            assert not torch.equal(attn.qkv.linear.weight, theirs[position][0].qkv.linear.weight)
            assert not torch.equal(mlp.linear1.linear.weight,
                                   theirs[position][1].linear1.linear.weight)
    # The stem and both subsample attentions with their MLPs, whole.
    whole = [(model.patch_embed, ancestry.patch_embed)]
    whole += [(model.stages[s][i], ancestry.stages[s][i]) for s in (1, 2) for i in (0, 1)]
    for mine, its in whole:
        for key, value in its.state_dict().items():
            assert torch.equal(mine.state_dict()[key], value), key
        inherited += sum(p.numel() for p in its.parameters())
    counts = model.parameter_counts()
    assert counts['i_params'] == inherited
    assert counts['t_params'] == sum(p.numel() for p in ancestry.parameters())
    # Every parameter, inherited or random, trains.
    model.train()
    model(images(2, SIZE))[2].square().mean().backward()
    for name, param in model.named_parameters():
        assert param.grad is not None and param.grad.abs().sum() > 0, name


@pytest.mark.parametrize(
    'method,kwargs,match',
    [
        ('heuristic', dict(init_mode='heuristic',
                           arch=dict(num_heads=[1, 3, 4])), r"init_mode='heuristic' inherits whole "
         r'blocks of \[2, 3, 4\] heads per stage; arch gives \[1, 3, 4\]'),
        # 7 blocks: Heuristic's three land on blocks 4-6, ancestry block 6 (stage 2) in stage 1.
        ('heuristic', dict(init_mode='heuristic',
                           arch=dict(depths=[3, 3, 1])), r'depths=\[3, 3, 1\]: the heuristic '
         r'learngene would put ancestry block 6 \(of stage 2\) in stage 1'),
        ('auto', dict(init_mode='heuristic'), r"init_mode='heuristic' needs a heuristic learngene; "
         r'.* is the auto learngene'),
        ('auto', dict(init_mode='tleg'),
         r"init_mode='tleg' is not one of \['cluster', 'heuristic', "
         r"'auto'\]"),
        ('auto', dict(init_mode=['auto']),
         r"init_mode=\['auto'\] is not one of \['cluster', 'heuristic', 'auto'\]"),
        ('auto', dict(), r"is not a learngene of format 'mmvitdyn.levit_learngene'"),
    ])
def test_bad_block_baselines_name_the_problem(block_learngenes, method, kwargs, match):
    with pytest.raises(ValueError, match=match):
        LearngeneLeViT(learngene=str(block_learngenes[1][method]), **kwargs)


@pytest.mark.parametrize('where,value,match', [
    (('blocks', 0, 'attn', 'attention_biases'), torch.zeros(
        3, 25), r'blocks\[0\]\.attn\.attention_biases has shape \(3, 25\), expected \(3, 9\)'),
    (('blocks', 2, 'mlp', 'linear2.bn.running_var'), ...,
     r'blocks\[2\]\.mlp\.linear2\.bn\.running_var is missing'),
    (('layers', ), [4, 5, 6], r'learngene layers=\[4, 5, 6\]; the heuristic learngene of a LeViT '
     r'of 8 blocks holds blocks \[5, 6, 7\]'),
    (('downsamples', 1), {}, r'downsamples\[1\] is empty'),
])
def test_broken_block_learngene_names_the_field(block_learngenes, tmp_path, where, value, match):
    data = torch.load(str(block_learngenes[1]['heuristic']), weights_only=True)
    torch.save(broken(data, where, value), tmp_path / 'broken.pth')
    with pytest.raises(ValueError, match=match):
        LeViTBlockLearngene.load(str(tmp_path / 'broken.pth'))


# -------------------------------------------------------------------- tool
def test_build_learngene_tool_on_levit_192(tmp_path):
    """mmpretrain's LeViT-192 (random weights, BatchNorm statistics
    included) from a classifier checkpoint, MAD over an image folder."""
    init_default_scope('mmpretrain')
    cfg = Config.fromfile(LEVIT_CFG)
    torch.manual_seed(3)
    model = MODELS.build(cfg.model)
    with torch.no_grad():
        for module in model.backbone.modules():
            if isinstance(module, torch.nn.BatchNorm1d):
                module.running_mean.normal_(0, 0.1)
    torch.save(dict(state_dict=model.state_dict()), tmp_path / 'levit.pth')
    (tmp_path / 'images').mkdir()
    for index in range(2):
        pixels = torch.randint(0, 256, (240, 260, 3), dtype=torch.uint8).numpy()
        Image.fromarray(pixels).save(tmp_path / 'images' / f'{index}.png')
    out = tmp_path / 'lg.pth'
    load_tool('learngene/build_learngene.py').main([
        str(LEVIT_CFG),
        str(tmp_path / 'levit.pth'), '--out',
        str(out), '--data',
        str(tmp_path / 'images'), '--num-images', '2', '--eps', '0.5', '--device', 'cpu'
    ])
    learngene = LeViTLearngene.load(str(out))
    a = learngene.ancestry
    assert (a['embed_dims'], a['num_heads'], a['depths'], a['key_dims'], a['resolutions'],
            a['patch_size']) == ([192, 288, 384], [3, 5, 6], [4, 4, 4], [32, 32, 32], [14, 7,
                                                                                       4], 16)
    assert learngene.settings['num_images'] == 2
    assert [tuple(s.mad.shape) for s in learngene.stages] == [(4, 3), (4, 5), (4, 6)]
    # The checkpoint's weights, not the tool's fresh initialisation.
    for key, value in learngene.embeddings.items():
        assert torch.equal(value, model.backbone.patch_embed.state_dict()[key]), key
    mlp = model.backbone.stages[2][3].block
    assert torch.equal(learngene.stages[2].ffn_groups[0].weights['linear1.bn.running_mean'],
                       mlp.linear1.bn.running_mean)
    assert (tmp_path / 'lg_mad.png').is_file()


@pytest.mark.parametrize('method,blocks', [('heuristic', [(2, 1), (2, 2), (2, 3)]),
                                           ('auto', [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0),
                                                     (1, 1)])])
def test_extract_baseline_learngene_tool_on_levit_192(tmp_path, method, blocks):
    """LeViT-192's 12 blocks (4 a stage): Heuristic keeps 9-11, Auto 0-5, from
    the checkpoint given."""
    init_default_scope('mmpretrain')
    torch.manual_seed(4)
    model = MODELS.build(Config.fromfile(LEVIT_CFG).model)
    torch.save(dict(state_dict=model.state_dict()), tmp_path / 'levit.pth')
    out = tmp_path / f'{method}.pth'
    load_tool('learngene/extract_baseline_learngene.py').main(
        [method, str(LEVIT_CFG),
         str(tmp_path / 'levit.pth'), '--out',
         str(out)])
    learngene = LeViTBlockLearngene.load(str(out))
    assert learngene.layers == tuple(4 * s + b for s, b in blocks)
    for block, (s, b) in zip(learngene.blocks, blocks):
        attn, mlp = model.backbone.stages[s][(2 if s else 0) + 2 * b:][:2]
        assert torch.equal(block['attn']['qkv.linear.weight'], attn.block.qkv.linear.weight)
        assert torch.equal(block['mlp']['linear1.bn.running_mean'],
                           mlp.block.linear1.bn.running_mean)
    assert torch.equal(learngene.downsamples[2]['kv.linear.weight'],
                       model.backbone.stages[2][0].kv.linear.weight)
