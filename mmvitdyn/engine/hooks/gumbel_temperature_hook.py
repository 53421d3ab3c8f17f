"""Schedule of the token dispatchers' Gumbel-Sigmoid temperature."""
import math

from mmengine.hooks import Hook
from mmengine.registry import HOOKS

from ...models.layers import TokenDispatcher

SCHEDULES = ('constant', 'linear', 'cosine')


@HOOKS.register_module()
class GumbelTemperatureHook(Hook):
    """Anneal ``tau`` of every :class:`TokenDispatcher` from ``start`` to ``end``.

    Args:
        start (float): Temperature at the first iteration. Defaults to 5.
        end (float): Temperature at the last iteration. Defaults to 0.1.
        schedule (str): 'constant' (stay at ``start``), 'linear' or 'cosine'.
    """
    priority = 'NORMAL'

    def __init__(self, start: float = 5.0, end: float = 0.1, schedule: str = 'linear'):
        if schedule not in SCHEDULES:
            raise ValueError(f'schedule={schedule!r} is not one of {SCHEDULES}')
        if start <= 0 or end <= 0:
            raise ValueError(f'temperatures must be > 0, got start={start}, end={end}')
        self.start, self.end, self.schedule = start, end, schedule

    def temperature(self, progress: float) -> float:
        """Temperature at ``progress`` in [0, 1] of training."""
        if self.schedule == 'constant':
            return self.start
        if self.schedule == 'linear':
            return self.start + (self.end - self.start) * progress
        return self.end + (self.start - self.end) * (1 + math.cos(math.pi * progress)) / 2

    def before_train_iter(self, runner, batch_idx: int, data_batch=None) -> None:
        tau = self.temperature(runner.iter / max(runner.max_iters - 1, 1))
        for module in runner.model.modules():
            if isinstance(module, TokenDispatcher):
                module.tau = tau
        runner.message_hub.update_scalar('train/tau', tau)
