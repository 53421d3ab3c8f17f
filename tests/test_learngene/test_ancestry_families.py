"""Learngenes of the ViT families mmvitdyn's ViT loads (DeiT / ViT-B, DINOv2
with layer scale, with and without registers, OpenAI CLIP with QuickGELU and a pre-norm,
distilled DeiT): with every head its own cluster (eps far below the heads'
MAD gaps) and omega = 1, the descendant computes the ancestry's output; the
learngene records the family, refuses what it cannot reproduce, and reads
version-1 files as the DeiTs they were built from."""
import copy

import pytest
import torch
from mmengine.logging import MMLogger

from helpers.learngene import mad_with_counts, make_ancestry
from helpers.models import TINY_ARCH, images
from mmvitdyn.learngene import (BlockLearngene, Learngene, LearngeneViT, ViTAncestry,
                                build_learngene, condense)
from mmvitdyn.models.layers import LayerScale

C = TINY_ARCH['embed_dims']
# Tiny versions of each family (3 blocks of 4 heads of 8, 32 wide): the ViT
# arguments, the image size, and the options a descendant must share.
FAMILIES = {
    'vit-b': (dict(), 32),
    'dinov2': (dict(patch_size=14, layer_scale_init_value=1e-5), 42),
    'dinov2-reg': (dict(patch_size=14, layer_scale_init_value=1e-5, num_reg_tokens=4), 42),
    'clip':
    (dict(pre_norm=True, norm_cfg=dict(type='LN', eps=1e-5), act_cfg=dict(type='QuickGELU')), 32),
    'deit-distilled': (dict(dist_token=True), 32),
}


def family_ancestry(name: str, num_layers: int = 3):
    """A tiny ancestry of the family whose every family tensor is far from its
    initial value (layer scales of order 1, random prefix tokens, pre-norm
    affine), with FFN pre-activations of order 1 (where GELU and QuickGELU
    differ) and LayerNorm inputs of small variance (where eps matters)."""
    kwargs, size = FAMILIES[name]
    model = make_ancestry(dict(TINY_ARCH, num_layers=num_layers), img_size=size, **kwargs)
    with torch.no_grad():
        model.patch_embed.proj.weight.mul_(0.05)
        for key, param in model.named_parameters():
            if key.endswith(('cls_token', 'dist_token', 'reg_token', 'norm_pre.bias')):
                param.normal_(0, 0.05)
            elif key.endswith(('ls1.gamma', 'ls2.gamma', 'norm_pre.weight')):
                param.uniform_(0.5, 1.5)
            elif key.endswith('mlp.fc1.weight'):
                param.normal_(0, 0.4)
    return model, size


@pytest.fixture(scope='module', params=list(FAMILIES))
def family(request, tmp_path_factory):
    """(name, ancestry, image size, lossless learngene file) of each family."""
    ancestry, size = family_ancestry(request.param)
    path = tmp_path_factory.mktemp(request.param) / 'lossless.pth'
    learngene = build_learngene(ancestry, [images(2, size)], eps=1e-6, out=str(path))
    assert learngene.num_centroids == [4, 4, 4]
    return request.param, ancestry, size, str(path)


def descendant(path, size, **kwargs) -> LearngeneViT:
    model = LearngeneViT(learngene=path, img_size=size, out_type='raw', **kwargs)
    model.init_weights()
    return model.eval()


def test_omega_1_reproduces_the_ancestry(family):
    name, ancestry, size, path = family
    model = descendant(path, size)
    x = images(2, size)
    with torch.no_grad():
        ours, theirs = model(x)[0], ancestry(x)[0]
    torch.testing.assert_close(ours, theirs, rtol=1e-6, atol=1e-6)
    counts = model.parameter_counts()
    assert counts['t_params'] == counts['i_params'] == sum(p.numel() for p in ancestry.parameters())


def test_the_learngene_records_the_family(family):
    name, ancestry, _, path = family
    kwargs, _ = FAMILIES[name]
    recorded = Learngene.load(path).ancestry
    assert recorded['act_cfg'] == kwargs.get('act_cfg', dict(type='GELU'))
    assert recorded['norm_eps'] == kwargs.get('norm_cfg', dict(eps=1e-6))['eps']
    assert recorded['pre_norm'] is kwargs.get('pre_norm', False)
    assert recorded['layer_scale_init_value'] == kwargs.get('layer_scale_init_value')
    assert recorded['num_reg_tokens'] == kwargs.get('num_reg_tokens', 0)
    assert recorded['dist_token'] is kwargs.get('dist_token', False)
    assert f"act_cfg={recorded['act_cfg']!r}" in Learngene.load(path).summary()
    # Plain containers only, as the safe loader reads them.
    torch.load(path, weights_only=True)


def test_a_tied_ffn_group_keeps_the_activation(tmp_path):
    """CLIP's QuickGELU inside a tied FFN run (the learnable expansion) and
    after materialize(): blocks 0 and 1 share their FFN in the ancestry, so
    the group's one FFN reproduces both."""
    ancestry, size = family_ancestry('clip')
    with torch.no_grad():
        ancestry.blocks[1].mlp.load_state_dict(ancestry.blocks[0].mlp.state_dict())
    mad = torch.arange(12.).view(3, 4) * 10
    condense(ancestry, mad, 0, eps=1e-6, ffn_groups=[[0, 1], [2]]).save(str(tmp_path / 'lg.pth'))
    model = descendant(str(tmp_path / 'lg.pth'), size, ffn_sharing='tied')
    assert hasattr(model.blocks[0].mlp, 'expansion')
    x = images(2, size)
    with torch.no_grad():
        theirs = ancestry(x)[0]
        torch.testing.assert_close(model(x)[0], theirs, rtol=1e-6, atol=1e-6)
        torch.testing.assert_close(model.materialize()(x)[0], theirs, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize('method,depth', [('heuristic', 3), ('auto', 6)])
def test_block_learngenes_carry_the_whole_ancestry(tmp_path, method, depth):
    """A block learngene of every block of a DINOv2 ancestry (its last three
    of 3, its first six of 6): the descendant of its depth is the ancestry,
    embeddings, registers, layer scales and final norm included."""
    ancestry, size = family_ancestry('dinov2-reg', num_layers=depth)
    ViTAncestry(ancestry).extract_blocks(method).save(str(tmp_path / 'b.pth'))
    model = descendant(str(tmp_path / 'b.pth'), size, init_mode=method)
    assert isinstance(model.blocks[0].ls1, LayerScale) and model.reg_token.shape == (1, 4, C)
    x = images(2, size)
    with torch.no_grad():
        torch.testing.assert_close(model(x)[0], ancestry(x)[0], rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize(
    'kwargs,match', [
        (dict(act_cfg=dict(type='ReLU')),
         r"MLP activations are \['ReLU'\]; a learngene records one "
         r"act_cfg of type \('GELU', 'QuickGELU'\)"),
        (dict(act_cfg=dict(type='GELU', approximate='tanh')),
         r"activations are \['GELU \(approximate=tanh\)'\]"),
        (dict(layer_cfgs=[{}, dict(norm_cfg=dict(type='LN', eps=1e-5)), {}]),
         r'LayerNorms have eps \[1e-06, 1e-05\]; a learngene records one norm_cfg eps'),
        (dict(layer_cfgs=[{}, dict(layer_scale_init=0.1), {}]),
         r'layer_scale_init_value=None but layer scales in 1 of 3 blocks'),
    ],
    ids=['relu', 'tanh-gelu', 'two-eps', 'some-layer-scales'])
def test_an_ancestry_the_learngene_cannot_reproduce_is_refused(kwargs, match):
    ancestry = make_ancestry(**kwargs)
    with pytest.raises(ValueError, match=match):
        condense(ancestry, mad_with_counts([4, 4, 4], 4), 0)


@pytest.mark.parametrize(
    'option,value,match', [
        ('act_cfg', dict(type='GELU'), r"act_cfg=\{'type': 'GELU'\} differs from the learngene's "
         r"ancestry \(act_cfg=\{'type': 'QuickGELU'\}, "),
        ('pre_norm', False, r"pre_norm=False differs .*\(pre_norm=True, "),
        ('norm_cfg', dict(type='LN', eps=1e-6), r"norm_cfg=.* differs .*'eps': 1e-05\}, "),
    ],
    ids=['act_cfg', 'pre_norm', 'norm_cfg'])
def test_a_descendant_keeps_its_ancestry_s_family(tmp_path, option, value, match):
    ancestry, size = family_ancestry('clip')
    condense(ancestry, mad_with_counts([4, 4, 4], 4), 0).save(str(tmp_path / 'lg.pth'))
    with pytest.raises(ValueError, match=match):
        LearngeneViT(learngene=str(tmp_path / 'lg.pth'), img_size=size, **{option: value})
    # The family's own value is accepted.
    kwargs, _ = FAMILIES['clip']
    LearngeneViT(learngene=str(tmp_path / 'lg.pth'), img_size=size, **{option: kwargs[option]})


# ----------------------------------------------------------- version-1 files
def as_version_1(data: dict) -> dict:
    """A current file's content as mmvitdyn wrote it before the family was
    recorded (version 1): no family keys; a Cluster-Learngene file without
    layer scales, a baseline's without embeddings and final norm."""
    data = copy.deepcopy(data)
    data['version'] = 1
    for key in ('norm_eps', 'act_cfg', 'pre_norm', 'layer_scale_init_value', 'num_reg_tokens',
                'dist_token'):
        del data['ancestry'][key]
    if data['format'] == 'mmvitdyn.learngene':
        del data['layer_scales']
    else:
        del data['embeddings'], data['final_norm']
    return data


@pytest.mark.parametrize('name', ['vit-b', 'deit-distilled'])
def test_a_version_1_learngene_reads_as_a_deit(tmp_path, name):
    ancestry, size = family_ancestry(name)
    learngene = condense(ancestry, mad_with_counts([4, 4, 4], 4), 0, eps=1e-6)
    torch.save(as_version_1(learngene.to_dict()), tmp_path / 'v1.pth')
    loaded = Learngene.load(str(tmp_path / 'v1.pth'))
    assert loaded.ancestry == learngene.ancestry and loaded.layer_scales == [{}] * 3
    x = images(2, size)
    with torch.no_grad():
        torch.testing.assert_close(
            descendant(str(tmp_path / 'v1.pth'), size)(x)[0], ancestry(x)[0], rtol=1e-6, atol=1e-6)


def test_a_version_1_file_with_other_prefix_tokens_is_refused(tmp_path):
    ancestry, _ = family_ancestry('dinov2-reg')
    data = as_version_1(condense(ancestry, mad_with_counts([4, 4, 4], 4), 0).to_dict())
    torch.save(data, tmp_path / 'v1.pth')
    with pytest.raises(
            ValueError,
            match=r"ancestry\.num_extra_tokens=5: a version-1 file records no "
            'family settings'):
        Learngene.load(str(tmp_path / 'v1.pth'))


def test_a_version_1_block_learngene_inherits_its_blocks_only(tmp_path, monkeypatch):
    ancestry, size = family_ancestry('vit-b')
    data = as_version_1(ViTAncestry(ancestry).extract_blocks('heuristic').to_dict())
    assert 'embeddings' not in data
    torch.save(data, tmp_path / 'v1.pth')
    warnings = []
    monkeypatch.setattr(MMLogger.get_current_instance(), 'warning', warnings.append)
    loaded = BlockLearngene.load(str(tmp_path / 'v1.pth'))
    assert warnings == [
        'a version-1 heuristic learngene file holds no embeddings and final norm: descendants '
        'start them at random; rebuild it to inherit them'
    ]
    assert loaded.embeddings == {} and loaded.final_norm == {}
    model = descendant(str(tmp_path / 'v1.pth'), size, init_mode='heuristic')
    assert not torch.equal(model.cls_token, ancestry.cls_token)
    assert torch.equal(model.blocks[2].attn.qkv.weight, ancestry.blocks[2].attn.qkv.weight)
    assert model.parameter_counts()['i_params'] == sum(p.numel()
                                                       for p in ancestry.blocks.parameters())


def test_other_versions_are_refused(tmp_path):
    ancestry, _ = family_ancestry('vit-b')
    data = condense(ancestry, mad_with_counts([4, 4, 4], 4), 0).to_dict()
    for version in (3, '2', True):
        data['version'] = version
        torch.save(data, tmp_path / 'v.pth')
        with pytest.raises(
                ValueError,
                match=rf"has mmvitdyn.learngene version {version!r}; this mmvitdyn "
                'reads version 2, 1'):
            Learngene.load(str(tmp_path / 'v.pth'))
