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
def window_mad_by_hand(attn, query: torch.Tensor, hw_shape, stride: float) -> torch.Tensor:
    """(heads, ) MAD of one block's (shifted) window attention
    (``ShiftWindowMSA``) on its input ``query`` (B, h*w, C), averaged over
    every query patch of every image, window by window. Cell (r, c) of the
    window at (top, left) of the rolled map is image patch ((top + r + shift)
    % h, (left + c + shift) % w); in a shifted window, patches that were not
    neighbours in the image get -100 added, as Swin's mask does. The logit of
    query cell p and key cell q is q_p . k_q / sqrt(D) plus the bias table
    row of their offset (dr + W - 1) * (2W - 1) + (dc + W - 1)."""
    msa, window, shift = attn.w_msa, attn.window_size, attn.shift_size
    b, _, c = query.shape
    h, w = hw_shape
    heads = msa.num_heads
    d = c // heads
    qkv = msa.qkv(query.view(b, h, w, c)).view(b, h, w, 3, heads, d)
    q, k = qkv[..., 0, :, :], qkv[..., 1, :, :]  # (B, h, w, heads, D)
    cells = list(itertools.product(range(window), repeat=2))
    offsets = [[(pr - r + window - 1) * (2 * window - 1) + (pc - col + window - 1)
                for r, col in cells] for pr, pc in cells]
    bias = msa.relative_position_bias_table[torch.tensor(offsets)].permute(2, 0, 1)
    distances = torch.tensor([[stride * math.hypot(pr - r, pc - col) for r, col in cells]
                              for pr, pc in cells])
    total = torch.zeros(heads, dtype=torch.float64)
    for top, left in itertools.product(range(0, h, window), range(0, w, window)):
        rows = [(top + r + shift) % h for r, _ in cells]
        cols = [(left + col + shift) % w for _, col in cells]
        logits = torch.einsum('bphd,bnhd->bhpn', q[:, rows, cols], k[:, rows, cols])
        logits = logits / math.sqrt(d) + bias
        if shift:
            apart = [[
                abs(rows[i] - rows[j]) >= window or abs(cols[i] - cols[j]) >= window
                for j in range(len(cells))
            ] for i in range(len(cells))]
            logits = logits - 100. * torch.tensor(apart, dtype=logits.dtype)
        total += (logits.softmax(-1) * distances).sum((0, 2, 3)).double()
    return total / (b * h * w)


def test_mad_inside_shifted_windows():
    """Against the MAD by hand of non-uniform attention (q, k and the
    relative-position bias of order 1): a misplaced bias entry, a wrong
    shift or mask, or a distance of the wrong cell changes it."""
    ancestry = swin()
    x = torch.cat([images(2), images(1, seed=3)])
    inputs = []
    hooks = [
        block.attn.register_forward_pre_hook(lambda m, args: inputs.append((m, *args)))
        for stage in ancestry.stages for block in stage.blocks
    ]
    with torch.no_grad():
        ancestry(x)
        for hook in hooks:
            hook.remove()
        expected = [
            torch.stack([
                window_mad_by_hand(*inputs[2 * stage + layer], stride=2 * 2**stage)
                for layer in range(2)
            ]).float() for stage in range(2)
        ]
    recorder = record_attention_distance(ancestry, [x[:2], x[2:]])
    assert recorder.num_images == 3
    mad = recorder.mean()
    for stage in range(2):
        torch.testing.assert_close(mad[stage], expected[stage], rtol=1e-5, atol=1e-4)
        # Heads and blocks (unshifted, shifted) attend differently (by pixels).
        assert expected[stage].std() > 0.2, expected[stage]


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


# ------------------------------------------------------------ tied FFN groups
# mmcv's FFN of a Swin block: fc1 is layers.0.0, fc2 layers.1.
FFN_NAMES = ('layers.0.0.weight', 'layers.0.0.bias', 'layers.1.weight', 'layers.1.bias')
# The same tensors in a group's FFNExpansion (W).
FFN_ATTRS = ('fc1_weight', 'fc1_bias', 'fc2_weight', 'fc2_bias')


def ffn_state(block) -> dict:
    return {name: block.ffn.get_parameter(name) for name in FFN_NAMES}


def grouped_swin():
    """``swin()`` with FFNs that matter (weights of std 0.3) and non-zero
    biases everywhere (g's ReLUs see no 0)."""
    ancestry = swin()
    with torch.no_grad():
        for stage in ancestry.stages:
            for block in stage.blocks:
                block.ffn.layers[0][0].weight.normal_(0, 0.3)
                block.ffn.layers[1].weight.normal_(0, 0.3)
                block.ffn.layers[1].bias.normal_(0, 0.1)
    return ancestry


def test_tied_ffns_start_as_the_group_ffn(tmp_path):
    ancestry = grouped_swin()
    # One centroid per block: each stage's two blocks form one FFN group.
    learngene_with_counts(ancestry, [(1, 1), (1, 1)], tmp_path / 'lg.pth')
    tied = descendant(tmp_path / 'lg.pth', arch=dict(omega=2), ffn_sharing='tied')
    independent = descendant(tmp_path / 'lg.pth', arch=dict(omega=2))
    supplied = tied.ffn_tensors()
    for s, stage in enumerate(tied.stages):
        # One W per group, held by its first block; no block's FFN holds a weight.
        assert [dict(b.ffn.layers.named_parameters()) for b in stage.blocks] == [{}, {}]
        assert ['expansion' in b.ffn._modules for b in stage.blocks] == [True, False]
        group_ffn = ffn_state(ancestry.stages[s].blocks[0])
        for b in range(2):
            for name in FFN_NAMES:
                assert torch.equal(supplied[f'stages.{s}.blocks.{b}.ffn.{name}'], group_ffn[name])
    assert len(supplied) == 2 * 2 * 4
    x = images(2)
    with torch.no_grad():
        for ours, theirs in zip(tied(x), independent(x)):
            assert torch.equal(ours, theirs)


def test_gradients_reach_the_shared_ffn_and_its_map(tmp_path):
    """At g = identity, dL/dW is the sum over the group of the independent
    copies' gradients G_t, and g's gradients follow from the chain rule of
    g(w) = A relu(a w + b) + c with a = (1, -1), b = 0, A_t = (1, -1), c = 0."""
    learngene_with_counts(grouped_swin(), [(1, 1), (1, 1)], tmp_path / 'lg.pth')
    models = {}
    for mode in ('tied', 'independent'):
        model = descendant(tmp_path / 'lg.pth', arch=dict(omega=2), ffn_sharing=mode).double()
        model.train()  # SwinTransformer.train returns None
        outs = model(images(2).double())
        targets = torch.randn(outs[-1].shape, generator=torch.Generator().manual_seed(0))
        (outs[-1] * targets.double()).sum().backward()
        models[mode] = model
    tied, free = models['tied'], models['independent']
    for s in range(2):
        expansion = tied.stages[s].blocks[0].ffn.expansion
        w = {name: getattr(expansion, attr) for name, attr in zip(FFN_NAMES, FFN_ATTRS)}
        g = [{
            name: p.grad
            for name, p in ffn_state(free.stages[s].blocks[t]).items()
        } for t in range(2)]
        for name, attr in zip(FFN_NAMES, FFN_ATTRS):
            torch.testing.assert_close(getattr(expansion, attr).grad, g[0][name] + g[1][name])
        pos = {n: (v > 0).double() for n, v in w.items()}
        neg = {n: (v < 0).double() for n, v in w.items()}
        for t in range(2):
            out_weight = torch.stack([
                sum((g[t][n] * w[n].detach().clamp(min=0)).sum() for n in FFN_NAMES),
                sum((g[t][n] * (-w[n].detach()).clamp(min=0)).sum() for n in FFN_NAMES)
            ])
            torch.testing.assert_close(expansion.map_out_weight.grad[t], out_weight)
            torch.testing.assert_close(expansion.map_out_bias.grad[t],
                                       sum(g[t][n].sum() for n in FFN_NAMES))
        total = {n: g[0][n] + g[1][n] for n in FFN_NAMES}
        hidden_bias = torch.stack([
            sum((total[n] * pos[n]).sum() for n in FFN_NAMES), -sum(
                (total[n] * neg[n]).sum() for n in FFN_NAMES)
        ])
        hidden_weight = torch.stack([
            sum((total[n] * w[n].detach() * pos[n]).sum() for n in FFN_NAMES), -sum(
                (total[n] * w[n].detach() * neg[n]).sum() for n in FFN_NAMES)
        ])
        torch.testing.assert_close(expansion.map_hidden_bias.grad, hidden_bias)
        torch.testing.assert_close(expansion.map_hidden_weight.grad, hidden_weight)
        assert expansion.map_out_weight.grad.abs().min() > 0.1
        assert expansion.map_hidden_weight.grad.abs().min() > 0.1


def test_materialized_tied_swin_is_a_plain_swin_with_the_same_outputs(tmp_path):
    ancestry = grouped_swin()
    learngene_with_counts(ancestry, [(1, 1), (1, 1)], tmp_path / 'lg.pth')
    model = descendant(tmp_path / 'lg.pth', ffn_sharing='tied')  # omega = 1: Swin's heads
    torch.manual_seed(1)
    with torch.no_grad():
        for stage in model.stages:  # every block's W_t its own
            stage.blocks[0].ffn.expansion.map_out_weight.normal_()
            stage.blocks[0].ffn.expansion.map_hidden_bias.fill_(0.01)
    counts = model.parameter_counts()
    x = images(2)
    with torch.no_grad():
        expected = model(x)
        w_t = [b.ffn.layers[1].weight for b in model.materialize().stages[0].blocks]
        assert not torch.equal(w_t[0], w_t[1])
        for ours, theirs in zip(model(x), expected):
            torch.testing.assert_close(ours, theirs)
    assert model.ffn_sharing == 'independent'
    assert not any('expansion' in name for name, _ in model.named_parameters())
    # T-Params counted what the deployed model holds.
    assert counts['t_params'] == sum(p.numel() for p in model.parameters())
    assert model.parameter_counts()['i_params'] == counts['i_params']
    plain = SwinTransformer(arch=ARCH, img_size=32, patch_size=2, window_size=4, out_indices=(0, 1))
    plain.load_state_dict(model.state_dict())
    plain.eval()
    independent = descendant(tmp_path / 'lg.pth')
    independent.load_state_dict(model.state_dict())
    with torch.no_grad():
        for other in (plain, independent):
            for ours, theirs in zip(other(x), expected):
                torch.testing.assert_close(ours, theirs)


# FFN of stage 0 (16 -> 64 -> 16) and g of a group of T = 2 blocks: a, b in
# R^2, A in R^(2x2), c in R^2.
STAGE0_FFN = 16 * 64 + 64 + 64 * 16 + 16
MAP = 2 + 2 + 2 * 2 + 2


@pytest.mark.parametrize('ffn_sharing,free', [('independent', 0), ('tied', STAGE0_FFN - MAP)])
def test_parameter_counts_of_tied_groups_by_hand(tmp_path, ffn_sharing, free):
    # Stage 0: one group of both blocks; stage 1: 2 and 4 centroids, no group.
    ancestry = grouped_swin()
    learngene_with_counts(ancestry, [(1, 1), (2, 4)], tmp_path / 'lg.pth')
    model = descendant(tmp_path / 'lg.pth', ffn_sharing=ffn_sharing)
    assert len(model.tied_groups) == (ffn_sharing == 'tied')
    # omega = 1: the descendant deploys a plain Swin of the ancestry's shape, all inherited.
    t_params = sum(p.numel() for p in ancestry.parameters())
    assert model.parameter_counts() == dict(
        t_params=t_params, i_params=t_params, trainable=t_params - free)


def test_a_checkpoint_of_the_other_ffn_sharing_is_refused(tmp_path):
    learngene_with_counts(grouped_swin(), [(1, 1), (1, 1)], tmp_path / 'lg.pth')
    tied = descendant(tmp_path / 'lg.pth', ffn_sharing='tied')
    independent = descendant(tmp_path / 'lg.pth')
    with pytest.raises(
            ValueError,
            match=r"in blocks \['stages.0.blocks.0', 'stages.1.blocks.0'\]"
            r", this LearngeneSwin \(ffn_sharing='independent'\) in \[\]"):
        independent.load_state_dict(tied.state_dict(), strict=False)
    with pytest.raises(
            ValueError,
            match=r"in blocks \[\], this LearngeneSwin "
            r"\(ffn_sharing='tied'\) in \['stages.0.blocks.0', 'stages.1.blocks.0'\]"):
        tied.load_state_dict(independent.state_dict(), strict=False)
    resumed = descendant(tmp_path / 'lg.pth', ffn_sharing='tied')
    resumed.load_state_dict(tied.state_dict())
    assert resumed.parameter_counts()['i_params'] == 0
    with pytest.raises(ValueError, match='with_cp=True recomputes blocks'):
        LearngeneSwin(learngene=str(tmp_path / 'lg.pth'), ffn_sharing='tied', with_cp=True)


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
    (dict(ffn_sharing='shared'), r"ffn_sharing='shared' is not one of \('tied', 'independent'\)"),
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
    # The tool loads the checkpoint in Swin's own keys: the patch embedding is
    # the checkpoint's (it once went through the ViT renames and stayed random).
    for key, tensor in learngene.embeddings.items():
        assert torch.equal(tensor, model.state_dict()[f'backbone.patch_embed.{key}']), key
    assert [tuple(s.mad.shape) for s in learngene.stages] == [(2, 2), (2, 4)]
    assert (tmp_path / 'lg_mad.png').is_file()
    backbone = descendant(out, arch=dict(omega=2))
    assert backbone(images(1))[-1].shape == (1, 32, 8, 8)
