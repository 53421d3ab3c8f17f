import torch

from mmvitdyn.models.layers import ExpandedMlp, FFNExpansion, Mlp


def random_ffn(dim=8, hidden=16, seed=0):
    torch.manual_seed(seed)
    mlp = Mlp(dim, hidden)
    return mlp, {k: v.detach().clone() for k, v in mlp.state_dict().items()}


def test_identity_at_initialisation_is_exact():
    mlp, state = random_ffn()
    expansion = FFNExpansion(8, 16, num_layers=3)
    expansion.load_ffn(state)
    x = torch.randn(2, 5, 8)
    for t in range(3):
        weights = expansion.weights(t)
        assert all(torch.equal(weights[k], state[k]) for k in state)
        assert torch.equal(ExpandedMlp(expansion, t)(x), mlp(x))


def test_gradients_reach_w_and_the_map():
    _, state = random_ffn()
    expansion = FFNExpansion(8, 16, num_layers=2)
    expansion.load_ffn(state)
    layers = [ExpandedMlp(expansion, 0, owner=True), ExpandedMlp(expansion, 1)]
    x = torch.randn(2, 5, 8)
    (layers[0](x).square().sum() + layers[1](x).sum()).backward()
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


def test_parameters_are_registered_once():
    expansion = FFNExpansion(8, 16, num_layers=2)
    model = torch.nn.Sequential(ExpandedMlp(expansion, 0, owner=True), ExpandedMlp(expansion, 1))
    assert all(name.startswith('0.expansion.') for name in model.state_dict())
    assert len(list(model.parameters())) == 8
    assert model[1].source is expansion


def test_materialize_gives_the_same_outputs():
    _, state = random_ffn()
    expansion = FFNExpansion(8, 16, num_layers=2)
    expansion.load_ffn(state)
    with torch.no_grad():
        expansion.map_hidden_bias.fill_(0.05)
        expansion.map_out_weight.normal_()
    layer = ExpandedMlp(expansion, 1, drop=0.1).eval()
    mlp = layer.materialize().eval()
    assert isinstance(mlp, Mlp) and mlp.drop.p == 0.1
    x = torch.randn(2, 5, 8)
    torch.testing.assert_close(mlp(x), layer(x))
