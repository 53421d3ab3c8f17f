"""Mixed precision: DyT's packed and masked paths, the token reductions, ViTDet's
windowed attention and the two-pass step under ``torch.autocast``.

bfloat16 on the CPU; float16 and bfloat16 on CUDA in the ``gpu``-marked cases.
Each case asserts that the big matmuls (q/k/v, output projection, MLP, adapter)
compute in the low dtype, that outputs are finite, and that they match the
float32 forward of the same weights. Token decisions (dispatch masks, ToMe
merges, EViT and DynamicViT rankings) are discrete: a token whose gate logit
lies within rounding of its threshold may flip, and one flip moves the tiny
model's output by ~1e-2. So the float32 reference replays the low-precision
run's dispatch masks (the arithmetic is compared on equal decisions), and the
decisions themselves must agree with float32's almost everywhere.

Tolerances, from the unit roundoff u of the dtype (bfloat16 2^-8 = 3.9e-3,
float16 2^-11): the relative error (Frobenius) of an output to float32 must be
<= 2.5 u (measured on the CPU over every case: at most 5.1e-3 = 1.3 u, ToMe), packed
to masked <= u (measured: at most 1.9e-3, DynamicViT, on equal keep decisions: its
two paths rank tokens on differently rounded scores; the DyT variants <= 6.1e-4).

The two-pass step under AmpOptimWrapper must move every trainable weight as the
float32 step does on the same masks, to 2.5 u (measured: at most 1.3 u). That needs a
well-conditioned gradient. With near-uniform predictions (head std 0.01) and balanced
labels, the batch gradient of the cross entropies is a small difference of per-image
gradients (their summed norms up to 33 times its norm) and bfloat16's rounding grows
with it: the adapters' and the head's moves then differ from float32's by 1e-2 to 0.83.
That is bfloat16 arithmetic, not the step: the single-graph AMP step (``loss`` +
``update_params``) differs from float32 alike and from the two-pass AMP step by <= 3e-3;
a plain two-layer MLP shows the same (11 u with balanced labels, 0.9 u with one); the
distillation gradient is 1e-4 of the cross entropies'. So the step trains on one label,
with a patch projection of std 0.2 that tells the images apart.
"""
import copy
import warnings
from contextlib import contextmanager

import pytest
import torch
from mmengine.optim import AmpOptimWrapper, OptimWrapper
from mmengine.optim.optimizer import amp_optimizer_wrapper

from helpers.classifiers import dyt_classifier, labelled_batch
from helpers.dyt import spread_gates
from helpers.models import TINY_ARCH, images, tiny
from mmvitdyn.models import DynamicViT, DyTViT, DyTViTDet, TokenDispatcher, TokenPredictor

gpu = pytest.mark.gpu
AMPS = [
    pytest.param(('cpu', torch.bfloat16), id='cpu-bf16'),
    pytest.param(('cuda', torch.float16), id='cuda-fp16', marks=gpu),
    pytest.param(('cuda', torch.bfloat16), id='cuda-bf16', marks=gpu),
]
# The modules whose outputs must be in the low dtype: the block's big linears, the adapters.
BIG_MATMULS = ('qkv', 'proj', 'fc1', 'fc2', 'down', 'up', 'adapter')
ADAPTER = dict(bottleneck=8, scale=1.0, dropout=0.0)


@pytest.fixture(autouse=True)
def one_thread():
    """One intra-op thread per test, then the process's own: the tensors are tiny, and on a
    loaded machine two threads wait on each other (the module ran 2.4x slower)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def unit_roundoff(dtype: torch.dtype) -> float:
    return torch.finfo(dtype).eps / 2


def dyt(dispatch='mlp', **kwargs):
    """A tiny DyTViT returning every token, non-zero adapters, gates spread (each image
    its own activation rate); ``kwargs`` override arguments."""
    model = tiny(DyTViT, **{
        'dispatch': dispatch,
        'adapter_cfg': ADAPTER,
        'out_type': 'raw',
        **kwargs
    })
    for name, param in model.named_parameters():
        if name.endswith(('adapter.up.weight', 'adapter.up_weight')):
            torch.nn.init.normal_(param, std=0.1)
    spread_gates(model)
    return model


def reduction(cfg):
    """DyT (MLP dispatch) with ToMe or EViT; peaked attention (q/k/v std 0.1, as the
    EViT tests) so that the class token's attention ranks the tokens."""
    model = dyt(token_reduction=cfg, out_type='cls_token')
    for block in model.blocks:
        torch.nn.init.normal_(block.attn.qkv.weight, std=0.1)
    return model


def dynamicvit(scores_spread=True):
    """DynamicViT of 4 blocks, stages before blocks 1, 2, 3; with ``scores_spread`` the
    predictors' linears are drawn at std fan_in^-0.5 (keep scores far apart), else they
    keep their init (std 0.02: every keep probability within 1e-3 of 1/2)."""
    model = tiny(
        DynamicViT, arch=dict(TINY_ARCH, num_layers=4), prune_loc=(1, 2, 3), adapter_cfg=ADAPTER)
    for block in model.blocks:
        torch.nn.init.normal_(block.adapter.up.weight, std=0.1)
    for module in model.predictors.modules():
        if scores_spread and isinstance(module, torch.nn.Linear):
            torch.nn.init.normal_(module.weight, std=module.in_features**-0.5)
    return model


def vitdet():
    """DyTViTDet on a 6 x 10 grid: windows of 4 (padded with zero tokens), one global
    block, non-zero relative-position tables."""
    model = tiny(DyTViTDet, window_size=4, global_indices=(1, ), input_size=48, adapter_cfg=ADAPTER)
    for block in model.blocks:
        torch.nn.init.normal_(block.attn.rel_pos_h, std=0.2)
        torch.nn.init.normal_(block.attn.rel_pos_w, std=0.2)
        torch.nn.init.normal_(block.adapter.up.weight, std=0.1)
    spread_gates(model)
    return model


CASES = {
    'mlp':
    lambda: dyt('mlp'),
    'attn':
    lambda: dyt('attn'),
    'attn_mlp-topk':
    lambda: dyt('attn_mlp', target_rate=0.3, dispatcher_cfg=dict(mode='topk')),
    'layer-moe':
    lambda: dyt('layer', adapter_cfg=dict(ADAPTER, num_experts=4)),
    'soft_topk':
    lambda: dyt(target_rate=0.3, dispatcher_cfg=dict(mode='soft_topk', epsilon=0.1, gumbel=False)),
    'tome':
    lambda: reduction(dict(type='ToMe', r=3)),
    'evit':
    lambda: reduction(dict(type='EViT', keep_rate=0.5, locations=(0, ))),
    'dynamicvit':
    dynamicvit,
    'vitdet':
    vitdet,
}
# Every case in evaluation (packed and masked paths); in training only where the forward
# differs from masked evaluation: the dispatcher's Gumbel threshold and top-k rules and
# DynamicViT's Gumbel-softmax keep decisions (the other cases' training forward is their
# masked path with other mask values).
RUNS = [(name, 'eval') for name in CASES] + [(name, 'train')
                                             for name in ('mlp', 'attn_mlp-topk', 'dynamicvit')]


@pytest.fixture(scope='module')
def build():
    """``build(name)``: a fresh copy of CASES[name]'s model, each case built once."""
    built = {}

    def copy_of(name):
        if name not in built:
            built[name] = CASES[name]()
        return copy.deepcopy(built[name])

    return copy_of


def case_inputs(name: str, batch: int = 5) -> torch.Tensor:
    return images(batch, size=(48, 80)) if name.startswith('vitdet') else images(batch)


def set_mode(model, mode: str):
    """'packed' / 'masked' evaluation, or 'train' (masked, Gumbel noise)."""
    if mode == 'train':
        model.train()
        model.attach_objective('this test')
    else:
        model.eval()
        model.set_packed(mode == 'packed')
    return model


@contextmanager
def replayed_decisions(model, masks=None):
    """Yields the list of the outputs that decide on tokens (DyT's dispatch masks,
    DynamicViT's keep scores) in the forward(s) run inside; with ``masks`` given, those
    outputs take these values (keeping their own gradients), in order."""
    seen, replay = [], iter(masks) if masks is not None else None

    def hook(module, args, out):
        seen.append(out.detach())
        if replay is None:
            return None
        return next(replay).to(out.dtype) + (out - out.detach())  # own gradient, its values

    hooks = [
        m.register_forward_hook(hook) for m in model.modules()
        if isinstance(m, (TokenDispatcher, TokenPredictor))
    ]
    try:
        yield seen
    finally:
        for h in hooks:
            h.remove()


@contextmanager
def big_matmul_dtypes(model):
    """Yields a dict: name -> set of output dtypes of each module named in BIG_MATMULS."""
    dtypes = {}
    hooks = [
        m.register_forward_hook(lambda m, a, out, n=n: dtypes.setdefault(n, set()).add(out.dtype))
        for n, m in model.named_modules() if n.rsplit('.', 1)[-1] in BIG_MATMULS
    ]
    try:
        yield dtypes
    finally:
        for h in hooks:
            h.remove()


def decisions(model) -> torch.Tensor:
    """Every token decision of the last forward, flattened (True: the token runs the
    part, or is kept): dispatch masks, or DynamicViT's keep decisions (masked path)."""
    if isinstance(model, DynamicViT):
        parts = model.decisions
    else:
        parts = [m for block in model.dispatch_masks() for m in block.values()]
    return torch.cat([p.flatten() != 0 for p in parts]) if parts else torch.zeros(0, dtype=bool)


def forward(model, x, seed=0, amp=None, masks=None):
    """(output in float32, the dispatch masks, the decisions) of one seeded forward,
    under autocast to ``amp`` = (device, dtype) or in float32."""
    torch.manual_seed(seed)
    device = x.device.type
    with torch.no_grad(), replayed_decisions(model, masks) as seen, torch.autocast(
            device, dtype=amp[1] if amp else torch.bfloat16, enabled=amp is not None):
        out = model(x)[0].float()
    return out, seen, decisions(model)


def relative_error(actual, expected) -> float:
    return float((actual - expected).norm() / expected.norm())


@pytest.mark.parametrize('amp', AMPS)
@pytest.mark.parametrize('name,mode', RUNS, ids=[f'{name}-{mode}' for name, mode in RUNS])
def test_low_precision_matmuls_match_float32(name, mode, amp, build):
    """Big matmuls in the low dtype; finite outputs within 2.5 u of float32 on the
    low-precision run's decisions, >= 97% of which are float32's own. In evaluation
    the packed path (run here) gives the masked path's outputs to u, and its decisions."""
    device, dtype = amp
    model = set_mode(build(name).to(device), 'packed' if mode == 'eval' else 'train')
    x = case_inputs(name).to(device)
    with big_matmul_dtypes(model) as dtypes:
        out, masks, low_decisions = forward(model, x, amp=amp)
    assert dtypes and all(d == {dtype} for d in dtypes.values()), dtypes
    assert bool(torch.isfinite(out).all())
    assert relative_error(out, forward(model, x, masks=masks)[0]) <= 2.5 * unit_roundoff(dtype)
    if mode == 'eval':
        low_decisions = assert_packed_equals_masked(
            model, x, amp, out, low_decisions, masks if isinstance(model, DynamicViT) else None)
    own_decisions = forward(model, x)[2]
    assert float((own_decisions == low_decisions).float().mean()) >= 0.97


def assert_packed_equals_masked(model,
                                x,
                                amp,
                                packed,
                                packed_decisions,
                                packed_scores=None,
                                min_agreement=0.97):
    """The masked path under autocast gives ``packed`` (to u) and its decisions; the
    model is left on the masked path. Returns the masked path's decisions.

    DynamicViT's packed path drops tokens instead of deciding on them, and its two paths
    score the kept tokens with differently rounded arithmetic: a pair of scores within
    rounding of each other at the keep threshold may swap (one swap among the 35 tokens
    kept at the last stage on an AMD EPYC's bfloat16: relative difference 3.2e-2). With
    ``packed_scores`` (the packed run's predictor outputs) the masked path's own decisions
    must agree with the packed ones on ``min_agreement`` of the tokens, and its outputs,
    on the packed run's scores, equal ``packed`` to u."""
    masked, _, masked_decisions = forward(set_mode(model, 'masked'), x, amp=amp)
    if packed_scores is None:
        assert torch.equal(packed_decisions, masked_decisions)
    else:
        packed_decisions = packed_keep_masks(packed_scores, model.stage_counts)
        agree = (torch.cat([d.flatten() for d in packed_decisions]) != 0) == masked_decisions
        assert float(agree.float().mean()) >= min_agreement
        on_the_grid = [
            scores_on_the_grid(s, d) for s, d in zip(packed_scores, [None] + packed_decisions[:-1])
        ]
        masked, _, masked_decisions = forward(model, x, amp=amp, masks=on_the_grid)
    assert relative_error(packed, masked) <= unit_roundoff(amp[1])
    return masked_decisions


def packed_keep_masks(scores, counts):
    """Per stage, the (B, N) keep mask over the patch grid of a packed DynamicViT run
    whose stage ``s`` predictor scored the (B, M_s, 2) tokens left (kept in grid order)
    and kept the ``counts[s]`` of highest keep score."""
    batch, grid = scores[0].shape[:2]
    positions, masks = torch.arange(grid).expand(batch, grid), []
    for stage_scores, count in zip(scores, counts):
        kept = stage_scores[..., 0].topk(count, dim=1).indices.sort(dim=1).values
        positions = positions.gather(1, kept)
        masks.append(torch.zeros(batch, grid).scatter_(1, positions, 1.0))
    return masks


def scores_on_the_grid(scores, keep=None):
    """(B, M, 2) scores of the tokens ``keep`` (B, N) marks (all when None), in grid
    order, placed on the (B, N, 2) grid; dropped tokens score 0."""
    if keep is None:
        return scores
    full = scores.new_zeros(keep.shape + scores.shape[-1:])
    full[keep != 0] = scores.flatten(0, 1)
    return full


@pytest.mark.parametrize('amp', AMPS)
def test_dynamicvit_at_init_packed_equals_masked_under_autocast(amp):
    """At DynamicViT's init every keep score is within 1e-3 of log(1/2), where a
    bfloat16 log-softmax steps by 2^-8 and ties them: the packed and masked paths then
    kept other tokens (relative difference 0.2). In float32 they rank alike."""
    model = set_mode(dynamicvit(scores_spread=False).to(amp[0]), 'packed')
    x = case_inputs('dynamicvit').to(amp[0])
    packed, scores, _ = forward(model, x, amp=amp)
    assert_packed_equals_masked(model, x, amp, packed, None, scores, min_agreement=1.0)


@pytest.mark.parametrize('amp', AMPS)
def test_training_masks_follow_the_float32_rule_under_autocast(amp):
    """A dispatcher's training mask under autocast is exactly 0 or 1 and follows
    ``1[sigmoid((logit + g1 - g2) / tau) > 0.5]``: a logit of 0.02 (no noise, tau 5) is
    active; at logit -6 (Logistic noise, tau 1) a token is active with probability
    sigmoid(-6) = 2.47e-3 (bfloat16 noise stops at 5.5: none would be)."""
    device, dtype = amp
    dispatcher = TokenDispatcher(4, gumbel=False).to(device).train()
    torch.nn.init.zeros_(dispatcher.gate.weight)
    torch.nn.init.constant_(dispatcher.gate.bias, 0.02)
    x = torch.randn(4, 1001, 4, device=device)
    with torch.autocast(device, dtype=dtype):
        assert bool((dispatcher(x) == 1).all())
    dispatcher.gumbel, dispatcher.tau = True, 1.0
    torch.nn.init.constant_(dispatcher.gate.bias, -6.0)  # outside: autocast caches its weights
    with torch.no_grad(), torch.autocast(device, dtype=dtype):
        mask = dispatcher(torch.randn(4, 50001, 4, device=device))[:, 1:]
    assert bool(((mask == 0) | (mask == 1)).all())
    n, p = mask.numel(), torch.sigmoid(torch.tensor(-6.0)).item()
    assert abs(float(mask.float().mean()) - p) < 4 * (p * (1 - p) / n)**0.5  # 4 sigma: 4.4e-4


def amp_wrapper(model, device, dtype, loss_scale=1024.0):
    """mmengine's AmpOptimWrapper over plain SGD (lr 1) with a GradScaler for ``device``
    of initial scale ``loss_scale``, or a disabled one (None). mmengine itself makes an
    enabled CUDA scaler whatever the dtype (and refuses to build without CUDA)."""
    params = [p for p in model.parameters() if p.requires_grad]
    with warnings.catch_warnings():  # no CUDA here: its GradScaler disables itself
        warnings.simplefilter('ignore')
        wrapper = AmpOptimWrapper(
            optimizer=torch.optim.SGD(params, lr=1.0), dtype=str(dtype).split('.')[-1])
    wrapper.loss_scaler = torch.amp.GradScaler(
        device, init_scale=loss_scale or 1.0, enabled=loss_scale is not None)
    return wrapper


def step_moves(model, optim_wrapper, masks=None):
    """Each trainable weight's move in one seeded ``train_step`` on six images of label 0,
    the gradients the optimizer stepped with, and the dispatch masks of the step."""
    start = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
    grads = []
    optim_wrapper.optimizer.register_step_pre_hook(lambda opt, args, kwargs: grads.extend(
        p.grad.clone() for p in opt.param_groups[0]['params'] if p.grad is not None))
    optim_wrapper.initialize_count_status(model, 0, 1)
    batch = labelled_batch()
    for sample in batch['data_samples']:
        sample.set_gt_label(0)
    torch.manual_seed(10)
    with replayed_decisions(model, masks) as seen:
        model.train_step(batch, optim_wrapper)
    moves = {n: p.detach() - start[n] for n, p in model.named_parameters() if n in start}
    return moves, grads, seen


@pytest.mark.parametrize('amp', AMPS)
def test_two_pass_step_under_amp_moves_like_float32(amp, monkeypatch):
    """The two-pass step through AmpOptimWrapper (both passes' losses scaled by 1024 in
    the wrapper's ``backward``, complete pass first): finite, unscaled gradients; every
    trainable weight moves as in the float32 step on the same masks, to 2.5 u of its move
    (measured on the CPU: at most 4.9e-3 = 1.3 u; one label and images told apart, see
    the module's docstring). In bfloat16, which needs no scaler, a disabled one gives
    the same step bit for bit (scaling by 2^10 and back is exact)."""
    device, dtype = amp
    if device == 'cpu':
        monkeypatch.setattr(amp_optimizer_wrapper, 'is_cuda_available', lambda: True)
    model = dyt_classifier().to(device)
    torch.nn.init.normal_(model.backbone.patch_embed.proj.weight, std=0.2)
    reference, unscaled = copy.deepcopy(model), copy.deepcopy(model)
    moves, grads, masks = step_moves(model, amp_wrapper(model, device, dtype))
    assert grads and all(bool(torch.isfinite(g).all()) for g in grads)
    params = [p for p in reference.parameters() if p.requires_grad]
    expected = step_moves(reference, OptimWrapper(torch.optim.SGD(params, lr=1.0)), masks)[0]
    for name, move in expected.items():
        assert float(move.abs().max()) > 1e-6, f'{name} did not move'
        error = relative_error(moves[name], move)
        assert error <= 2.5 * unit_roundoff(dtype), f'{name}: relative error {error:.2e}'
    if dtype == torch.bfloat16:
        unscaled_moves = step_moves(unscaled, amp_wrapper(unscaled, device, dtype, None), masks)[0]
        assert all(torch.equal(unscaled_moves[name], move) for name, move in moves.items())
