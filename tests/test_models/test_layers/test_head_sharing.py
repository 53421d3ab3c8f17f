import copy

import pytest
import torch
from torch.func import functional_call

from mmvitdyn.models.layers import Attention, heads_are_shared, share_heads, unshare_heads


def attention(seed=0, bias=True):
    torch.manual_seed(seed)
    return Attention(dim=12, num_heads=4, head_dim=3, qkv_bias=bias)


def run(attn, x):
    """The attention with its tied tensors supplied, as a backbone's block step runs it."""
    return functional_call(attn, attn.shared_heads(), (x, ))


def test_shared_heads_repeat_the_first_copy_of_each_distinct_head():
    attn = attention()
    qkv = attn.qkv.weight.detach().clone().view(3, 4, 3, 12)
    proj = attn.proj.weight.detach().clone().view(12, 4, 3)
    bias = attn.qkv.bias.detach().clone().view(3, 4, 3)
    share_heads(attn, [0, 1, 0, 2])  # heads 0 and 2 tied
    assert heads_are_shared(attn)
    assert attn.shared_heads.qkv_weight.shape == (3, 3, 3, 12)
    supplied = attn.shared_heads()
    assert torch.equal(supplied['qkv.weight'], qkv[:, [0, 1, 0, 3]].reshape(36, 12))
    assert torch.equal(supplied['qkv.bias'], bias[:, [0, 1, 0, 3]].reshape(36))
    assert torch.equal(supplied['proj.weight'], proj[:, [0, 1, 0, 3]].reshape(12, 12))
    assert run(attn, torch.randn(2, 5, 12)).shape == (2, 5, 12)


def test_the_attention_holds_no_copy_of_what_is_tied():
    attn = attention()
    share_heads(attn, [0, 1, 0, 2])
    assert sorted(n for n, _ in attn.named_parameters()) == [
        'proj.bias', 'shared_heads.proj_weight', 'shared_heads.qkv_bias', 'shared_heads.qkv_weight'
    ]
    with pytest.raises(AttributeError):
        attn(torch.randn(1, 4, 12))  # run alone, nothing supplies its tensors


def test_gradients_of_the_copies_add_up():
    attn = attention()
    share_heads(attn, [0, 0, 1, 1])
    x = torch.randn(2, 5, 12)
    run(attn, x).square().sum().backward()
    grad = attn.shared_heads.qkv_weight.grad
    # The same loss through an untied copy with equal heads: per-head gradients.
    plain = attention()
    with torch.no_grad():
        for key, value in attn.shared_heads().items():
            plain.get_parameter(key).copy_(value)
    plain(x).square().sum().backward()
    per_head = plain.qkv.weight.grad.view(3, 4, 3, 12)
    torch.testing.assert_close(grad[:, 0], per_head[:, 0] + per_head[:, 1])
    torch.testing.assert_close(grad[:, 1], per_head[:, 2] + per_head[:, 3])


def test_loading_full_tensors_keeps_each_distinct_head_s_first_copy():
    attn = attention()
    share_heads(attn, [0, 1, 0, 1])
    full = torch.arange(4 * 3 * 12.).view(1, 4, 3, 12).expand(3, 4, 3, 12)
    attn.shared_heads.load_full({'qkv.weight': full.reshape(36, 12)})
    assert torch.equal(attn.shared_heads.qkv_weight, full[:, :2])


def test_unshare_keeps_values_and_frees_the_copies():
    attn = attention(bias=False)
    share_heads(attn, [0, 0, 0, 0])
    x = torch.randn(2, 5, 12)
    with torch.no_grad():
        expected = run(attn, x)
    unshare_heads(attn)
    assert not heads_are_shared(attn)
    assert isinstance(attn.qkv.weight, torch.nn.Parameter) and attn.qkv.weight.shape == (36, 12)
    assert sorted(
        n for n, _ in attn.named_parameters()) == ['proj.bias', 'proj.weight', 'qkv.weight']
    with torch.no_grad():
        torch.testing.assert_close(attn(x), expected)


def test_state_dict_round_trip_and_deepcopy():
    attn = attention()
    share_heads(attn, [0, 1, 1, 0])
    other = attention(seed=1)
    share_heads(other, [0, 1, 1, 0])
    other.load_state_dict(attn.state_dict())
    x = torch.randn(1, 4, 12)
    with torch.no_grad():
        torch.testing.assert_close(run(other, x), run(attn, x))
        torch.testing.assert_close(run(copy.deepcopy(attn), x), run(attn, x))


@pytest.mark.parametrize('index,match', [([0, 2, 0, 2], r'must use every distinct head 0\.\.U-1'),
                                         ([0, 1], 'head_index has 2 entries for 4 heads')])
def test_bad_head_index(index, match):
    with pytest.raises(ValueError, match=match):
        share_heads(attention(), index)


def test_tied_heads_in_a_plain_vit_run_through_its_block_step():
    """share_heads on a ViT's attention: the ViT supplies the tied tensors, so the
    model computes what an untied ViT with the repeated heads computes."""
    from helpers.models import images, tiny
    from mmvitdyn.models import ViT
    tied, plain = tiny(ViT, out_type='raw'), tiny(ViT, out_type='raw')
    share_heads(tied.blocks[1].attn, [0, 1, 0, 1])
    with torch.no_grad():
        for key, value in tied.blocks[1].attn.shared_heads().items():
            plain.blocks[1].attn.get_parameter(key).copy_(value)
        torch.testing.assert_close(tied(images(2))[0], plain(images(2))[0])
