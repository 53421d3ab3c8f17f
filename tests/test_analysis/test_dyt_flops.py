"""Per-image DyT FLOPs from the active tokens."""
import pytest
import torch
from torch import nn

from helpers.dyt import spread_gates
from helpers.models import IMG_SIZE, TINY_ARCH, images, tiny
from mmvitdyn.analysis import DyTFlopCounter, calibrate_gates, count_flops, part_rates
from mmvitdyn.models import DyTViT

PATCH = 4  # an 8 x 8 grid: enough tokens for rates to differ per image
PATCHES = (IMG_SIZE // PATCH)**2
VARIANTS = ['mlp', 'attn', 'attn_mlp', 'layer']


def build(dispatch):
    model = tiny(DyTViT, patch_size=PATCH, dispatch=dispatch)
    spread_gates(model, std=0.3, bias=0.1)  # rates differ per image
    return model


@pytest.mark.parametrize('dispatch', VARIANTS)
def test_equals_a_trace_of_each_image_through_the_packed_path(dispatch):
    """At batch 1 the packed path computes the active tokens only: its trace is the truth."""
    model, x = build(dispatch), images(3)
    counter = DyTFlopCounter(model, x[:1])
    with torch.no_grad():
        model(x)
    flops = counter.from_last_forward()
    rates = part_rates(model.dispatch_masks())[1].mean(0)
    assert ((rates > 0.1) & (rates < 0.9)).all()
    assert len(set(flops.tolist())) == len(x)  # each image its own count
    traced = [count_flops(model, x[i:i + 1]) for i in range(len(x))]
    assert flops.tolist() == traced


@pytest.mark.parametrize('dispatch', VARIANTS)
def test_all_active_equals_the_dense_model_plus_dispatchers(dispatch):
    model, x = build(dispatch), images(2)
    calibrate_gates(model, x, 1.0)
    counter = DyTFlopCounter(model, x[:1])
    with torch.no_grad():
        model(x)
    dense = tiny(DyTViT, patch_size=PATCH, dispatch=None)
    num_gates = sum(len(b.dispatchers) for b in model.dyt_blocks())
    # Each gate is a Linear(C, 1) over every token (class token included).
    expected = count_flops(dense, x[:1]) + num_gates * (PATCHES + 1) * TINY_ARCH['embed_dims']
    assert counter.static_flops == expected
    assert counter.from_last_forward().tolist() == [expected] * 2


def test_mlp_dispatch_flops_fall_linearly_with_active_tokens():
    model, x = build('mlp'), images(1)
    counter = DyTFlopCounter(model, x)
    flops = []
    for active in (0, 16, 32, 48, 64):
        calibrate_gates(model, x, active / PATCHES)
        with torch.no_grad():
            model(x)
        assert model.activation_rates()['act_rate'] == active / PATCHES
        flops.append(float(counter.from_last_forward()))
    # One more active token in every block costs its MLP and the norm before it.
    c, hidden = TINY_ARCH['embed_dims'], TINY_ARCH['feedforward_channels']
    norm = count_flops(nn.LayerNorm(c), torch.zeros(1, 1, c))
    per_token = TINY_ARCH['num_layers'] * (2 * c * hidden + norm)
    steps = [b - a for a, b in zip(flops, flops[1:])]
    assert steps == [16 * per_token] * 4
    assert flops[-1] == counter.static_flops


def test_calibration_reaches_the_rate_in_every_part():
    model, x = build('attn_mlp'), images(4)
    calibrate_gates(model, x, 0.25)
    with torch.no_grad():
        model(x)
    rates = model.activation_rates()
    assert all(v == 0.25 for k, v in rates.items()), rates


def test_rejects_batches_and_non_dyt_models():
    with pytest.raises(ValueError, match='batch 1'):
        DyTFlopCounter(build('mlp'), images(2))
    with pytest.raises(TypeError, match='no DyTViT'):
        DyTFlopCounter(nn.Linear(2, 2), images(1))
    with pytest.raises(ValueError, match='training mode'):
        DyTFlopCounter(build('mlp').train(), images(1))
