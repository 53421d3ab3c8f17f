"""Per-input FLOPs of DyT models (an image, or a clip of frames): the tokens actually
active (docs/benchmarks.md)."""
from contextlib import contextmanager
from typing import Dict, Iterator, List, NamedTuple, Optional

import torch
from torch import nn

from mmvitdyn.models.backbones import DyTViT
from mmvitdyn.models.layers import GATED_SUBLAYERS, TokenDispatcher
from .static_flops import flop_analyzer

# The modules of each gated sub-layer (names inside a DyTBlock), split by how
# their cost grows with the active tokens: linearly, or quadratically (the
# attention matmuls, counted at the operator). ``norm1`` runs on every token
# in all variants.
LINEAR_MODULES = {'mlp': ('norm2', 'mlp'), 'attn': ('attn.qkv', 'attn.proj')}
QUADRATIC_OPS = {'attn': ('attn', 'scaled_dot_product_attention')}


class PartCost(NamedTuple):
    """One dispatched part's FLOPs at ``num_tokens`` (N) tokens, from the dense
    trace: ``linear`` in the active tokens, ``quadratic`` in their square."""
    linear: int
    quadratic: int
    num_tokens: int

    def saving(self, active: torch.Tensor) -> torch.Tensor:
        """FLOPs not spent when only ``active`` (B,) of the N tokens run."""
        frac = active.double() / self.num_tokens
        return self.linear * (1 - frac) + self.quadratic * (1 - frac**2)


@contextmanager
def all_tokens_active(model: nn.Module) -> Iterator[None]:
    """Every token dispatcher of ``model`` returns its mask clamped to 1 (all active)."""
    handles = [
        m.register_forward_hook(lambda _, args, mask: mask.clamp(min=1)) for m in model.modules()
        if isinstance(m, TokenDispatcher)
    ]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


class _WithMasks(nn.Module):
    """``model(x)`` that also returns the dispatch masks (the gates stay in the trace)."""

    def __init__(self, model: nn.Module, backbone: DyTViT):
        super().__init__()
        self.model = model
        self.blocks = list(backbone.dyt_blocks())

    def forward(self, x: torch.Tensor):
        out = self.model(x)
        return out, tuple(m for block in self.blocks for m in block.masks.values())


def find_dyt_backbone(model: nn.Module) -> Optional[DyTViT]:
    """The :class:`DyTViT` in ``model`` (itself, or e.g. ``model.backbone``); None if none."""
    return next((m for m in model.modules() if isinstance(m, DyTViT)), None)


class DyTFlopCounter:
    """Per-input FLOPs of a DyT model from the dispatch masks of its forward.

    Args:
        model (nn.Module): ``model(image)`` in eval mode: a :class:`DyTViT` or
            a module holding one (:class:`TensorForward` adds neck and head; a
            video model runs its ViT on every frame of a clip).
        image (Tensor): One input at the evaluation size: an image (1, 3, H, W),
            or a clip (1, C, T, H, W) (a recogniser's (1, views, C, T, H, W)).

    Attributes:
        static_flops (int): FLOPs of one input with every token active.
        frames (int): Rows of the dispatch masks per input: 1 for an image,
            the frames of all views for a clip.
        part_costs (list[dict[str, PartCost]]): Per DyT block and part, of one frame.
    """

    def __init__(self, model: nn.Module, image: torch.Tensor):
        if image.shape[0] != 1:
            raise ValueError(f'image must hold one input (batch 1), got shape {tuple(image.shape)}')
        backbone = find_dyt_backbone(model)
        if backbone is None:
            raise TypeError(f'{type(model).__name__} contains no DyTViT backbone')
        if model.training:
            raise ValueError('model is in training mode; count FLOPs after model.eval()')
        self.backbone = backbone
        traced = _WithMasks(model, backbone)
        with all_tokens_active(model), torch.no_grad():
            analyzer = flop_analyzer(traced, (image, ))
            self.static_flops = analyzer.total()
            by_module = analyzer.by_module()
            by_module_op = analyzer.by_module_and_operator()
        names = {id(m): name for name, m in traced.named_modules()}
        self.frames = 1
        self.part_costs: List[Dict[str, PartCost]] = []
        for block in backbone.dyt_blocks():
            prefix = names[id(block)] + '.'
            costs = {}
            for part, mask in block.masks.items():
                self.frames = mask.shape[0]  # every frame has the same shape and cost
                linear = quadratic = 0
                for component in GATED_SUBLAYERS[part]:
                    linear += sum(by_module[prefix + m] for m in LINEAR_MODULES[component])
                    if component in QUADRATIC_OPS:
                        module, op = QUADRATIC_OPS[component]
                        quadratic += by_module_op[prefix + module][op]
                costs[part] = PartCost(linear // self.frames, quadratic // self.frames,
                                       mask.shape[1])
            self.part_costs.append(costs)

    def __call__(self, masks: List[Dict[str, torch.Tensor]]) -> torch.Tensor:
        """FLOPs per input (B,) given per-block patch masks (``dispatch_masks()``:
        (B * frames, N), an input's frames consecutive)."""
        if len(masks) != len(self.part_costs):
            raise ValueError(f'got masks of {len(masks)} blocks, the model has '
                             f'{len(self.part_costs)}')
        extra = self.backbone.num_prefix_tokens
        savings = []
        for block_masks, costs in zip(masks, self.part_costs):
            if set(block_masks) != set(costs):
                raise ValueError(f'masks of parts {sorted(block_masks)} do not match the '
                                 f'dispatched parts {sorted(costs)}')
            for part, mask in block_masks.items():
                if mask.shape[0] % self.frames:
                    raise ValueError(f'masks of {mask.shape[0]} frames are not whole inputs of '
                                     f'{self.frames} frames each')
                active = extra + (mask.detach() != 0).sum(1).cpu()
                savings.append(costs[part].saving(active).reshape(-1, self.frames).sum(1))
        if not savings:
            raise ValueError('the model dispatches no block part: its FLOPs are static_flops')
        return self.static_flops - torch.stack(savings).sum(0)

    def from_last_forward(self) -> torch.Tensor:
        """FLOPs per input (B,) of the backbone's last (evaluation) forward."""
        return self(self.backbone.dispatch_masks())
