"""The masked softmax attention of DyT's attention dispatch and DynamicViT's policy."""
import pytest
import torch

from mmvitdyn.models.layers import Attention, DyTBlock, PolicyAttention
from mmvitdyn.models.layers.dispatch_ops import masked_attention, packed_attention


def reference(attn, x, factor):
    """Plain torch: weights m_ij exp(s_ij) / sum_l m_il exp(s_il) with factor m (B, 1|H, N, N)."""
    b, n, c = x.shape
    h, d = attn.num_heads, attn.head_dim
    q, k, v = (x @ attn.qkv.weight.T + attn.qkv.bias).view(b, n, 3, h, d).unbind(2)
    scores = torch.einsum('bqhd,bkhd->bhqk', q, k) * d**-0.5
    w = (scores - scores.amax(-1, keepdim=True)).exp() * factor
    w = w / w.sum(-1, keepdim=True)
    out = torch.einsum('bhqk,bkhd->bqhd', w, v).reshape(b, n, h * d)
    return out @ attn.proj.weight.T + attn.proj.bias, scores


def test_policy_attention_hides_dropped_keys_from_all_but_themselves():
    torch.manual_seed(0)
    attn = PolicyAttention(16, 2)
    x = torch.randn(2, 6, 16)
    policy = torch.tensor([[1., 1, 0, 1, 0, 1], [1, 0, 0, 0, 1, 1]], requires_grad=True)
    out = attn(x, policy=policy)
    eye = torch.eye(6)
    allowed = (policy.detach()[:, None, None, :] > 0) | eye.bool()
    ref, _ = reference(attn, x, allowed.float())
    torch.testing.assert_close(out, ref, atol=1e-6, rtol=1e-5)
    # The policy's gradient (what the predictors learn from) is that of the masked softmax
    # written with the policy as a factor, for kept and dropped tokens alike.
    out.square().sum().backward()
    grad = policy.grad.clone()
    policy.grad = None
    ref, _ = reference(attn, x, policy[:, None, None, :] * (1 - eye) + eye)
    ref.square().sum().backward()
    assert bool((grad[policy.detach() == 0] != 0).all())
    torch.testing.assert_close(grad, policy.grad, atol=1e-5, rtol=1e-4)
    assert torch.equal(attn(x), Attention.forward(attn, x))  # no policy: plain attention


def test_dispatch_mask_gradient_is_exact_when_a_skipped_key_scores_highest():
    """DyT's attention dispatch: inactive tokens are neither keys nor queries, and the
    mask's straight-through gradient is that of the exact masked softmax, also where an
    inactive key scores above every active one (the case a peak over active keys with
    exp clamped at 1 gets wrong by exp(s_j - peak))."""
    torch.manual_seed(0)
    attn = Attention(16, 2)
    with torch.no_grad():
        attn.qkv.weight.mul_(3)  # peaked attention: scores spread over several units
    x = torch.randn(2, 7, 16)
    mask = torch.tensor([[1., 1, 0, 1, 0, 0, 1], [1, 0, 0, 1, 1, 0, 1]], requires_grad=True)
    out = masked_attention(attn, x, mask)
    out.square().sum().backward()
    grad = mask.grad.clone()
    mask.grad = None
    ref, scores = reference(attn, x, mask[:, None, None, :])
    (ref * mask[..., None]).square().sum().backward()
    # The case that matters is there: for some query an inactive key has the top score.
    top_inactive = (mask.detach()[:, None, None, :] == 0).expand_as(scores).gather(
        -1, scores.argmax(-1, keepdim=True))
    assert bool(top_inactive.any())
    torch.testing.assert_close(out, ref * mask.detach()[..., None], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(grad, mask.grad, atol=1e-4, rtol=1e-4)
    assert bool((grad[mask.detach() == 0] != 0).all())


def test_masked_equals_packed_attention_in_evaluation():
    torch.manual_seed(0)
    attn = Attention(16, 2).eval()
    x = torch.randn(3, 7, 16)
    mask = (torch.rand(3, 7) > 0.5).float()
    mask[:, 0] = 1
    with torch.no_grad():
        torch.testing.assert_close(
            masked_attention(attn, x, mask), packed_attention(attn, x, mask), atol=1e-5, rtol=1e-5)


def test_masked_attention_ignores_a_skipped_key_scoring_far_above_the_rest():
    """A skipped key scoring 140 above every active one must not push the active keys'
    weights to zero (exp underflow): masked (training) equals packed (inference) and the
    softmax over the active keys alone."""
    attn = Attention(8, 1).eval()
    with torch.no_grad():  # q = k = v = x: scores x_i . x_j / sqrt(8)
        attn.qkv.weight.copy_(torch.eye(8).repeat(3, 1))
        attn.qkv.bias.zero_()
    torch.manual_seed(0)
    x = torch.randn(1, 4, 8) * 0.1
    x[0, 0, 0], x[0, 3, 0] = 10.0, 40.0  # scores of query 0: keys 0-2 <= 36, key 3 ~141
    mask = torch.tensor([[1., 1, 1, 0]])
    with torch.no_grad():
        masked = masked_attention(attn, x, mask)
        packed = packed_attention(attn, x, mask)
        scores = x[0, :3] @ x[0, :3].T / 8**0.5
        expected = attn.proj(scores.softmax(-1) @ x[0, :3])
    assert float(x[0, 0] @ x[0, 3] / 8**0.5 - scores[0].max()) > 100
    torch.testing.assert_close(masked[0, :3], expected, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(masked, packed, atol=1e-5, rtol=1e-5)


def reference_dyt_block(block, x, dispatch):
    """A DyTBlock with attention dispatch ('attn', 'attn_mlp', 'layer') in training, without
    Gumbel noise, in plain torch: straight-through masks ``hard - soft.detach() + soft``
    with ``soft = sigmoid(logit / tau)``, the exact masked softmax of :func:`reference`."""

    def mask(part, tokens):
        dispatcher = block.dispatchers[part]
        logits = tokens @ dispatcher.gate.weight.T + dispatcher.gate.bias
        soft = torch.sigmoid(logits[:, 1:, 0] / dispatcher.tau)
        hard = (soft > 0.5).float()
        return torch.cat([torch.ones(len(tokens), 1), hard - soft.detach() + soft], 1)

    attn_mask = mask('layer' if dispatch == 'layer' else 'attn', x)
    attn_out, scores = reference(block.attn, block.norm1(x), attn_mask[:, None, None, :])
    x = x + attn_out * attn_mask[..., None]
    if dispatch == 'attn':
        mlp_mask = torch.ones_like(attn_mask)
    else:
        mlp_mask = attn_mask if dispatch == 'layer' else mask('mlp', x)
    out = x + block.mlp(block.norm2(x)) * mlp_mask[..., None] + block.adapter(x)
    return out, scores, attn_mask


@pytest.mark.parametrize('dispatch', ['attn', 'attn_mlp', 'layer'])
def test_dyt_block_gradients_are_those_of_the_exact_masked_block(dispatch):
    """Every variant that gates the attention: outputs and the gradients of all
    parameters (dispatchers included) equal those of the block written out with the
    exact masked softmax, where inactive keys score above every active one."""
    torch.manual_seed(0)
    block = DyTBlock(
        dispatch=dispatch,
        dispatcher_cfg=dict(gumbel=False),
        adapter_cfg=dict(bottleneck=4, scale=1.0, dropout=0.0),
        dim=16,
        num_heads=2,
        mlp_hidden_dim=32).train()
    with torch.no_grad():
        block.attn.qkv.weight.mul_(3)  # peaked attention: scores spread over several units
        block.adapter.up.weight.normal_(std=0.3)
        for dispatcher in block.dispatchers.values():
            dispatcher.gate.weight.normal_(std=0.5)
    x = torch.randn(2, 9, 16)
    weights = torch.randn(2, 9, 16)  # loss sum(w * out^2): every output element counts
    out = block(x)
    (weights * out**2).sum().backward()
    grads = {n: p.grad.clone() for n, p in block.named_parameters()}
    block.zero_grad()
    expected, scores, attn_mask = reference_dyt_block(block, x, dispatch)
    (weights * expected**2).sum().backward()
    active = attn_mask.detach()
    assert 0 < active[:, 1:].mean() < 1
    inactive_keys = (active == 0)[:, None, None, :].expand_as(scores)
    top_is_inactive = inactive_keys.gather(-1, scores.argmax(-1, keepdim=True))[..., 0]
    assert bool((top_is_inactive & (active[:, None, :] == 1)).any())  # for an active query
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    for name, param in block.named_parameters():
        torch.testing.assert_close(grads[name], param.grad, atol=1e-4, rtol=1e-4, msg=name)
