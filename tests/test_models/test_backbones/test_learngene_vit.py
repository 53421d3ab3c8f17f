import pytest
import torch

from mmvitdyn.learngene import ExpandedMlp, Learngene
from mmvitdyn.models.backbones import DyTLearngeneViT, LearngeneViT
from mmvitdyn.models.layers import DyTBlock, Mlp

from test_learngene.learngene_testing import images, make_ancestry, write_learngene


@pytest.fixture
def ancestry():
    return make_ancestry()


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
            torch.testing.assert_close(torch.nn.functional.scaled_dot_product_attention(q, k, v),
                                       torch.nn.functional.scaled_dot_product_attention(tq, tk, tv))
            assert torch.equal(proj[:, head], their_proj[:, source])
        assert torch.equal(block.attn.proj.bias, ancestry.blocks[index].attn.proj.bias)


def test_descendant_with_grouped_ffns_starts_as_shared_ffns(ancestry, tmp_path):
    path = learngene_file(ancestry, tmp_path, eps=1e3)  # one centroid per layer, one FFN group
    model = descendant(path, arch=dict(num_heads=2))
    assert [type(b.mlp) for b in model.blocks] == [ExpandedMlp] * 3
    assert model.blocks[1].mlp.source is model.blocks[0].mlp.source
    # The same network with every layer holding plain copies of the group's FFN.
    plain = descendant(path, arch=dict(num_heads=2), ffn_expansion=False)
    assert [type(b.mlp) for b in plain.blocks] == [Mlp] * 3
    assert torch.equal(plain.blocks[2].mlp.fc1.weight, ancestry.blocks[0].mlp.fc1.weight)
    x = images()
    with torch.no_grad():
        assert torch.equal(model(x)[0], plain(x)[0])
    # Only the maps g are new: I-Params = T-Params - g.
    counts = model.parameter_counts()
    assert counts['t_params'] - counts['i_params'] == 2 + 2 + 3 * 2 + 3


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
    before = model.blocks[2].mlp.source.weights(2)['fc2.weight'].detach().clone()
    optimizer.step()
    assert not torch.equal(model.blocks[2].mlp.source.weights(2)['fc2.weight'], before)


def test_materialized_ffns_give_the_same_outputs_and_reload(ancestry, tmp_path):
    path = learngene_file(ancestry, tmp_path, eps=1e3)
    model = descendant(path)
    with torch.no_grad():
        for block in (model.blocks[0], ):
            block.mlp.expansion.map_out_weight.normal_()
            block.mlp.expansion.map_hidden_bias.fill_(0.01)
    x = images()
    with torch.no_grad():
        expected = model(x)[0]
        model.materialize_ffns()
        assert [type(b.mlp) for b in model.blocks] == [Mlp] * 3
        torch.testing.assert_close(model(x)[0], expected)
    plain = LearngeneViT(learngene=path, img_size=32, out_type='raw', ffn_expansion=False).eval()
    plain.load_state_dict(model.state_dict())
    with torch.no_grad():
        torch.testing.assert_close(plain(x)[0], expected)


def test_checkpoint_of_another_structure_is_refused(ancestry, tmp_path):
    grouped = learngene_file(ancestry, tmp_path, 'grouped.pth', eps=1e3)
    model = descendant(grouped, arch=dict(num_heads=4))
    plain = LearngeneViT(learngene=grouped, img_size=32, ffn_expansion=False)
    with pytest.raises(ValueError, match='trained as a different descendant'):
        plain.load_state_dict(model.state_dict(), strict=False)


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
    model = descendant(other,
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


def test_from_scratch_keeps_the_structure_not_the_weights(ancestry, tmp_path):
    path = learngene_file(ancestry, tmp_path, eps=1e3)
    scratch = descendant(path, arch=dict(num_heads=2), inherit=False)
    inherited = descendant(path, arch=dict(num_heads=2))
    assert [n
            for n, _ in scratch.named_parameters()] == [n for n, _ in inherited.named_parameters()]
    assert not torch.equal(scratch.pos_embed, inherited.pos_embed)
    assert scratch.parameter_counts()['i_params'] == 0


@pytest.mark.parametrize('kwargs,match', [
    (dict(arch=dict(embed_dims=64)),
     "arch.embed_dims=64 differs from the learngene's embed dim 32"),
    (dict(arch=dict(feedforward_channels=32)), 'arch.feedforward_channels=32 differs'),
    (dict(arch=dict(omega=3)), 'omega=3 cannot form heads'),
    (dict(arch=dict(depth=3)), r"unknown keys \['depth'\]"),
    (dict(patch_size=16), "patch_size=16 differs from the learngene's patch size 8"),
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


def test_composes_with_dyt_by_mro(ancestry, tmp_path):
    path = learngene_file(ancestry, tmp_path, eps=1e3)
    model = DyTLearngeneViT(learngene=path,
                            img_size=32,
                            arch=dict(num_heads=2),
                            out_type='raw',
                            adapter_cfg=dict(bottleneck=4),
                            freeze_pretrained=False)
    model.init_weights()
    assert all(isinstance(b, DyTBlock) and b.attn.num_heads == 2 for b in model.blocks)
    assert isinstance(model.blocks[2].mlp, ExpandedMlp)
    assert torch.equal(model.blocks[0].attn.proj.bias, ancestry.blocks[0].attn.proj.bias)
    model.train()
    model(images(2))[0].sum().backward()
    assert model.blocks[0].mlp.expansion.map_out_weight.grad is not None


def test_dyt_on_a_frozen_descendant_trains_its_own_parts_and_skips_tokens(ancestry, tmp_path):
    path = learngene_file(ancestry, tmp_path, eps=1e3)
    model = DyTLearngeneViT(learngene=path, img_size=32, arch=dict(num_heads=2), out_type='raw',
                            adapter_cfg=dict(bottleneck=4), target_rate=0.3)
    model.init_weights()
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable == {n for n, _ in model.named_parameters()
                         if '.adapter.' in n or '.dispatchers.' in n}
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=0.05)
    x = images(4)
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
                          'dyt-learngene-vit-mini-p4-h3_vit-mini-eps1_1xb32-8e_digits-32px.py')
    assert cfg.model.type == 'DyTImageClassifier'
    assert cfg.model.backbone.type == 'DyTLearngeneViT'
    backbone = dict(cfg.model.backbone, learngene=learngene_file(ancestry, tmp_path, eps=1e3),
                    arch=dict(num_heads=2), img_size=32)
    with DefaultScope.overwrite_default_scope('mmpretrain'):
        model = MODELS.build(backbone)
    assert isinstance(model, DyTLearngeneViT) and model.dispatch == 'mlp'
