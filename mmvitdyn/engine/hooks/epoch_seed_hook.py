"""Randomness that a resumed run replays exactly."""
from mmengine.hooks import Hook
from mmengine.registry import HOOKS
from mmengine.runner import set_random_seed


@HOOKS.register_module()
class EpochSeedHook(Hook):
    """Seed Python's, numpy's and torch's generators with ``seed + epoch``
    before each training epoch.

    mmengine seeds once, when the Runner is built, so the random numbers of
    epoch ``e`` (augmentation, drop path, the data loader workers' seeds)
    depend on everything drawn before it, validation included, and a run
    resumed from an epoch checkpoint draws different ones. Seeding each epoch
    from the Runner's seed (``randomness.seed``, per rank with
    ``diff_rank_seed``) and the epoch makes a resumed epoch-based run repeat
    the uninterrupted one. The sampler's shuffling is seeded by epoch already
    (``DistSamplerSeedHook``).
    """
    priority = 'VERY_HIGH'

    def before_train_epoch(self, runner) -> None:
        set_random_seed(runner.seed + runner.epoch)
