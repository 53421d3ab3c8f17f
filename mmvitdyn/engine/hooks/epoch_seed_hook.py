"""Randomness that a resumed run replays exactly."""
from mmengine.hooks import Hook
from mmengine.registry import HOOKS
from mmengine.runner import set_random_seed


@HOOKS.register_module()
class EpochSeedHook(Hook):
    """Seed Python's, numpy's and torch's generators with ``seed + epoch`` before each
    training epoch (``seed``: the Runner's ``randomness.seed``, per rank with
    ``diff_rank_seed``), so a resumed epoch-based run repeats the uninterrupted one."""
    priority = 'VERY_HIGH'

    def before_train_epoch(self, runner) -> None:
        set_random_seed(runner.seed + runner.epoch)
