"""Static FLOPs: mmengine's counter plus the attention matmuls it cannot see."""
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from helpers.models import TINY_ARCH, tiny
from mmvitdyn.analysis import count_flops, flop_analyzer
from mmvitdyn.models import DyTViT, ViT


class Sdpa(nn.Module):

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v)


def test_sdpa_counts_both_matmuls_for_any_shapes():
    q, k, v = torch.zeros(2, 3, 5, 8), torch.zeros(2, 3, 7, 8), torch.zeros(2, 3, 7, 4)
    # q @ k^T: 2*3*5*7*8, weights @ v: 2*3*5*7*4
    assert count_flops(Sdpa(), (q, k, v)) == 2 * 3 * 5 * 7 * (8 + 4)


def test_small_vit_matches_an_analytic_count():
    c, layers, heads, hidden = (
        TINY_ARCH[k] for k in ('embed_dims', 'num_layers', 'num_heads', 'feedforward_channels'))
    tokens = 1 + 8 * 8
    model = tiny(patch_size=4)  # 32 x 32 images: an 8 x 8 grid
    by_op = flop_analyzer(model, (torch.zeros(1, 3, 32, 32), )).by_operator()
    assert by_op['scaled_dot_product_attention'] == layers * 2 * heads * tokens**2 * (c // heads)
    assert by_op['linear'] == layers * tokens * (c * 3 * c + c * c + 2 * c * hidden)
    assert by_op['conv'] == 8 * 8 * c * 3 * 4 * 4


@pytest.mark.parametrize(
    'model, gflops', [
        (lambda: ViT(arch='base'), 17.58),
        (lambda: DyTViT(arch='base', dispatch=None, adapter_cfg=dict(bottleneck=64)), 17.81),
    ],
    ids=['vit-b16', 'adaptformer-vit-b16-d64'])
def test_vit_b16_at_224_reference_counts(model, gflops):
    flops = count_flops(model().eval(), torch.zeros(1, 3, 224, 224))
    assert flops == pytest.approx(gflops * 1e9, rel=0.005)


@pytest.mark.parametrize('num_experts', [4, 8])
def test_moe_adapter_costs_about_one_adapter(num_experts):
    """The per-image merge of the expert weights is counted and stays small."""

    def adapter_flops(experts):
        model = DyTViT(
            arch='tiny', dispatch=None, adapter_cfg=dict(bottleneck=64,
                                                         num_experts=experts)).eval()
        analyzer = flop_analyzer(model, (torch.zeros(1, 3, 224, 224), ))
        return sum(analyzer.by_module()[f'blocks.{i}.adapter'] for i in range(12))

    one, moe = adapter_flops(1), adapter_flops(num_experts)
    assert moe > one  # routing and merging are counted ...
    assert moe <= 1.05 * one  # ... and cost little next to 197 tokens through the adapter
