"""The packed MLP of DyT's MLP dispatch: the active rows added into the residual sum."""
import pytest
import torch

from mmvitdyn.models.layers import DyTBlock
from mmvitdyn.models.layers.dispatch_ops import add_packed_rows


def test_add_packed_rows_adds_the_scaled_active_rows_in_place():
    torch.manual_seed(0)
    linear = torch.nn.Linear(8, 5)
    x = torch.randn(2, 7, 8)
    mask = torch.tensor([[1., 0, 0.5, 0, 0, 1, 0], [0, 0, 0, 2, 0, 0, 0]])
    start = torch.randn(2, 7, 5)
    out = start.clone()
    result = add_packed_rows(out, linear, x, mask)
    expected = start.clone()
    for b, t in mask.nonzero().tolist():
        expected[b, t] += mask[b, t] * (x[b, t] @ linear.weight.T + linear.bias)
    torch.testing.assert_close(result, expected, atol=1e-6, rtol=1e-6)
    assert result.data_ptr() == out.data_ptr()
    assert torch.equal(result[mask == 0], start[mask == 0])  # skipped rows: untouched


@pytest.mark.parametrize('adapter_cfg', [dict(bottleneck=4), None])
def test_packed_block_equals_masked_and_leaves_its_input(adapter_cfg):
    torch.manual_seed(0)
    block = DyTBlock(dim=16, num_heads=2, mlp_hidden_dim=32, adapter_cfg=adapter_cfg).eval()
    for param in block.parameters():
        param.data.normal_(0, 0.3)
    x = torch.randn(3, 9, 16)
    before = x.clone()
    with torch.no_grad():
        packed = block(x)
        mask = block.masks['mlp']
        block.packed = False
        masked = block(x)
    assert 0 < float(mask[:, 1:].mean()) < 1
    torch.testing.assert_close(packed, masked, atol=1e-6, rtol=1e-5)
    assert torch.equal(x, before)
