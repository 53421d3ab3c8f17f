"""Per-image DyT FLOPs from the active tokens."""
import pytest
import torch
from torch import nn

from mmvitdyn.analysis import DyTFlopCounter, calibrate_gates, count_flops, part_rates
from mmvitdyn.models import DyTViT

ARCH = dict(embed_dims=64, num_layers=3, num_heads=4, feedforward_channels=128)
PATCHES = 8 * 8
VARIANTS = ['mlp', 'attn', 'attn_mlp', 'layer']


def build(dispatch):
    torch.manual_seed(0)
    model = DyTViT(arch=ARCH, img_size=32, patch_size=4, dispatch=dispatch).eval()
    for block in model.dyt_blocks():  # spread the gates: rates differ per image
        for dispatcher in block.dispatchers.values():
            nn.init.normal_(dispatcher.gate.weight, std=0.3)
    return model


def images(batch=3):
    torch.manual_seed(1)
    return torch.randn(batch, 3, 32, 32)


@pytest.mark.parametrize('dispatch', VARIANTS)
def test_equals_a_trace_of_each_image_through_the_packed_path(dispatch):
    """At batch 1 the packed path computes the active tokens only: its trace is the truth."""
    model, x = build(dispatch), images()
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
    dense = DyTViT(arch=ARCH, img_size=32, patch_size=4, dispatch=None).eval()
    num_gates = sum(len(b.dispatchers) for b in model.dyt_blocks())
    # Each gate is a Linear(C, 1) over every token (class token included).
    expected = count_flops(dense, x[:1]) + num_gates * (PATCHES + 1) * ARCH['embed_dims']
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
    c, hidden = ARCH['embed_dims'], ARCH['feedforward_channels']
    norm = count_flops(nn.LayerNorm(c), torch.zeros(1, 1, c))
    per_token = ARCH['num_layers'] * (2 * c * hidden + norm)
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
