"""Cluster-Learngene on a Swin ancestry: MAD inside (shifted) windows, per
block clustering, FFN groups within a stage, the LearngeneSwin descendant
(heads with their relative-position-bias columns; lossless at omega = 1),
the learngene file's checks, and build_learngene.py on a tiny Swin."""
import itertools
import math

import pytest
import torch
from mmengine.config import Config
from mmengine.registry import MODELS, init_default_scope
from mmpretrain.models import SwinTransformer
from mmpretrain.models.utils import WindowMSA

from helpers.learngene import broken, mad_with_counts
from helpers.models import images
from helpers.tools import REPO, load_tool
from mmvitdyn.learngene import (LearngeneSwin, SwinLearngene, build_learngene, condense,
                                record_attention_distance)
from mmvitdyn.models.layers.window_msa import HeadWidthWindowMSA

# 16 wide, 2 / 4 heads of 8, 2x2 patches of 32x32 images: 16x16 then 8x8
# maps of 4x4 windows, every second block shifted by 2.
ARCH = dict(embed_dims=16, depths=[2, 2], num_heads=[2, 4])
SWIN_CFG = REPO / 'configs/cluster_learngene/swin-mini-p2-w4_1xb32-20e_digits-32px.py'


def swin(seed=0, **kwargs) -> SwinTransformer:
    """A tiny random Swin whose heads attend differently."""
    torch.manual_seed(seed)
    model = SwinTransformer(
        arch=ARCH,
        img_size=32,
        patch_size=2,
        window_size=4,
        drop_path_rate=0.,
        out_indices=(0, 1),
        **kwargs)
    model.init_weights()
    with torch.no_grad():
        for stage in model.stages:
            for block in stage.blocks:
                block.attn.w_msa.qkv.weight.normal_(0, 0.5)
                block.attn.w_msa.relative_position_bias_table.normal_(0, 1)
                block.ffn.layers[0][0].bias.normal_(0, 0.1)
                block.norm1.weight.uniform_(0.5, 1.5)
    model.eval()  # SwinTransformer.train returns None
    return model


def descendant(path, **kwargs) -> LearngeneSwin:
    model = LearngeneSwin(learngene=str(path), img_size=32, drop_path_rate=0., **kwargs)
    model.init_weights()
    model.eval()
    return model


def learngene_with_counts(ancestry, counts, path):
    """A Swin learngene whose blocks have ``counts`` (per stage) centroids."""
    mad = [mad_with_counts(c, h) for c, h in zip(counts, ARCH['num_heads'])]
    learngene = condense(ancestry, mad, num_images=0, eps=10.)
    assert learngene.num_centroids == [list(c) for c in counts]
    learngene.save(str(path))
    return learngene


# --------------------------------------------------------------------- MAD
def uniform_window_mad(size: int, window: int, shift: int, stride: float) -> float:
    """MAD of attention spread evenly over the patches a query may attend to
    in its window: all of them, or with a cyclic shift only those that were
    neighbours in the image (no wrap-around)."""
    rolled = [(r + shift) % size for r in range(size)]  # image row of each rolled row
    total, queries = 0., 0
    for top, left in itertools.product(range(0, size, window), repeat=2):
        cells = [(r, c) for r in range(top, top + window) for c in range(left, left + window)]
        for qr, qc in cells:
            partners = [
                (r, c) for r, c in cells
                if abs(rolled[r] - rolled[qr]) < window and abs(rolled[c] - rolled[qc]) < window
            ]
            total += sum(stride * math.hypot(r - qr, c - qc) for r, c in partners) / len(partners)
            queries += 1
    return total / queries


def test_mad_inside_shifted_windows():
    ancestry = swin()
    with torch.no_grad():
        for stage in ancestry.stages:
            for block in stage.blocks:  # q = k = 0, no bias: even attention
                block.attn.w_msa.qkv.weight.zero_()
                block.attn.w_msa.qkv.bias.zero_()
                block.attn.w_msa.relative_position_bias_table.zero_()
    recorder = record_attention_distance(ancestry, [images(2), images(1, seed=3)])
    assert recorder.num_images == 3
    mad = recorder.mean()
    for stage, (size, stride) in enumerate(((16, 2), (8, 4))):
        expected = [uniform_window_mad(size, 4, shift, stride) for shift in (0, 2)]
        assert expected[0] != pytest.approx(expected[1])  # the mask matters
        torch.testing.assert_close(
            mad[stage],
            torch.tensor(expected).unsqueeze(1).expand(2, 2 * 2**stage),
            rtol=1e-5,
            atol=1e-5)


def test_mad_needs_whole_windows():
    ancestry = SwinTransformer(
        arch=ARCH, img_size=32, patch_size=2, window_size=4, pad_small_map=True, out_indices=(1, ))
    # 24 px: 12x12 patches (whole windows), then 6x6 (not).
    with pytest.raises(
            RuntimeError,
            match='stage 1 layer 0: its 6x6 feature map is not made of '
            'whole 4x4 windows'):
        record_attention_distance(ancestry, [images(1, size=24)])


def test_head_width_window_msa_is_window_msa_at_the_same_width():
    torch.manual_seed(0)
    theirs = WindowMSA(16, (4, 4), 2)
    torch.nn.init.normal_(theirs.relative_position_bias_table)
    ours = HeadWidthWindowMSA(16, (4, 4), 2, head_dim=8)
    ours.load_state_dict(theirs.state_dict())
    x = torch.randn(8, 16, 16)
    mask = torch.zeros(4, 16, 16)
    mask[1, :8, 8:] = mask[1, 8:, :8] = -100.
    for m in (None, mask):
        torch.testing.assert_close(ours(x, mask=m), theirs(x, mask=m))
    narrow = HeadWidthWindowMSA(16, (4, 4), 1, head_dim=8)
    assert narrow.qkv.weight.shape == (24, 16) and narrow(x).shape == (8, 16, 16)


# ------------------------------------------------------- learngene, descendant
def test_lossless_inheritance_at_omega_1(tmp_path):
    ancestry = swin()
    learngene = build_learngene(ancestry, [images()], eps=1e-6, out=str(tmp_path / 'lg.pth'))
    assert learngene.num_centroids == [[2, 2], [4, 4]]
    model = descendant(tmp_path / 'lg.pth')
    x = images(2)
    with torch.no_grad():
        for ours, theirs in zip(model(x), ancestry(x)):
            torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)
    counts = model.parameter_counts()
    assert counts['t_params'] == counts['i_params'] == sum(p.numel() for p in ancestry.parameters())


def test_heads_take_their_centroid_with_its_relative_position_bias(tmp_path):
    ancestry = swin()
    learngene = learngene_with_counts(ancestry, [(2, 1), (3, 2)], tmp_path / 'lg.pth')
    model = descendant(tmp_path / 'lg.pth', arch=dict(num_heads=[1, 4]))
    assert [s.blocks[0].attn.w_msa.num_heads for s in model.stages] == [1, 4]
    for s, (stage, theirs) in enumerate(zip(model.stages, ancestry.stages)):
        for b, (block, their_block) in enumerate(zip(stage.blocks, theirs.blocks)):
            layer = learngene.stages[s].layers[b]
            ours, their = block.attn.w_msa, their_block.attn.w_msa
            h, c = ours.num_heads, 16 * 2**s
            qkv = ours.qkv.weight.view(3, h, 8, c)
            their_qkv = their.qkv.weight.view(3, 2 * 2**s, 8, c)
            for head in range(h):
                source = layer.clusters[head % layer.num_centroids].representative
                assert torch.equal(qkv[:, head], their_qkv[:, source])
                assert torch.equal(ours.relative_position_bias_table[:, head],
                                   their.relative_position_bias_table[:, source])
                assert torch.equal(
                    ours.proj.weight.view(c, h, 8)[:, head],
                    their.proj.weight.view(c, -1, 8)[:, source])
            assert torch.equal(ours.proj.bias, their.proj.bias)
    x = images(2)
    assert model(x)[1].shape == (2, 32, 8, 8)


def test_ffn_groups_stay_within_a_stage(tmp_path):
    ancestry = swin()
    # One centroid in every block: each stage's two FFNs form one group, the
    # stages are not joined (their widths differ).
    learngene = learngene_with_counts(ancestry, [(1, 1), (1, 1)], tmp_path / 'lg.pth')
    assert [[g.layers for g in s.ffn_groups] for s in learngene.stages] == [[(0, 1)], [(0, 1)]]
    model = descendant(tmp_path / 'lg.pth', arch=dict(omega=2))
    for stage, theirs in zip(model.stages, ancestry.stages):
        first = theirs.blocks[0].ffn.layers[1].weight
        for block in stage.blocks:  # independent copies of the group's (first) FFN
            assert torch.equal(block.ffn.layers[1].weight, first)
        assert stage.blocks[0].ffn.layers[1].weight is not stage.blocks[1].ffn.layers[1].weight
        if theirs.downsample is not None:
            assert torch.equal(stage.downsample.reduction.weight,
                               theirs.downsample.reduction.weight)


def test_loaded_descendant_claims_no_inherited_parameters(tmp_path):
    learngene_with_counts(swin(), [(1, 2), (2, 4)], tmp_path / 'lg.pth')
    trained = descendant(tmp_path / 'lg.pth')
    assert trained.parameter_counts()['i_params'] == trained.parameter_counts()['t_params']
    torch.save(
        dict(state_dict={
            f'backbone.{k}': v
            for k, v in trained.state_dict().items()
        }), tmp_path / 'd.pth')
    loaded = descendant(
        tmp_path / 'lg.pth',
        init_cfg=dict(type='Pretrained', checkpoint=str(tmp_path / 'd.pth'), prefix='backbone.'))
    assert loaded.parameter_counts()['i_params'] == 0
    resumed = descendant(tmp_path / 'lg.pth')
    resumed.load_state_dict(trained.state_dict())
    assert resumed.parameter_counts()['i_params'] == 0


@pytest.mark.parametrize('kwargs,match', [
    (dict(arch=dict(omega=3)), r'omega=3 cannot form heads: H_a / omega = 2 / 3 = 0.666667'),
    (dict(arch=dict(num_heads=[2])), r'num_heads=\[2\] must be one int >= 1 per stage \(2\)'),
    (dict(arch=dict(depths=[1, 1])), r"arch must be a dict with 'num_heads' or 'omega'"),
    (dict(window_size=7), "window_size=7 differs from the learngene's 4"),
])
def test_bad_descendants_name_the_problem(tmp_path, kwargs, match):
    learngene_with_counts(swin(), [(1, 2), (2, 4)], tmp_path / 'lg.pth')
    with pytest.raises(ValueError, match=match):
        LearngeneSwin(learngene=str(tmp_path / 'lg.pth'), img_size=32, **kwargs)


@pytest.mark.parametrize('where,value,match', [
    (('stages', 1, 'layers', 0, 'rel_pos_bias'), ..., r'stages\[1\]\.layers\[0\]\.rel_pos_bias '
     'is missing'),
    (('stages', 0, 'layers', 1, 'rel_pos_bias'), torch.zeros(
        1, 48), r'stages\[0\]\.layers\[1\]\.rel_pos_bias has shape \(1, 48\), expected \(2, 49\)'),
    (('stages', 0, 'downsample', 'reduction.weight'), ..., r'stages\[0\]\.downsample\.'
     r'reduction\.weight is missing'),
    (('stages', 1, 'mad'), torch.full((2, 4), float('nan')), r'stages\[1\]\.mad has non-finite'),
    (('stages', 0, 'layers', 0, 'clusters', 0, 'members'), [0, 5], r'holds 5; heads are ints '
     r'in 0\.\.1'),
    (('stages', 1, 'ffn_groups', 0, 'weights', 'fc2.bias'), ..., r'stages\[1\]\.ffn_groups\[0\]'
     r'\.weights\.fc2\.bias is missing'),
    (('ancestry', 'depths'), 2, r'ancestry\.depths=2 must be a list with one int per stage'),
    (('final_norms', 'norm1'), ..., r'final_norms\.norm1 is missing'),
    (('ancestry', 'out_indices'), 1, r'ancestry\.out_indices must be a list, got int'),
    (('ancestry', 'patch_resolution'), None, r'ancestry\.patch_resolution=None must be '
     r'\[rows, cols\]'),
])
def test_broken_swin_learngene_names_the_field(tmp_path, where, value, match):
    learngene = learngene_with_counts(swin(), [(1, 2), (2, 4)], tmp_path / 'lg.pth')
    torch.save(broken(learngene.to_dict(), where, value), tmp_path / 'broken.pth')
    with pytest.raises(ValueError, match=match):
        SwinLearngene.load(str(tmp_path / 'broken.pth'))


# -------------------------------------------------------------------- tool
def test_build_learngene_tool_on_a_tiny_swin(data_workspace, tmp_path, monkeypatch):
    """The digits Swin config's val set (generated), through the tool."""
    monkeypatch.chdir(data_workspace)
    init_default_scope('mmpretrain')
    cfg = Config.fromfile(SWIN_CFG)
    torch.manual_seed(0)
    model = MODELS.build(dict(cfg.model, data_preprocessor=cfg.data_preprocessor))
    model.init_weights()
    torch.save(dict(state_dict=model.state_dict()), tmp_path / 'swin.pth')
    out = tmp_path / 'lg.pth'
    load_tool('learngene/build_learngene.py').main([
        str(SWIN_CFG),
        str(tmp_path / 'swin.pth'), '--out',
        str(out), '--num-images', '16', '--batch-size', '8', '--eps', '0.5', '--device', 'cpu'
    ])
    learngene = SwinLearngene.load(str(out))
    assert learngene.settings['num_images'] == 16
    assert [tuple(s.mad.shape) for s in learngene.stages] == [(2, 2), (2, 4)]
    assert (tmp_path / 'lg_mad.png').is_file()
    backbone = descendant(out, arch=dict(omega=2))
    assert backbone(images(1))[-1].shape == (1, 32, 8, 8)
