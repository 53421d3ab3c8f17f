"""EViT's keep-rate warm-up: the kept fraction of the tokens falls from 1 to its target."""
import math

from mmengine.hooks import Hook
from mmengine.registry import HOOKS

from ...models.token_reduction import EViT
from ...utils import check_int


@HOOKS.register_module()
class EViTKeepRateHook(Hook):
    """Set every :class:`EViT`'s ``current_rate`` before each training iteration t
    (L an epoch): 1 before epoch ``start_epoch`` (int, default 10), its ``keep_rate``
    k from epoch ``start_epoch + shrink_epochs`` (int, default 0), between
    ``k + (1 - k) (1 + cos(pi s)) / 2``, ``s = (t - L start_epoch) / (L shrink_epochs)``.
    """
    priority = 'NORMAL'

    def __init__(self, start_epoch: int = 10, shrink_epochs: int = 0):
        self.start_epoch = check_int(start_epoch, 'start_epoch', minimum=0)
        self.shrink_epochs = check_int(shrink_epochs, 'shrink_epochs', minimum=0)
        self.reductions = []

    def scheduled_rate(self, iteration: int, iters_per_epoch: int, target: float) -> float:
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
        """Find the EViT modules of the model."""
        self.reductions = [m for m in runner.model.modules() if isinstance(m, EViT)]
        if not self.reductions:
            raise ValueError('EViTKeepRateHook found no EViT module in the model (allowed: a '
                             "backbone with token_reduction=dict(type='EViT', ...))")

    def before_train_iter(self, runner, batch_idx: int, data_batch=None) -> None:
        iters_per_epoch = len(runner.train_dataloader)
        for module in self.reductions:
            module.current_rate = self.scheduled_rate(runner.iter, iters_per_epoch,
                                                      module.keep_rate)
        rates = [module.current_rate for module in self.reductions]
        runner.message_hub.update_scalar('train/keep_rate', sum(rates) / len(rates))
