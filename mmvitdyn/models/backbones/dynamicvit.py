"""DynamicViT (Rao et al., NeurIPS 2021) on an AdaptFormer ViT."""
from contextlib import contextmanager
from typing import List, Optional, Sequence, Tuple, Union

import torch
import torch.nn.functional as F
from mmengine.registry import MODELS
from torch import nn

from ...checkpoint import PREDICTORS_PREFIX
from ...utils import check_int, check_number
from ..layers import PolicyAttention, TokenPredictor
from .adapter_vit import AdapterViT


@MODELS.register_module()
class DynamicViT(AdapterViT):
    """AdaptFormer ViT with DynamicViT's pruning (docs/recipes.md): before block
    ``prune_loc[k]`` a :class:`~mmvitdyn.models.layers.TokenPredictor` keeps
    ``int(N * base_rate ** (k + 1))`` of the N patch tokens (masked in training
    and with ``packed=False``, dropped in packed evaluation).

    Args:
        prune_loc (Sequence[int]): Blocks (increasing, > 0) before which tokens
            are pruned. Defaults to (3, 6, 9).
        base_rate (float): rho in (0, 1), each stage's kept fraction. Defaults to 0.7.
        gumbel_tau (float): Gumbel-softmax temperature (> 0). Defaults to 1.
        out_indices (int | Sequence[int]): The last block only (-1 or
            ``num_layers - 1``).
        **kwargs: Arguments of :class:`AdapterViT` (but ``token_reduction``).

    Attributes:
        stage_counts (list[int]): Patch tokens each stage kept in the last forward.
        decisions (list[Tensor]): Per stage, the (B, N) keep mask of the last
            masked forward (straight-through in training).
        last_tokens (Tensor): The final normalised tokens (B, 1 + N', C).
    """
    OUT_TYPES = {'cls_token'}

    OBJECTIVE_MODELS = ('DynamicViTClassifier', )

    def __init__(self,
                 arch: Union[str, dict] = 'base',
                 prune_loc: Sequence[int] = (3, 6, 9),
                 base_rate: float = 0.7,
                 gumbel_tau: float = 1.0,
                 out_indices: Union[int, Sequence[int]] = -1,
                 layer_cfgs: Union[dict, Sequence[dict]] = dict(),
                 **kwargs):
        if 'keep_rate' in kwargs:
            raise TypeError(f"DynamicViT's keep_rate={kwargs['keep_rate']} is called base_rate "
                            f"(DynamicViT's name): write base_rate={kwargs['keep_rate']}")
        if kwargs.get('token_reduction') is not None:
            raise ValueError(f"token_reduction={kwargs['token_reduction']}: DynamicViT prunes "
                             'tokens itself; a second reduction is not supported')
        arch = self._parse_arch(arch)
        num_layers = arch['num_layers']
        if self._parse_out_indices(out_indices, num_layers) != (num_layers - 1, ):
            raise ValueError(f'out_indices={out_indices}: DynamicViT returns the last block only '
                             f'(allowed: -1 or {num_layers - 1})')
        prune_loc = tuple(prune_loc)
        for index, location in enumerate(prune_loc):
            check_int(location, f'prune_loc[{index}]')
        if (not prune_loc or any(i not in range(1, num_layers) for i in prune_loc)
                or list(prune_loc) != sorted(set(prune_loc))):
            raise ValueError(f'prune_loc={prune_loc} must be increasing block indices in '
                             f'1..{num_layers - 1}')
        check_number(base_rate, 'base_rate', 0, 1, low_open=True, high_open=True)
        check_number(gumbel_tau, 'gumbel_tau', 0, low_open=True)
        entries = [dict(attn_layer=PolicyAttention)] * num_layers
        super().__init__(
            arch=arch,
            out_indices=out_indices,
            layer_cfgs=self.merge_layer_cfgs(layer_cfgs, entries, 'DynamicViT (attention)'),
            **kwargs)
        self.prune_loc = prune_loc
        self.base_rate = base_rate
        self.gumbel_tau = gumbel_tau
        # New modules, added after the trainable set was decided: they train.
        self.predictors = nn.ModuleList(TokenPredictor(self.embed_dims) for _ in prune_loc)
        self.complete = False
        self.packed = True
        self.decisions: List[torch.Tensor] = []
        self.stage_counts: List[int] = []
        self.last_tokens: Optional[torch.Tensor] = None

    def init_weights(self):
        super().init_weights()
        for predictor in self.predictors:
            predictor.reset_parameters()

    def is_new_param(self, name: str) -> bool:
        return name.startswith(PREDICTORS_PREFIX) or super().is_new_param(name)

    def keep_counts(self, num_patches: int) -> List[int]:
        """Patch tokens kept after each pruning stage: ``int(N * rho^k)``, k = 1, 2, ..."""
        return [int(num_patches * self.base_rate**(k + 1)) for k in range(len(self.prune_loc))]

    @contextmanager
    def complete_mode(self):
        """Within the context no token is pruned (the full model, DynamicViT's teacher)."""
        previous, self.complete = self.complete, True
        try:
            yield self
        finally:
            self.complete = previous

    def set_packed(self, packed: bool) -> None:
        """Choose the packed (tokens dropped) or masked evaluation path."""
        self.packed = packed

    def _decide(self, x: torch.Tensor, keep: torch.Tensor, stage: int, count: int) -> torch.Tensor:
        """Masked path: keep mask (B, N) of stage ``stage`` from tokens (B, 1 + N, C)."""
        scores = self.predictors[stage](x[:, self.num_prefix_tokens:], keep)
        if self.training:
            return F.gumbel_softmax(scores, tau=self.gumbel_tau, hard=True)[..., 0] * keep
        keep_score = scores[..., 0].masked_fill(keep == 0, float('-inf'))
        index = keep_score.topk(count, dim=1).indices
        return torch.zeros_like(keep).scatter_(1, index, 1.0)

    def _prune(self, x: torch.Tensor, stage: int, count: int) -> torch.Tensor:
        """Packed path: tokens (B, 1 + M, C) -> (B, 1 + count, C), kept in their order."""
        extra = self.num_prefix_tokens
        patches = x[:, extra:]
        scores = self.predictors[stage](patches, patches.new_ones(patches.shape[:2]))
        index = scores[..., 0].topk(count, dim=1).indices.sort(dim=1).values
        kept = patches.gather(1, index.unsqueeze(-1).expand(-1, -1, x.shape[-1]))
        return torch.cat([x[:, :extra], kept], dim=1)

    def forward_block(self, index: int, x: torch.Tensor, block_kwargs: dict) -> torch.Tensor:
        """Prune (packed evaluation) or decide a keep policy (masked path)
        before the blocks of ``prune_loc``, then run block ``index``; the
        policy stays in ``block_kwargs`` for the blocks after it."""
        if not self.complete and index in self.prune_loc:
            stage = self.prune_loc.index(index)
            extra = self.num_prefix_tokens
            count = self.stage_counts[stage]
            if self.packed and not self.training:
                x = self._prune(x, stage, count)
            else:
                keep = self.decisions[-1] if self.decisions else x.new_ones(
                    x.shape[0], x.shape[1] - extra)
                keep = self._decide(x, keep, stage, count)
                self.decisions.append(keep)
                block_kwargs['policy'] = torch.cat([keep.new_ones(x.shape[0], extra), keep], 1)
        return super().forward_block(index, x, block_kwargs)

    def needs_objective(self) -> bool:
        """The predictors train with DynamicViT's keep-ratio loss."""
        return True

    def block_kwargs(self, grid: Tuple[int, int]) -> dict:
        """Start of a forward: no decisions yet, and the keep counts of its grid."""
        self.decisions = []
        self.stage_counts = self.keep_counts(grid[0] * grid[1])
        return super().block_kwargs(grid)

    def format_output(self, x: torch.Tensor, grid: Tuple[int, int]) -> torch.Tensor:
        """Keeps the final tokens (B, 1 + N', C) as :attr:`last_tokens`."""
        self.last_tokens = x
        return super().format_output(x, grid)
