import pytest
import torch
from torch.func import functional_call

from mmvitdyn.models.layers import FFNExpansion, Mlp, expanded_mlp


def random_ffn(dim=8, hidden=16, seed=0):
    torch.manual_seed(seed)
    mlp = Mlp(dim, hidden)
    return mlp, {k: v.detach().clone() for k, v in mlp.state_dict().items()}


def run(layer, expansion, position, x):
    """Layer ``position`` with its W_t supplied, as a backbone's block step runs it."""
    return functional_call(layer, expansion.weights(position), (x, ))


def test_identity_at_initialisation_is_exact():
    mlp, state = random_ffn()
    expansion = FFNExpansion(8, 16, num_layers=3)
    expansion.load_ffn(state)
    x = torch.randn(2, 5, 8)
    for t in range(3):
        weights = expansion.weights(t)
        assert all(torch.equal(weights[k], state[k]) for k in state)
        assert torch.equal(run(expanded_mlp(expansion, t, 8, 16), expansion, t, x), mlp(x))


def test_gradients_reach_w_and_the_map():
    _, state = random_ffn()
    expansion = FFNExpansion(8, 16, num_layers=2)
    expansion.load_ffn(state)
    layers = [expanded_mlp(expansion, t, 8, 16) for t in range(2)]
    x = torch.randn(2, 5, 8)
    (run(layers[0], expansion, 0, x).square().sum() +
     run(layers[1], expansion, 1, x).sum()).backward()
    for name, param in expansion.named_parameters():
        assert param.grad is not None and param.grad.abs().sum() > 0, name
    # Each layer's output weights only get that layer's gradient.
    assert not torch.equal(expansion.map_out_weight.grad[0], expansion.map_out_weight.grad[1])


def test_training_the_map_makes_layers_differ():
    _, state = random_ffn()
    expansion = FFNExpansion(8, 16, num_layers=2)
    expansion.load_ffn(state)
    with torch.no_grad():
        expansion.map_out_weight[1] *= 0.5
        expansion.map_out_bias[1] = 0.1
    assert torch.equal(expansion.weights(0)['fc1.weight'], state['fc1.weight'])
    torch.testing.assert_close(expansion.weights(1)['fc1.weight'], 0.5 * state['fc1.weight'] + 0.1)


def test_parameters_are_registered_once_by_the_first_layer():
    expansion = FFNExpansion(8, 16, num_layers=2)
    model = torch.nn.Sequential(*(expanded_mlp(expansion, t, 8, 16) for t in range(2)))
    assert all(name.startswith('0.expansion.') for name in model.state_dict())
    assert len(list(model.parameters())) == 8
    assert model[0].expansion is expansion and 'expansion' not in model[1]._modules


def test_any_activation_computes_with_the_expanded_weights():
    _, state = random_ffn()
    expansion = FFNExpansion(8, 16, num_layers=2)
    expansion.load_ffn(state)
    plain = Mlp(8, 16, act_cfg=dict(type='QuickGELU'))
    plain.load_state_dict(state)
    layer = expanded_mlp(expansion, 1, 8, 16, act_cfg=dict(type='QuickGELU'))
    x = torch.randn(2, 5, 8)
    torch.testing.assert_close(run(layer, expansion, 1, x), plain(x))


@pytest.mark.parametrize('args,error,match',
                         [((0, 8, 32), ValueError, r'8 -> 16 wide; the block asks '
                           r'for 8 -> 32'),
                          ((2, 8, 16), IndexError, r'position 2 is outside 0\.\.1')])
def test_bad_layers_are_refused(args, error, match):
    with pytest.raises(error, match=match):
        expanded_mlp(FFNExpansion(8, 16, num_layers=2), *args)
