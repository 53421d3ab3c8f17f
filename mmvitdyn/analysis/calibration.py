"""Dispatcher gate biases that reach a chosen activation rate (docs/benchmarks.md)."""
import torch
from torch import nn

from mmvitdyn.models.layers import TokenDispatcher


def _threshold(logits: torch.Tensor, num_active: int) -> float:
    """A logit threshold with exactly ``num_active`` of ``logits`` at or above it."""
    ranked = logits.flatten().sort(descending=True).values
    if num_active == 0:
        return float(ranked[0]) + 1.0
    if num_active == ranked.numel():
        return float(ranked[-1]) - 1.0
    return float(ranked[num_active - 1] + ranked[num_active]) / 2


@torch.no_grad()
def calibrate_gates(model: nn.Module, images: torch.Tensor, rate: float) -> None:
    """Shift every dispatcher's gate bias in one eval forward of ``model(images)``
    ((B, 3, H, W)) so that ``rate`` (in [0, 1]) of the batch's patch tokens are
    active in every dispatched part."""
    if not 0 <= rate <= 1:
        raise ValueError(f'rate={rate} must lie in [0, 1]')
    if model.training:
        raise ValueError('calibrate_gates needs the model in eval mode (deterministic masks)')

    def shift_bias(dispatcher: TokenDispatcher, args):
        x, num_prefix_tokens = (args + (1, ))[:2]
        logits = dispatcher.gate(x[:, num_prefix_tokens:])
        dispatcher.gate.bias -= _threshold(logits, round(rate * logits.numel()))

    dispatchers = [m for m in model.modules() if isinstance(m, TokenDispatcher)]
    if not dispatchers:
        raise ValueError(f'{type(model).__name__} has no token dispatcher to calibrate')
    handles = [d.register_forward_pre_hook(shift_bias) for d in dispatchers]
    try:
        model(images)
    finally:
        for handle in handles:
            handle.remove()
