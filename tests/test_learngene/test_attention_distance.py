import math

import pytest
import torch

from helpers.learngene import make_ancestry
from helpers.models import images
from mmvitdyn.learngene import (AttentionDistanceRecorder, attention_distance, patch_distances,
                                record_attention_distance)


def brute_force_mad(model, x):
    """MAD by explicit loops over images, heads and patch pairs."""
    with torch.no_grad():
        tokens, (h, w) = model.embed(x)
        grid = [(i // w, i % w) for i in range(h * w)]
        mads = []
        for block in model.blocks:
            attn = block.attn
            b, t, _ = tokens.shape
            qkv = attn.qkv(block.norm1(tokens)).reshape(b, t, 3, attn.num_heads, attn.head_dim)
            layer = torch.zeros(attn.num_heads, dtype=torch.float64)
            for head in range(attn.num_heads):
                q, k = qkv[:, :, 0, head], qkv[:, :, 1, head]
                probs = (q @ k.transpose(1, 2) / math.sqrt(attn.head_dim)).softmax(-1)
                for image in range(b):
                    total = 0.
                    for i in range(h * w):
                        for j in range(h * w):
                            dist = model.patch_size * math.dist(grid[i], grid[j])
                            total += float(probs[image, 1 + i, 1 + j]) * dist
                    layer[head] += total / (h * w)
            mads.append(layer / b)
            tokens = block(tokens)
        return torch.stack(mads).float()


def test_matches_brute_force_double_loop():
    model = make_ancestry(img_size=24, patch_size=8)  # 3x3 patches
    x = images(3, 24)
    expected = brute_force_mad(model, x)
    mad = record_attention_distance(model, [x[:2], x[2:]]).mean()
    assert mad.shape == (3, 4)
    torch.testing.assert_close(mad, expected, rtol=1e-5, atol=1e-4)
    # Heads really differ, so the comparison is not between constants.
    assert mad.std() > 0.1


def test_analytic_values_on_hand_made_attention():
    # 2x2 patches of 16 px plus a class token column.
    dist = patch_distances((2, 2), 16, num_prefix_tokens=1)
    assert dist.shape == (4, 5) and dist[:, 0].abs().sum() == 0
    uniform = torch.full((1, 1, 4, 5), 0.25)
    uniform[..., 0] = 0.
    local = torch.cat([torch.zeros(4, 1), torch.eye(4)], 1)[None, None]
    # Half of the attention on the class token, not renormalised.
    half_cls = uniform.clone() * 0.5
    half_cls[..., 0] = 0.5
    mad = attention_distance(torch.cat([uniform, local, half_cls], 1), dist)
    one_patch = (0 + 16 + 16 + 16 * math.sqrt(2)) / 4
    torch.testing.assert_close(mad, torch.tensor([[one_patch, 0., one_patch / 2]]))


def test_rectangular_grid_distances():
    dist = patch_distances((2, 3), 10)
    # Patch 0 at (0, 0), patch 5 at (1, 2).
    assert dist[0, 5] == pytest.approx(10 * math.sqrt(5))
    assert torch.equal(dist, dist.T)


def mad_in_plain_torch(model, x):
    """(layers, heads) MAD of ``model`` over images ``x``: every image's
    attention of patch queries to patch keys (prefix tokens dropped, rows not
    renormalised) times the pixel distance of the patches, summed over keys,
    averaged over queries and images."""
    with torch.no_grad():
        tokens, (h, w) = model.embed(x)
        rows, cols = torch.meshgrid(torch.arange(h), torch.arange(w), indexing='ij')
        grid = torch.stack([rows.flatten(), cols.flatten()], -1).float()
        dist = model.patch_size * torch.cdist(grid, grid)
        p = model.num_prefix_tokens
        mads = []
        for block in model.blocks:
            attn = block.attn
            qkv = attn.qkv(block.norm1(tokens)).unflatten(-1, (3, attn.num_heads, attn.head_dim))
            q, k = qkv[:, :, 0].transpose(1, 2), qkv[:, :, 1].transpose(1, 2)
            probs = (q @ k.transpose(-1, -2) / math.sqrt(attn.head_dim)).softmax(-1)
            mads.append((probs[..., p:, p:] * dist).sum(-1).mean((0, 2)))
            tokens = block(tokens)
        return torch.stack(mads)


def test_recorder_averages_over_images_and_removes_hooks():
    model = make_ancestry()
    # Batches of 1 and 3 images whose MAD differ (the first is brighter): the
    # mean is over images, not over batches.
    x = torch.cat([4 * images(1), images(3, seed=2)])
    assert (mad_in_plain_torch(model, x[:1]) - mad_in_plain_torch(model, x[1:])).abs().max() > 0.1
    recorder = AttentionDistanceRecorder(model)
    with torch.no_grad(), recorder.recording():
        model(x[:1])
        model(x[1:])
    assert recorder.num_images == 4
    torch.testing.assert_close(recorder.mean(), mad_in_plain_torch(model, x), rtol=1e-5, atol=1e-5)
    assert not any(a.qkv._forward_hooks for a in recorder.attentions)
    assert not model.patch_embed._forward_hooks
    with torch.no_grad():
        model(x)  # outside the context: not recorded
    assert recorder.num_images == 4


def test_other_input_size_uses_its_own_grid():
    model = make_ancestry()
    mad_32 = record_attention_distance(model, [images(2, 32)]).mean()
    mad_64 = record_attention_distance(model, [images(2, 64)]).mean()
    # Four times the patches: the far ones are farther away.
    assert (mad_64.mean() > mad_32.mean() * 1.5)


def test_no_images_is_an_error():
    recorder = AttentionDistanceRecorder(make_ancestry())
    with pytest.raises(RuntimeError, match='no images'):
        recorder.mean()


def test_needs_mmvitdyn_attention():
    with pytest.raises(ValueError, match='no mmvitdyn Attention'):
        AttentionDistanceRecorder(torch.nn.Linear(2, 2))


def test_other_attention_kinds_are_refused():
    from mmvitdyn.models.layers.rel_pos_attention import RelPosAttention
    model = make_ancestry()
    model.blocks[1].attn.__class__ = RelPosAttention
    with pytest.raises(ValueError, match=r"global softmax attention .*\['RelPosAttention'\]"):
        AttentionDistanceRecorder(model)
