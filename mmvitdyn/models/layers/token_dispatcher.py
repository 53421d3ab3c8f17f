"""DyT token dispatcher: per token, per block part, run it or skip it."""
import math
from typing import Optional

import torch
from mmengine.model.weight_init import trunc_normal_
from torch import nn
from torch.nn import functional as F

from ...utils import check_bool, check_number

# How a dispatcher turns gate logits into a mask: DyT's threshold at logit 0
# (a learned, input-dependent number of tokens), a hard top-k per image with
# DyT's straight-through sigmoid gradient, or CoDA's soft top-k (a fixed
# top-k per image whose outputs are scaled by the soft top-k weights).
DISPATCH_MODES = ('threshold', 'topk', 'soft_topk')
# The modes that keep a fixed count of tokens per image (they take ``topk_rate``).
TOPK_MODES = ('topk', 'soft_topk')
# How :func:`soft_topk` solves for lambda: CoDA's fixed dual rounds, or exactly.
SOFT_TOPK_SOLVERS = ('coda', 'exact')
# CoDA's rounds and epsilon-scaling: 20 rounds, the first at epsilon 4, each
# next one at 0.7 times the last, never below the target (docs/recipes.md).
CODA_ROUNDS = 20
CODA_EPSILON_START = 4.0
CODA_EPSILON_DECAY = 0.7
# Halvings of the bracket on the row shift of the exact solver (float64: far below float32 eps).
BISECTION_STEPS = 64


def topk_count(topk_rate: float, num_tokens: int) -> int:
    """Tokens kept of ``num_tokens`` at ``topk_rate``: round(r * N), halves rounded up."""
    return int(math.floor(topk_rate * num_tokens + 0.5))


def soft_topk(scores: torch.Tensor, k: int, epsilon: float, solver: str = 'coda') -> torch.Tensor:
    """Soft top-k weights of Conditional Adapters (CoDA, Lei et al. 2023).

    Per row of ``scores`` s, ``lambda`` solves ``max <s, lambda> + epsilon *
    H(lambda)``, ``H(lambda) = -sum lambda_i log lambda_i``, ``sum lambda = k``,
    ``0 <= lambda_i <= 1``: ``lambda_i = min(1, exp((s_i + a) / epsilon))`` for the
    one ``a`` per row that makes the row sum k. ``solver='coda'``: CoDA's
    :data:`CODA_ROUNDS` rounds on the duals a (per row) and b (per token) from
    ``b = -s``, round t at ``eps_t = max(4 * 0.7^t, epsilon)``::

        a <- eps_t * (log k - logsumexp((s + b) / eps_t))
        b <- -relu(s + a)

    then ``lambda = exp(min(s + a, 0) / eps_T)``, differentiated through the
    rounds. ``solver='exact'``: ``a`` by bisection, with the implicit gradient
    ``da/ds_j = -lambda_j / sum_free lambda_i`` over the weights below 1.

    Args:
        scores (Tensor): Router scores (B, N).
        k (int): Weight to distribute per row, 0 <= k <= N (k = 0 or N: all
            0 or all 1).
        epsilon (float): Entropy weight (> 0); smaller is closer to hard top-k.
        solver (str): 'coda' (CoDA's rounds) or 'exact'. Defaults to 'coda'.

    Returns:
        Tensor: lambda (B, N), values in [0, 1]; rows summing to k ('exact')
        or short of it once the scores spread beyond epsilon ('coda').
    """
    if solver not in SOFT_TOPK_SOLVERS:
        raise ValueError(f'soft_topk solver={solver!r} is not one of {SOFT_TOPK_SOLVERS}')
    n = scores.shape[-1]
    if k <= 0 or k >= n:
        return torch.full_like(scores, float(k > 0))
    if solver == 'coda':
        return _coda_rounds(scores, k, epsilon)
    return _exact_soft_topk(scores, k, epsilon)


def _coda_rounds(scores: torch.Tensor, k: int, epsilon: float) -> torch.Tensor:
    """lambda (B, N) after CoDA's dual rounds (see :func:`soft_topk`)."""
    log_k = math.log(k)
    b = -scores
    current = max(CODA_EPSILON_START, epsilon)
    for _ in range(CODA_ROUNDS):
        a = current * (log_k - torch.logsumexp((scores + b) / current, dim=-1, keepdim=True))
        b = -F.relu(scores + a)
        current = max(current * CODA_EPSILON_DECAY, epsilon)
    return torch.exp((scores + a + b) / current)


def _exact_soft_topk(scores: torch.Tensor, k: int, epsilon: float) -> torch.Tensor:
    """lambda (B, N) solved exactly, 0 < k < N (see :func:`soft_topk`)."""
    z = scores / epsilon
    with torch.no_grad():
        # In units of epsilon: a row sums to <= k at `low` (without the cap
        # at 1 it sums to k) and to n at `high` (every weight capped).
        s = z.double()
        low = math.log(k) - torch.logsumexp(s, dim=-1, keepdim=True)
        high = -s.amin(dim=-1, keepdim=True)
        for _ in range(BISECTION_STEPS):
            middle = (low + high) / 2
            below = torch.exp((s + middle).clamp(max=0)).sum(-1, keepdim=True) < k
            low, high = torch.where(below, middle, low), torch.where(below, high, middle)
    z = z + ((low + high) / 2).to(z.dtype)
    free = (torch.exp(z.clamp(max=0)) * (z < 0)).detach()
    # a's implicit gradient; the correction is 0 in value (and in gradient
    # when no weight is strictly between 0 and 1, the hard top-k).
    shift = z - z.detach()
    total = free.sum(-1, keepdim=True).clamp_min(torch.finfo(free.dtype).tiny)
    correction = -(free * shift).sum(-1, keepdim=True) / total
    return torch.exp((z + correction).clamp(max=0))


class TokenDispatcher(nn.Module):
    """Gate over tokens from a linear gate ``logit = w^T x + b``.

    - ``mode='threshold'`` (DyT): in training ``y = sigmoid((logit + g1 - g2) / tau)``,
      g1, g2 ~ Gumbel(0, 1) (no noise with ``gumbel=False``), the mask ``1[y > 0.5]``
      with the gradient of ``y``; in evaluation ``1[logit >= 0]``.
    - ``mode='topk'``: every image keeps the ``k = round(topk_rate * N)`` patch
      tokens of largest logits (with the noise in training when ``gumbel``), with
      the gradient of ``y = sigmoid(logit' / tau)`` (``hard - y.detach() + y``).
    - ``mode='soft_topk'`` (CoDA): the same k tokens, the mask ``m = lambda *
      1[top-k]`` carrying their :func:`soft_topk` weights (by ``solver``); no
      noise, gradients through lambda, the same mask in training and evaluation.

    The first ``num_prefix_tokens`` tokens (class token ...) are always active (mask 1).

    Args:
        dim (int): Token width C.
        tau (float): Gumbel-Sigmoid temperature of 'threshold' and 'topk'.
            Defaults to 5.
        gumbel (bool): Add Gumbel noise in training ('threshold', 'topk');
            'soft_topk' needs False. Defaults to True.
        mode (str): 'threshold' (default), 'topk' or 'soft_topk'.
        topk_rate (float, optional): Kept fraction r in (0, 1] of 'topk' and
            'soft_topk'; must be None for 'threshold'.
        epsilon (float, optional): Entropy weight of 'soft_topk' (> 0); must
            be None for the other modes.
        solver (str, optional): 'coda' (CoDA's fixed dual rounds, used when None)
            or 'exact' (rows sum to k) for 'soft_topk'; must be None for the other
            modes. Defaults to None.
    """

    def __init__(self,
                 dim: int,
                 tau: float = 5.0,
                 gumbel: bool = True,
                 mode: str = 'threshold',
                 topk_rate: Optional[float] = None,
                 epsilon: Optional[float] = None,
                 solver: Optional[str] = None):
        super().__init__()
        check_number(tau, 'dispatcher_cfg.tau', 0, low_open=True)
        check_bool(gumbel, 'dispatcher_cfg.gumbel')
        if mode not in DISPATCH_MODES:
            raise ValueError(f'dispatcher mode={mode!r} is not one of {DISPATCH_MODES}')
        if mode in TOPK_MODES:
            check_number(topk_rate, 'dispatcher topk_rate', 0, 1, low_open=True)
        elif topk_rate is not None:
            raise ValueError(f"dispatcher topk_rate={topk_rate!r} is only for mode='topk' or "
                             "'soft_topk'; mode='threshold' learns its rate: leave it None")
        if mode == 'soft_topk':
            check_number(epsilon, 'dispatcher_cfg.epsilon', 0, low_open=True)
            if gumbel:
                raise ValueError("dispatcher_cfg.gumbel=True: mode='soft_topk' (CoDA's soft "
                                 'top-k) adds no noise; set gumbel=False')
            solver = 'coda' if solver is None else solver
            if solver not in SOFT_TOPK_SOLVERS:
                raise ValueError(f'dispatcher_cfg.solver={solver!r} is not one of '
                                 f'{SOFT_TOPK_SOLVERS}')
        else:
            for name, value in (('epsilon', epsilon), ('solver', solver)):
                if value is not None:
                    raise ValueError(f"dispatcher_cfg.{name}={value!r} is only for "
                                     f"mode='soft_topk' (mode={mode!r}): leave it None")
        self.gate = nn.Linear(dim, 1)
        self.tau = tau
        self.gumbel = gumbel
        self.mode = mode
        self.topk_rate = topk_rate
        self.epsilon = epsilon
        self.solver = solver
        self.reset_parameters()

    def reset_parameters(self):
        """Initialise like the ViT's linears: about half the tokens start active."""
        trunc_normal_(self.gate.weight, std=.02)
        nn.init.zeros_(self.gate.bias)

    def _topk(self, logits: torch.Tensor) -> torch.Tensor:
        """0/1 mask (B, N): 1 at the ``round(topk_rate * N)`` largest logits of each row."""
        k = topk_count(self.topk_rate, logits.shape[1])
        keep = logits.topk(k, dim=1).indices
        return torch.zeros_like(logits).scatter_(1, keep, 1.0)

    def _soft_topk(self, logits: torch.Tensor) -> torch.Tensor:
        """``lambda * 1[top-k]`` (B, N) of the logits (see :func:`soft_topk`)."""
        hard = self._topk(logits.detach())
        k = topk_count(self.topk_rate, logits.shape[1])
        weights = soft_topk(logits, k, self.epsilon, self.solver)
        return weights * hard

    def forward(self, x: torch.Tensor, num_prefix_tokens: int = 1) -> torch.Tensor:
        """Tokens (B, N, C) -> mask (B, N): 0/1 values ('threshold', 'topk'), or
        lambda of the kept tokens and 0 ('soft_topk')."""
        # Gate every token, then drop the extra ones: slicing first would copy x. The
        # mask arithmetic is a float32 island (B * N values) also under autocast:
        # bfloat16 uniforms stop at 1 - 2^-8, cutting the Logistic noise's upper tail
        # at 5.5, and a bfloat16 sigmoid rounds logits in (0, 0.008 tau) to 0.5 (skipped).
        logits = self.gate(x).squeeze(-1)[:, num_prefix_tokens:]
        logits = logits.to(torch.promote_types(logits.dtype, torch.float32))
        if self.mode == 'soft_topk':
            mask = self._soft_topk(logits)
        elif self.training:
            if self.gumbel:
                # g1 - g2 of two i.i.d. Gumbel(0, 1) draws is Logistic(0, 1).
                u = torch.rand_like(logits).clamp_(1e-6, 1 - 1e-6)
                logits = logits + torch.log(u) - torch.log1p(-u)
            soft = torch.sigmoid(logits / self.tau)
            if self.mode == 'topk':
                hard = self._topk(logits.detach())
            else:
                hard = (soft > 0.5).to(soft.dtype)
            mask = hard - soft.detach() + soft
        elif self.mode == 'topk':
            mask = self._topk(logits)
        else:
            mask = (logits >= 0).to(x.dtype)
        extra = mask.new_ones(mask.shape[0], num_prefix_tokens)
        return torch.cat([extra, mask], dim=1).to(x.dtype)
