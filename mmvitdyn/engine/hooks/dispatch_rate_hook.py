"""Activation rates of DyT backbones in validation and test logs."""
from collections import defaultdict

from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper
from mmengine.registry import HOOKS

from ...models.backbones import DynamicBackbone


@HOOKS.register_module()
class DispatchRateHook(Hook):
    """Log ``act_rate`` and ``act_rate/<layer>.<part>`` of val/test epochs for any
    model whose ``backbone`` is a :class:`~mmvitdyn.models.backbones.DynamicBackbone`:
    the rates of every backbone forward of the epoch, weighted by its number of
    images or crops, averaged."""
    priority = 'NORMAL'  # before LoggerHook, which prints the epoch's scalars

    def __init__(self):
        self._sums = defaultdict(float)
        self._images = 0
        self._handle = None

    def _start(self, runner) -> None:
        self._sums.clear()
        self._images = 0
        model = runner.model.module if is_model_wrapper(runner.model) else runner.model
        backbone = getattr(model, 'backbone', None)
        if isinstance(backbone, DynamicBackbone):
            self._handle = backbone.register_forward_hook(self._accumulate)

    def _accumulate(self, backbone, args, output) -> None:
        images = len(args[0])
        for key, value in backbone.activation_rates().items():
            self._sums[key] += value * images
        self._images += images

    def _publish(self, runner, mode: str) -> None:
        if self._handle is not None:
            self._handle.remove()
            self._handle = None
        for key, total in self._sums.items():
            runner.message_hub.update_scalar(f'{mode}/{key}', total / self._images)

    before_val_epoch = before_test_epoch = _start

    def after_val_epoch(self, runner, metrics=None) -> None:
        self._publish(runner, 'val')

    def after_test_epoch(self, runner, metrics=None) -> None:
        self._publish(runner, 'test')
