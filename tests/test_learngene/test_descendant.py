import copy

import pytest
import torch

from helpers.learngene import learngene_with_counts, make_ancestry, write_learngene
from helpers.models import TINY_ARCH, images, tiny
from mmvitdyn.analysis import count_flops
from mmvitdyn.learngene import DyTLearngeneViT, Learngene, LearngeneViT, ViTAncestry
from mmvitdyn.learngene.descendants import vit as descendant_module
from mmvitdyn.models.layers import DyTBlock, Mlp, heads_are_shared


def learngene_file(ancestry, tmp_path, name='lg.pth', **kwargs):
    path = tmp_path / name
    write_learngene(ancestry, path, **kwargs)
    return str(path)


def descendant(path, **kwargs):
    kwargs.setdefault('img_size', 32)
    kwargs.setdefault('out_type', 'raw')
    model = LearngeneViT(learngene=path, **kwargs)
    model.init_weights()
    return model.eval()


def test_lossless_inheritance(ancestry, tmp_path):
    # Every head its own cluster, omega = 1, the ancestry's depth.
    path = learngene_file(ancestry, tmp_path, eps=1e-6)
    model = descendant(path, out_indices=(0, 1, 2))
    ancestry.out_indices = (0, 1, 2)
    x = images()
    with torch.no_grad():
        for ours, theirs in zip(model(x), ancestry(x)):
            torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)
    counts = model.parameter_counts()
    assert counts['t_params'] == counts['i_params'] == sum(p.numel() for p in ancestry.parameters())


def test_inherited_head_computes_the_ancestry_heads_attention(ancestry, tmp_path):
    path = learngene_file(ancestry, tmp_path, eps=1.0)
    learngene = Learngene.load(path)
    model = descendant(path, arch=dict(num_heads=6))  # more heads than centroids
    x = torch.randn(2, 17, 32)
    for index, block in enumerate(model.blocks):
        layer = learngene.layers[index]
        ours = block.attn.qkv_heads(x)
        theirs = ancestry.blocks[index].attn.qkv_heads(x)
        proj = block.attn.proj.weight.view(32, 6, 8)
        their_proj = ancestry.blocks[index].attn.proj.weight.view(32, 4, 8)
        for head in range(6):
            source = layer.clusters[head % layer.num_centroids].representative
            q, k, v = ours[:, :, head]
            tq, tk, tv = theirs[:, :, source]
            torch.testing.assert_close(
                torch.nn.functional.scaled_dot_product_attention(q, k, v),
                torch.nn.functional.scaled_dot_product_attention(tq, tk, tv))
            assert torch.equal(proj[:, head], their_proj[:, source])
        assert torch.equal(block.attn.proj.bias, ancestry.blocks[index].attn.proj.bias)


# ------------------------------------------------------------- FFN sharing
def test_tied_and_independent_ffns_start_equal(ancestry, tmp_path):
    path = learngene_file(ancestry, tmp_path, eps=1e3)  # one centroid per layer, one FFN group
    tied = descendant(path, arch=dict(num_heads=2))
    # One W for the run, held by its first layer; every layer's W_t is supplied.
    assert [dict(b.mlp.named_parameters(recurse=False)) for b in tied.blocks] == [{}] * 3
    assert [b.mlp.fc1._parameters for b in tied.blocks] == [{}] * 3
    assert 'expansion' in tied.blocks[0].mlp._modules
    assert not any('expansion' in b.mlp._modules for b in tied.blocks[1:])
    assert sorted(tied.block_tensors(1)) == [
        'mlp.fc1.bias', 'mlp.fc1.weight', 'mlp.fc2.bias', 'mlp.fc2.weight'
    ]
    independent = descendant(path, arch=dict(num_heads=2), ffn_sharing='independent')
    assert [type(b.mlp) for b in independent.blocks] == [Mlp] * 3
    for block in independent.blocks:
        assert torch.equal(block.mlp.fc1.weight, ancestry.blocks[0].mlp.fc1.weight)
    x = images()
    with torch.no_grad():
        assert torch.equal(tied(x)[0], independent(x)[0])


def test_one_shared_ffn_is_built_per_tied_run(ancestry, tmp_path, monkeypatch):
    """Construction builds each run's FFNExpansion once (no spare ones drawing random
    numbers), so the descendant's random init is that of the same seed without them."""
    built = []

    class Counted(descendant_module.FFNExpansion):

        def __init__(self, *args):
            built.append(args)
            super().__init__(*args)

    path = learngene_file(ancestry, tmp_path, eps=1e3)  # one FFN group over the 3 layers
    monkeypatch.setattr(descendant_module, 'FFNExpansion', Counted)
    tied = descendant(path, arch=dict(num_heads=2))
    assert built == [(32, 64, 3)]  # width, FFN width, the 3 layers of the one run
    assert sum('expansion' in b.mlp._modules for b in tied.blocks) == 1


def test_tied_ffns_stay_one_function_of_w_while_independent_copies_drift(ancestry, tmp_path):
    path = learngene_file(ancestry, tmp_path, eps=1e3)
    for mode in ('tied', 'independent'):
        model = descendant(path, arch=dict(num_heads=2), ffn_sharing=mode).train()
        optimizer = torch.optim.SGD(model.parameters(), lr=1.)
        model(images())[0].square().mean().backward()
        optimizer.step()
        if mode == 'tied':
            expansion = model.blocks[0].mlp.expansion
            # Every layer is still g_t of the one W (g now differs per layer).
            hidden = torch.relu(
                expansion.fc1_weight.unsqueeze(-1) * expansion.map_hidden_weight +
                expansion.map_hidden_bias)
            for t in range(3):
                expected = hidden @ expansion.map_out_weight[t] + expansion.map_out_bias[t]
                torch.testing.assert_close(expansion.weights(t)['fc1.weight'], expected)
        else:
            w = [b.mlp.fc1.weight for b in model.blocks]
            assert not torch.equal(w[0], w[1]) and not torch.equal(w[1], w[2])


def test_ffn_expansion_trains_with_the_descendant(ancestry, tmp_path):
    path = learngene_file(ancestry, tmp_path, eps=1e3)
    model = descendant(path).train()
    model(images())[0].square().mean().backward()
    expansion = model.blocks[0].mlp.expansion
    for name in ('map_hidden_weight', 'map_hidden_bias', 'map_out_weight', 'map_out_bias',
                 'fc1_weight'):
        assert getattr(expansion, name).grad.abs().sum() > 0, name
    assert 'blocks.0.mlp.expansion.map_out_weight' in dict(model.named_parameters())
    assert not any(
        name.startswith(('blocks.1.mlp', 'blocks.2.mlp')) for name, _ in model.named_parameters())
    optimizer = torch.optim.SGD(model.parameters(), lr=1.)
    before = model.block_tensors(2)['mlp.fc2.weight'].detach().clone()
    optimizer.step()
    assert not torch.equal(model.block_tensors(2)['mlp.fc2.weight'], before)


# ------------------------------------------------------------ shared heads
def test_tied_heads_are_one_parameter_and_train_together(ancestry, tmp_path):
    path = learngene_file(ancestry, tmp_path, eps=1e3)  # 1 centroid per layer: 3 heads share it
    tied = descendant(path, arch=dict(num_heads=3), tie_heads=True)
    free = descendant(path, arch=dict(num_heads=3))
    assert all(heads_are_shared(b.attn) for b in tied.blocks)
    assert tied.blocks[0].attn.shared_heads.qkv_weight.shape == (3, 1, 8, 32)
    x = images()
    with torch.no_grad():
        assert torch.equal(tied(x)[0], free(x)[0])
    start = free.blocks[0].attn.qkv.weight.detach().clone().view(3, 3, 8, 32)
    for model in (tied, free):
        model.train()
        optimizer = torch.optim.SGD(model.parameters(), lr=1.)
        model(x)[0].square().mean().backward()
        optimizer.step()
    q_tied = tied.block_tensors(0)['attn.qkv.weight'].detach().view(3, 3, 8, 32)
    q_free = free.blocks[0].attn.qkv.weight.detach().view(3, 3, 8, 32)
    assert torch.equal(q_tied[:, 0], q_tied[:, 2]) and torch.equal(q_tied[:, 1], q_tied[:, 2])
    # Identical copies get identical gradients, so the one tied parameter moves
    # by their sum: three times as far as each independent copy.
    torch.testing.assert_close(q_tied[:, 1] - start[:, 1], 3 * (q_free[:, 1] - start[:, 1]))
    assert (q_free[:, 1] - start[:, 1]).abs().max() > 1e-4


def test_materialized_descendant_gives_the_same_outputs_and_reloads(ancestry, tmp_path):
    path = learngene_file(ancestry, tmp_path, eps=1e3)
    model = descendant(path, arch=dict(num_heads=2), tie_heads=True)
    with torch.no_grad():
        model.blocks[0].mlp.expansion.map_out_weight.normal_()
        model.blocks[0].mlp.expansion.map_hidden_bias.fill_(0.01)
        model.blocks[1].attn.shared_heads.qkv_weight.normal_()
    counts = model.parameter_counts()
    x = images()
    with torch.no_grad():
        expected = model(x)[0]
        model.materialize()
        assert [type(b.mlp) for b in model.blocks] == [Mlp] * 3
        assert not any(heads_are_shared(b.attn) for b in model.blocks)
        torch.testing.assert_close(model(x)[0], expected)
    # T-Params counted every tensor the deployed model holds.
    assert counts['t_params'] == sum(p.numel() for p in model.parameters())
    assert model.parameter_counts()['i_params'] == counts['i_params']
    plain = LearngeneViT(
        learngene=path,
        arch=dict(num_heads=2),
        img_size=32,
        out_type='raw',
        ffn_sharing='independent').eval()
    plain.load_state_dict(model.state_dict())
    with torch.no_grad():
        torch.testing.assert_close(plain(x)[0], expected)


def test_checkpoint_of_another_structure_is_refused(ancestry, tmp_path):
    grouped = learngene_file(ancestry, tmp_path, 'grouped.pth', eps=1e3)
    model = descendant(grouped, arch=dict(num_heads=4))
    for other in (dict(ffn_sharing='independent'), dict(tie_heads=True)):
        rebuilt = LearngeneViT(learngene=grouped, img_size=32, arch=dict(num_heads=4), **other)
        with pytest.raises(ValueError, match='trained as a different descendant'):
            rebuilt.load_state_dict(model.state_dict(), strict=False)


# ------------------------------------------------------ T-Params, I-Params
def counting_ancestry(**kwargs):
    # FFN 48 wide, so an FFN (3152) and a head (1048) have unrelated sizes.
    return make_ancestry(dict(TINY_ARCH, feedforward_channels=48), **kwargs)


# Sizes of the counting ancestry's parts (C = 32, D = 8, FFN 48, 8x8 patches of
# 32x32 images: 16 patches + the class token).
EMBED = (32 * 3 * 8 * 8 + 32) + 32 + 17 * 32  # patch embedding, cls token, pos embed
HEAD = 3 * 8 * 32 + 3 * 8 + 32 * 8  # a head's Q/K/V rows, their biases, its W^O columns
LAYER_FIXED = 32 + 2 * 2 * 32  # W^O bias, norm1, norm2
FFN = 48 * 32 + 48 + 32 * 48 + 32
FINAL_NORM = 2 * 32
MAP = 2 + 2 + 2 * 2 + 2  # g of a group of T = 2 layers


@pytest.mark.parametrize(
    'ffn_sharing,tie_heads,trainable',
    [
        ('independent', False, 3 * (3 * HEAD + LAYER_FIXED + FFN)),
        ('tied', False, 3 * (3 * HEAD + LAYER_FIXED) + 2 * FFN + MAP),
        # Layers 0, 1: heads (0, 1, 0), two distinct; layer 2: (0, 0, 0), one.
        ('independent', True, (2 + 2 + 1) * HEAD + 3 * (LAYER_FIXED + FFN)),
        ('tied', True, (2 + 2 + 1) * HEAD + 3 * LAYER_FIXED + 2 * FFN + MAP),
    ])
def test_parameter_counts_by_hand(tmp_path, ffn_sharing, tie_heads, trainable):
    # Centroids (2, 2, 1): layers 0 and 1 share one FFN; 3 heads per layer.
    learngene_with_counts(counting_ancestry(), (2, 2, 1), tmp_path / 'lg.pth')
    model = descendant(
        str(tmp_path / 'lg.pth'),
        arch=dict(num_heads=3),
        ffn_sharing=ffn_sharing,
        tie_heads=tie_heads)
    t_params = EMBED + 3 * (3 * HEAD + LAYER_FIXED + FFN) + FINAL_NORM
    assert model.parameter_counts() == dict(
        t_params=t_params, i_params=t_params, trainable=EMBED + trainable + FINAL_NORM)
    # T-Params is the plain ViT of the descendant's shape (the From-Scratch baseline).
    plain = tiny(arch=dict(TINY_ARCH, num_heads=3, head_dim=8, feedforward_channels=48))
    assert sum(p.numel() for p in plain.parameters() if p.requires_grad) == t_params


def test_what_the_learngene_lacks_is_not_counted_as_inherited(tmp_path):
    # No final norm and no q/k/v biases in the ancestry; the descendant has both.
    learngene_with_counts(
        counting_ancestry(final_norm=False, qkv_bias=False), (4, 4, 4), tmp_path / 'lg.pth')
    model = descendant(str(tmp_path / 'lg.pth'), qkv_bias=True)
    counts = model.parameter_counts()
    assert counts['t_params'] - counts['i_params'] == FINAL_NORM + 3 * 3 * 4 * 8
    assert all(torch.equal(b.attn.qkv.bias, torch.zeros(96)) for b in model.blocks)


def test_a_descendant_loaded_from_its_checkpoint_claims_no_inherited_parameters(tmp_path):
    learngene_with_counts(counting_ancestry(), (2, 2, 1), tmp_path / 'lg.pth')
    path = str(tmp_path / 'lg.pth')
    trained = descendant(path, tie_heads=True)
    assert trained.parameter_counts()['i_params'] == trained.parameter_counts()['t_params']
    ckpt = tmp_path / 'descendant.pth'
    torch.save(dict(state_dict={f'backbone.{k}': v for k, v in trained.state_dict().items()}), ckpt)
    loaded = descendant(
        path,
        tie_heads=True,
        init_cfg=dict(type='Pretrained', checkpoint=str(ckpt), prefix='backbone.'))
    assert loaded.parameter_counts()['i_params'] == 0
    # Inherited, then overwritten by the checkpoint (as the Runner's load_from does).
    resumed = descendant(path, tie_heads=True)
    resumed.load_state_dict(trained.state_dict())
    assert resumed.parameter_counts()['i_params'] == 0
    # Loading only the embeddings leaves the rest counted.
    partial = descendant(path, tie_heads=True)
    partial.load_state_dict({'pos_embed': trained.pos_embed.detach()}, strict=False)
    counts = partial.parameter_counts()
    assert counts['t_params'] - counts['i_params'] == 17 * 32


def test_inheritance_fails_on_a_missing_entry_and_counts_nothing(tmp_path):
    learngene = learngene_with_counts(counting_ancestry(), (2, 2, 1), tmp_path / 'lg.pth')
    model = descendant(str(tmp_path / 'lg.pth'))
    broken = copy.deepcopy(learngene)
    del broken.layers[1].norm2['bias']
    model.inherited = {}
    with pytest.raises(ValueError, match=r'layers\[1\]\.norm2\.bias is missing'):
        model.inherit_from(broken)
    assert model.parameter_counts()['i_params'] == 0


def test_inheriting_a_learngene_of_another_structure_is_refused(tmp_path):
    learngene_with_counts(counting_ancestry(), (2, 2, 1), tmp_path / 'lg.pth')
    model = descendant(str(tmp_path / 'lg.pth'))
    other = learngene_with_counts(counting_ancestry(), (1, 1, 1))  # one FFN group, 1 centroid
    model.inherited = {}
    with pytest.raises(
            ValueError, match=r'the learngene given has centroids per layer \[\[0, 0, 0, 0\]'):
        model.inherit_from(other)
    assert model.parameter_counts()['i_params'] == 0


# ----------------------------------------------------------- other checks
def test_pretrained_descendant_needs_only_the_learngene_structure(ancestry, tmp_path):
    path = learngene_file(ancestry, tmp_path, eps=1e3)
    trained = descendant(path, arch=dict(num_heads=2))
    with torch.no_grad():
        for param in trained.parameters():
            param.add_(0.1)
    ckpt = tmp_path / 'descendant.pth'
    torch.save(dict(state_dict={f'backbone.{k}': v for k, v in trained.state_dict().items()}), ckpt)
    # Rebuilt from another ancestry's learngene of the same structure: the
    # checkpoint's weights load and nothing is inherited over them.
    other = learngene_file(make_ancestry(seed=3), tmp_path, 'other.pth', eps=1e3)
    model = descendant(
        other,
        arch=dict(num_heads=2),
        init_cfg=dict(type='Pretrained', checkpoint=str(ckpt), prefix='backbone.'))
    for (name, ours), theirs in zip(model.state_dict().items(), trained.state_dict().values()):
        assert torch.equal(ours, theirs), name


def test_shallower_and_deeper_descendants(ancestry, tmp_path):
    path = learngene_file(ancestry, tmp_path, eps=1e-6)
    shallow = descendant(path, arch=dict(num_layers=2))
    assert shallow.plan.sources == [0, 1]
    assert torch.equal(shallow.blocks[1].attn.qkv.weight, ancestry.blocks[1].attn.qkv.weight)
    deep = descendant(path, arch=dict(num_layers=5, num_heads=[4, 4, 4, 2, 1]))
    assert deep.plan.sources == [0, 1, 2, 0, 1]
    assert torch.equal(deep.blocks[3].mlp.fc2.weight, ancestry.blocks[0].mlp.fc2.weight)
    assert deep.blocks[4].attn.num_heads == 1 and deep.blocks[4].attn.head_dim == 8
    # A copy is an independent parameter.
    assert deep.blocks[3].mlp.fc2.weight is not deep.blocks[0].mlp.fc2.weight


def test_paper_schedule_descendant(tmp_path):
    ancestry = make_ancestry(
        dict(embed_dims=48, num_layers=3, num_heads=12, feedforward_channels=64))
    learngene_with_counts(ancestry, (5, 3, 1), tmp_path / 'lg.pth')
    model = descendant(
        str(tmp_path / 'lg.pth'), arch=dict(num_layers=6, head_schedule='incrementing'))
    assert [b.attn.num_heads for b in model.blocks] == [6, 6, 8, 8, 12, 12]
    assert model.blocks[2].attn.qkv.weight.shape == (3 * 8 * 4, 48)


@pytest.mark.parametrize('out_type,shape', [('cls_token', (2, 32)), ('featmap', (2, 32, 4, 4)),
                                            ('avg_featmap', (2, 32))])
def test_backbone_contract(ancestry, tmp_path, out_type, shape):
    path = learngene_file(ancestry, tmp_path, eps=1.0)
    model = descendant(path, arch=dict(num_heads=2), out_type=out_type, out_indices=(0, -1))
    outs = model(images(2))
    assert len(outs) == 2 and all(o.shape == shape for o in outs)
    assert model.get_layer_depth('backbone.blocks.1.attn.qkv.weight', 'backbone.') == (2, 5)
    assert model.get_layer_depth('backbone.pos_embed', 'backbone.') == (0, 5)


def test_other_input_resolution_resizes_the_learngene_pos_embed(ancestry, tmp_path):
    path = learngene_file(ancestry, tmp_path, eps=1.0)
    model = descendant(path, img_size=64, out_type='featmap')
    assert model.pos_embed.shape == (1, 65, 32)
    assert model(images(1, 64))[0].shape == (1, 32, 8, 8)


@pytest.mark.parametrize('kwargs,match', [
    (dict(arch=dict(embed_dims=64)),
     "arch.embed_dims=64 differs from the learngene's embed dim 32"),
    (dict(arch=dict(feedforward_channels=32)), 'arch.feedforward_channels=32 differs'),
    (dict(arch=dict(omega=3)), 'omega=3 cannot form heads'),
    (dict(arch=dict(depth=3)), r"unknown keys \['depth'\]"),
    (dict(patch_size=16), "patch_size=16 differs from the learngene's patch size 8"),
    (dict(ffn_sharing='shared'), r"ffn_sharing='shared' is not one of \('tied', 'independent'\)"),
])
def test_bad_descendants_name_the_problem(ancestry, tmp_path, kwargs, match):
    path = learngene_file(ancestry, tmp_path, eps=1.0)
    with pytest.raises(ValueError, match=match):
        LearngeneViT(learngene=path, img_size=32, **kwargs)


def test_corrupted_learngene(tmp_path):
    path = tmp_path / 'lg.pth'
    path.write_bytes(b'not a checkpoint')
    with pytest.raises(ValueError, match='corrupted'):
        LearngeneViT(learngene=str(path))


# ------------------------------------------------------------------- DyT
def test_composes_with_dyt_by_mro(ancestry, tmp_path):
    path = learngene_file(ancestry, tmp_path, eps=1e3)
    model = DyTLearngeneViT(
        learngene=path,
        img_size=32,
        arch=dict(num_heads=2),
        out_type='raw',
        adapter_cfg=dict(bottleneck=4),
        freeze_pretrained=False)
    model.init_weights()
    assert all(isinstance(b, DyTBlock) and b.attn.num_heads == 2 for b in model.blocks)
    assert 'mlp.fc1.weight' in model.block_tensors(2)
    assert torch.equal(model.blocks[0].attn.proj.bias, ancestry.blocks[0].attn.proj.bias)
    model.train()
    model.attach_objective('this test, which adds its own loss terms')
    model(images(2))[0].sum().backward()
    assert model.blocks[0].mlp.expansion.map_out_weight.grad is not None


def test_dyt_on_a_frozen_descendant_trains_its_own_parts_and_skips_tokens(ancestry, tmp_path):
    path = learngene_file(ancestry, tmp_path, eps=1e3)
    model = DyTLearngeneViT(
        learngene=path,
        img_size=32,
        arch=dict(num_heads=2),
        out_type='raw',
        adapter_cfg=dict(bottleneck=4),
        target_rate=0.3)
    model.init_weights()
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable == {
        n
        for n, _ in model.named_parameters() if '.adapter.' in n or '.dispatchers.' in n
    }
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=0.05)
    x = images(4)
    model.attach_objective('this test, which adds its own loss terms')
    for _ in range(20):
        model.train()
        out = model(x)[0]
        optimizer.zero_grad()
        (out.square().mean() + 10 * model.rate_loss()).backward()
        optimizer.step()
    model.eval()
    packed = model(x)[0]
    rate = model.activation_rates()['act_rate']
    model.set_packed(False)
    torch.testing.assert_close(model(x)[0], packed, atol=1e-5, rtol=1e-5)
    assert rate < 0.6  # tokens really skip, toward the target rate of 0.3


def test_dyt_descendant_config(ancestry, tmp_path):
    from mmengine.config import Config
    from mmengine.registry import DefaultScope
    from mmpretrain.registry import MODELS

    from helpers.tools import REPO
    cfg = Config.fromfile(REPO / 'configs/cluster_learngene/'
                          'dyt-learngene-vit-mini-p4-h3_vit-mini-eps0.1_1xb32-8e_digits-32px.py')
    assert cfg.model.type == 'DyTImageClassifier'
    assert cfg.model.backbone.type == 'DyTLearngeneViT'
    backbone = dict(
        cfg.model.backbone,
        learngene=learngene_file(ancestry, tmp_path, eps=1e3),
        arch=dict(num_heads=2),
        img_size=32)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(backbone)
    assert isinstance(model, DyTLearngeneViT) and model.dispatch == 'mlp'


# ------------------------------------------------- supplied tensors, seams
def tied_descendant(ancestry, tmp_path, **kwargs):
    """A descendant with one tied FFN run over 3 layers and 3 heads tied to 1."""
    path = learngene_file(ancestry, tmp_path, eps=1e3)
    return descendant(path, arch=dict(num_heads=3), tie_heads=True, **kwargs)


class ExpandedWeights(torch.nn.Module):
    """Computes layer ``position``'s W_t from an FFN expansion (what a tied layer adds)."""

    def __init__(self, expansion, position):
        super().__init__()
        self.expansion, self.position = expansion, position

    def forward(self, x):
        return tuple(self.expansion.weights(self.position).values())


def test_flops_of_a_tied_descendant_are_its_plain_copy_s_and_the_expansions(ancestry, tmp_path):
    """The FLOP counters trace the model (torch.jit); supplying tied tensors must
    not stop them. Tied heads cost nothing more than their plain copy; a tied FFN
    run adds the computation of its W_t in every forward pass."""
    x = images(1)
    heads_only = tied_descendant(ancestry, tmp_path, ffn_sharing='independent')
    assert count_flops(heads_only,
                       (x, )) == count_flops(copy.deepcopy(heads_only).materialize(), (x, )) > 0
    tied = tied_descendant(ancestry, tmp_path)
    expansion = tied.blocks[0].mlp.expansion
    maps = sum(count_flops(ExpandedWeights(expansion, t), (x, )) for t in range(3))
    assert maps > 0
    assert count_flops(tied, (x, )) == count_flops(copy.deepcopy(tied).materialize(), (x, )) + maps


def frozen_dyt_descendant(ancestry, tmp_path, **kwargs):
    """A frozen DyT descendant (only the tuning parts train) with 3 heads tied to 1."""
    path = learngene_file(ancestry, tmp_path, eps=1e3)
    return DyTLearngeneViT(
        learngene=path,
        img_size=32,
        arch=dict(num_heads=3),
        tie_heads=True,
        adapter_cfg=dict(bottleneck=4),
        **kwargs)


def test_unfreeze_names_tied_heads_as_the_attention_tensors(ancestry, tmp_path):
    model = frozen_dyt_descendant(
        ancestry, tmp_path, unfreeze=['blocks.1.attn.qkv', 'blocks.2.attn.proj'])
    trainable = {
        n
        for n, p in model.named_parameters()
        if p.requires_grad and 'adapter' not in n and 'dispatch' not in n
    }
    assert trainable == {
        'blocks.1.attn.shared_heads.qkv_weight', 'blocks.1.attn.shared_heads.qkv_bias',
        'blocks.2.attn.shared_heads.proj_weight', 'blocks.2.attn.proj.bias'
    }


def test_a_tied_heads_checkpoint_of_the_parametrize_layout_loads(ancestry, tmp_path):
    """Before 0.1.0 tied heads were saved as ``attn.qkv.parametrizations.weight.original``
    (the same (3, U, D, C) tensor): such a checkpoint loads as it was trained."""
    trained = tied_descendant(ancestry, tmp_path)
    with torch.no_grad():
        for param in trained.parameters():
            param.add_(torch.randn_like(param) * 0.01)
    names = {
        'qkv_weight': 'qkv.parametrizations.weight.original',
        'qkv_bias': 'qkv.parametrizations.bias.original',
        'proj_weight': 'proj.parametrizations.weight.original'
    }
    old = {}
    for key, value in trained.state_dict().items():
        owner, found, attr = key.partition('shared_heads.')
        old[owner + names[attr] if found else key] = value
    assert sum('parametrizations' in key for key in old) == 9
    fresh = tied_descendant(ancestry, tmp_path)
    fresh.load_state_dict(old)
    x = images(2)
    with torch.no_grad():
        assert torch.equal(fresh(x)[0], trained(x)[0])


def test_whole_blocks_of_a_tied_descendant_are_those_of_its_plain_copy(ancestry, tmp_path):
    tied = tied_descendant(ancestry, tmp_path)
    plain = copy.deepcopy(tied).materialize()
    for index in range(3):
        expected = plain.blocks[index].state_dict()
        got = ViTAncestry(tied).block_state(index)
        assert sorted(got) == sorted(expected)
        assert all(torch.equal(got[key], expected[key]) for key in expected)


def test_materialize_keeps_what_trains(ancestry, tmp_path):
    model = frozen_dyt_descendant(ancestry, tmp_path)
    before = sorted(n for n, p in model.named_parameters() if p.requires_grad)
    model.materialize()
    assert sorted(n for n, p in model.named_parameters() if p.requires_grad) == before
    assert not model.blocks[1].attn.qkv.weight.requires_grad
    assert not model.blocks[1].mlp.fc1.weight.requires_grad
