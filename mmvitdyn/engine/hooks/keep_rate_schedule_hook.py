"""EViT's keep-rate warm-up: the kept fraction of the tokens falls from 1 to its target."""
import math

from mmengine.hooks import Hook
from mmengine.registry import HOOKS

from ...models.token_reduction import EViT
from ...utils import check_int


@HOOKS.register_module()
class EViTKeepRateHook(Hook):
    """Lower the keep rate of every :class:`EViT` of the model from 1 to the
    ``keep_rate`` it was built with, before each training iteration.

    Iteration ``t`` (0-based; epoch ``e = t // L``, L iterations an epoch) keeps
    rate 1 while ``e < start_epoch``, the target ``k`` from epoch ``start_epoch +
    shrink_epochs`` on, and in between ``k + (1 - k) * (1 + cos(pi * s)) / 2`` with
    ``s = (t - L * start_epoch) / (L * shrink_epochs)``. Validation runs at the
    last training rate; the rate is logged as ``train/keep_rate`` (mean over EViTs).

    Args:
        start_epoch (int): First epoch whose rate is below 1. Defaults to 10.
        shrink_epochs (int): Epochs of the cosine from 1 to the target; 0
            reduces at the target from ``start_epoch`` on. Defaults to 0.
    """
    priority = 'NORMAL'

    def __init__(self, start_epoch: int = 10, shrink_epochs: int = 0):
        self.start_epoch = check_int(start_epoch, 'start_epoch', minimum=0)
        self.shrink_epochs = check_int(shrink_epochs, 'shrink_epochs', minimum=0)
        self.targets = {}

    def keep_rate(self, iteration: int, iters_per_epoch: int, target: float) -> float:
        """The rate of training iteration ``iteration`` for the target ``target``."""
        epoch = iteration // iters_per_epoch
        if epoch < self.start_epoch:
            return 1.0
        if epoch >= self.start_epoch + self.shrink_epochs:
            return target
        progress = (iteration - iters_per_epoch * self.start_epoch) / (
            iters_per_epoch * self.shrink_epochs)
        return target + (1 - target) * (1 + math.cos(math.pi * progress)) / 2

    def before_train(self, runner) -> None:
        """Read the targets: the rates the EViT modules were built with."""
        self.targets = {m: m.keep_rate for m in runner.model.modules() if isinstance(m, EViT)}
        if not self.targets:
            raise ValueError('EViTKeepRateHook found no EViT module in the model (allowed: a '
                             "backbone with token_reduction=dict(type='EViT', ...))")

    def before_train_iter(self, runner, batch_idx: int, data_batch=None) -> None:
        iters_per_epoch = len(runner.train_dataloader)
        for module, target in self.targets.items():
            module.keep_rate = self.keep_rate(runner.iter, iters_per_epoch, target)
        rates = [module.keep_rate for module in self.targets]
        runner.message_hub.update_scalar('train/keep_rate', sum(rates) / len(rates))
