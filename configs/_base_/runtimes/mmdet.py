# mmdet's runtime with a fixed seed: every runnable mmdet-scope config of
# mmvitdyn inherits this file, so the same config gives the same numbers.
# mmengine seeds Python, NumPy and torch from randomness.seed (each data
# loader worker from it too); tools/train.py's EpochSeedHook reseeds each
# epoch of an epoch-based run from (seed, epoch). Another seed:
# --cfg-options randomness.seed=N, or a sweep's seed axis
# (configs/sweeps/dyt_digits-tasks-mini.py). On a GPU,
# randomness.deterministic=True also makes cuDNN and torch pick only
# deterministic kernels (slower; some ops then raise instead).
_base_ = ['mmdet::_base_/default_runtime.py']
randomness = dict(seed=0, deterministic=False)
