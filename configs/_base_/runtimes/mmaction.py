# mmaction2's runtime with a fixed seed: every runnable mmaction-scope config of
# mmvitdyn inherits this file, so the same config gives the same numbers (see
# configs/_base_/runtimes/mmpretrain.py for what the seed covers).
_base_ = ['mmaction::_base_/default_runtime.py']
randomness = dict(seed=0, deterministic=False)
