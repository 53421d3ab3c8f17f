"""Distributed data-parallel wrappers: on processes without an accelerator
(gloo backend), and for models whose training step runs two passes.

mmengine 0.10.7 assumes a GPU per process: ``init_dist('pytorch')`` calls
``torch.cuda.set_device`` and the Runner wraps the model in DDP with
``device_ids=[LOCAL_RANK]``, which torch rejects for a CPU module. Here the
process group is initialised before the Runner (which then skips its own
initialisation) and the model is wrapped without device ids.

mmengine's wrapper trains through the model's ``loss()``: for a model with a
two-pass step (``two_pass_step``, e.g. DyTImageClassifier) that holds both
passes' graphs at once. The two-pass wrappers run the model's own step
instead; see :class:`TwoPassStepMixin`.
"""
import os

import torch.distributed as dist
from mmengine.logging import print_log
from mmengine.model import MMDistributedDataParallel
from mmengine.registry import MODEL_WRAPPERS


@MODEL_WRAPPERS.register_module()
class CPUDistributedDataParallel(MMDistributedDataParallel):
    """``MMDistributedDataParallel`` for a model that lives on the CPU."""

    def __init__(self, module, device_ids=None, **kwargs):
        super().__init__(module=module, device_ids=None, **kwargs)


class TwoPassStepMixin:
    """``train_step`` = the wrapped model's ``two_pass_step(data, optim_wrapper, self)``.

    Both passes' forwards are called through the wrapper, i.e. through DDP's
    forward, which is what arms DDP's gradient hooks for the next backward;
    a forward called on the bare module would leave them unarmed and its
    gradients unreduced. The model runs the first (complete) pass and its
    backward under ``no_sync()``: those gradients stay local and accumulate,
    and the dynamic pass's backward all-reduces the sum, bucket by bucket as
    it is produced, once per iteration. ``find_unused_parameters`` searches
    the graph of that synchronised pass (DyTImageClassifier's dynamic pass
    uses every trainable parameter). Gradient accumulation
    (``optim_wrapper.optim_context(self)``) wraps the whole step in
    ``no_sync()`` on iterations that do not update. ``static_graph`` is
    refused: DDP's static-graph bookkeeping expects one synchronised forward
    and backward per iteration and fails on the unsynchronised first pass.
    """

    def __init__(self, module, **kwargs):
        if not callable(getattr(module, 'two_pass_step', None)):
            raise TypeError(f'{type(self).__name__} needs a model with a two_pass_step method, '
                            f'and {type(module).__name__} has none; use '
                            'MMDistributedDataParallel (CPUDistributedDataParallel on the CPU)')
        if kwargs.get('detect_anomalous_params', False):
            raise ValueError(f'{type(self).__name__}: detect_anomalous_params=True is not '
                             'supported (the step back-propagates two losses); use '
                             'MMDistributedDataParallel to look for anomalous parameters')
        if kwargs.get('static_graph', False):
            raise ValueError(f'{type(self).__name__}: static_graph=True is not supported '
                             '(two forwards per iteration, the first under no_sync)')
        super().__init__(module=module, **kwargs)

    def train_step(self, data, optim_wrapper):
        """One iteration of the model's two-pass step; returns the losses to log."""
        return self.module.two_pass_step(data, optim_wrapper, self)


@MODEL_WRAPPERS.register_module()
class TwoPassDistributedDataParallel(TwoPassStepMixin, MMDistributedDataParallel):
    """``MMDistributedDataParallel`` running the model's two-pass step (one process per GPU)."""


@MODEL_WRAPPERS.register_module()
class CPUTwoPassDistributedDataParallel(TwoPassStepMixin, CPUDistributedDataParallel):
    """``CPUDistributedDataParallel`` running the model's two-pass step."""


# The wrapper a distributed run uses when its config names none, by
# (model on the CPU, model class has a two_pass_step).
DEFAULT_WRAPPERS = {
    (False, False): 'MMDistributedDataParallel',
    (False, True): 'TwoPassDistributedDataParallel',
    (True, False): 'CPUDistributedDataParallel',
    (True, True): 'CPUTwoPassDistributedDataParallel',
}


def default_model_wrapper(model_class: type, on_cpu: bool) -> str:
    """The registered wrapper type for ``model_class`` (see ``DEFAULT_WRAPPERS``)."""
    return DEFAULT_WRAPPERS[on_cpu, callable(getattr(model_class, 'two_pass_step', None))]


def init_cpu_distributed(cfg) -> None:
    """Initialise a CPU process group from torchrun's environment variables.

    NCCL (mmengine's default backend) needs GPUs: an unset or 'nccl'
    ``env_cfg.dist_cfg.backend`` becomes 'gloo' in ``cfg``, and a log line
    says so; other backends (mpi, ccl ...) are kept.

    Args:
        cfg (Config): Runner config, changed in place.
    """
    dist_cfg = cfg.setdefault('env_cfg', {}).setdefault('dist_cfg', {})
    if dist_cfg.get('backend', 'nccl') == 'nccl':
        if os.environ.get('RANK', '0') == '0':  # said once per run
            print_log(
                "No GPU is visible: distributed training uses the gloo backend "
                f"(env_cfg.dist_cfg.backend was {dist_cfg.get('backend', 'nccl')!r})",
                logger='current')
        dist_cfg['backend'] = 'gloo'
    missing = [
        k for k in ('RANK', 'WORLD_SIZE', 'MASTER_ADDR', 'MASTER_PORT') if k not in os.environ
    ]
    if missing:
        raise RuntimeError(f'--launcher pytorch needs {missing} in the environment; '
                           'start through tools/dist_train.sh (torchrun)')
    if not dist.is_initialized():
        dist.init_process_group(backend=dist_cfg['backend'], init_method='env://')
