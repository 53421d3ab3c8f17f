"""Tensors a module computes with but does not hold: released, supplied by the
backbone's block step, held again for export."""
import pytest
import torch
import torch.nn.functional as F
from torch.func import functional_call

from helpers.models import images, tiny
from mmvitdyn.models import ViT
from mmvitdyn.models.layers import Mlp, hold, release, supplied


def test_a_released_module_computes_only_with_what_is_supplied():
    torch.manual_seed(0)
    mlp = Mlp(4, 8)
    release(mlp, ['fc1.weight', 'fc1.bias'])
    assert sorted(n for n, _ in mlp.named_parameters()) == ['fc2.bias', 'fc2.weight']
    x = torch.randn(2, 3, 4)
    with pytest.raises(AttributeError):
        mlp(x)
    w, b = torch.randn(8, 4), torch.randn(8)
    expected = F.linear(F.gelu(F.linear(x, w, b)), mlp.fc2.weight, mlp.fc2.bias)
    torch.testing.assert_close(
        functional_call(mlp, {
            'fc1.weight': w,
            'fc1.bias': b
        }, (x, )), expected)


def test_release_names_a_parameter_it_does_not_have():
    with pytest.raises(AttributeError, match="has no parameter 'fc3.weight' to release"):
        release(torch.nn.Sequential(), ['fc3.weight'])
    with pytest.raises(AttributeError, match="no parameter 'fc1.weigth'"):
        release(Mlp(4, 8), ['fc1.weigth'])


def test_hold_makes_independent_parameters():
    mlp = Mlp(4, 8)
    release(mlp, ['fc1.weight'])
    w = torch.randn(8, 4, requires_grad=True)
    hold(mlp, {'fc1.weight': w * 2})
    assert isinstance(mlp.fc1.weight, torch.nn.Parameter) and mlp.fc1.weight.requires_grad
    assert mlp.fc1.weight.grad_fn is None
    torch.testing.assert_close(mlp.fc1.weight, w.detach() * 2)


class HalfBias(ViT):
    """Block 0 computes with half of ``fc2_bias``, a parameter the backbone holds."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.fc2_bias = torch.nn.Parameter(self.blocks[0].mlp.fc2.bias.detach().clone())
        release(self.blocks[0], ['mlp.fc2.bias'])

    def block_tensors(self, index):
        return {'mlp.fc2.bias': self.fc2_bias / 2} if index == 0 else {}


def test_the_block_step_supplies_the_block_tensors_and_gradients_reach_their_owner():
    model = tiny(HalfBias, out_type='raw')
    plain = tiny(ViT, out_type='raw')  # the same seed: the same weights but the bias
    bias = torch.randn(32, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        model.fc2_bias.copy_(bias)
        plain.blocks[0].mlp.fc2.bias.copy_(bias / 2)
    x = images(2)
    torch.testing.assert_close(model(x)[0], plain(x)[0])
    model(x)[0].sum().backward()
    plain(x)[0].sum().backward()
    torch.testing.assert_close(model.fc2_bias.grad, plain.blocks[0].mlp.fc2.bias.grad / 2)


def test_supplied_tensors_are_there_for_the_call_only_and_never_replace_a_held_one():
    mlp = Mlp(4, 8)
    release(mlp, ['fc1.weight'])
    w = torch.randn(8, 4)
    with pytest.raises(RuntimeError, match='inside'):
        with supplied(mlp, {'fc1.weight': w}):
            assert mlp.fc1.weight is w
            raise RuntimeError('inside')
    assert not hasattr(mlp.fc1, 'weight')  # gone again, even after an error
    with pytest.raises(AttributeError, match="holds 'fc2.weight'; release it"):
        with supplied(mlp, {'fc2.weight': torch.zeros(4, 8)}):
            pass
    assert mlp.fc2.weight.shape == (4, 8)
