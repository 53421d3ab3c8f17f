"""Distributed data-parallel wrappers: on processes without an accelerator (gloo
backend), and for models whose training step runs two passes
(docs/design_notes.md)."""
import torch.distributed as dist
from mmengine.logging import print_log
from mmengine.model import MMDistributedDataParallel
from mmengine.registry import MODEL_WRAPPERS

from ..settings import launcher_rank, missing_torchrun_variables


@MODEL_WRAPPERS.register_module()
class CPUDistributedDataParallel(MMDistributedDataParallel):
    """``MMDistributedDataParallel`` for a model that lives on the CPU."""

    def __init__(self, module, device_ids=None, **kwargs):
        super().__init__(module=module, device_ids=None, **kwargs)


class TwoPassStepMixin:
    """``train_step`` = the wrapped model's ``two_pass_step(data, optim_wrapper, self)``,
    both passes' forwards called through the wrapper; ``static_graph`` is refused."""

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

    An unset or 'nccl' ``env_cfg.dist_cfg.backend`` becomes 'gloo' in ``cfg``
    (logged); other backends (mpi, ccl ...) are kept.

    Args:
        cfg (Config): Runner config, changed in place.
    """
    dist_cfg = cfg.setdefault('env_cfg', {}).setdefault('dist_cfg', {})
    if dist_cfg.get('backend', 'nccl') == 'nccl':
        if launcher_rank() == 0:  # said once per run
            print_log(
                "No GPU is visible: distributed training uses the gloo backend "
                f"(env_cfg.dist_cfg.backend was {dist_cfg.get('backend', 'nccl')!r})",
                logger='current')
        dist_cfg['backend'] = 'gloo'
    missing = missing_torchrun_variables()
    if missing:
        raise RuntimeError(f'--launcher pytorch needs {missing} in the environment; '
                           'start through tools/dist_train.sh (torchrun)')
    if not dist.is_initialized():
        dist.init_process_group(backend=dist_cfg['backend'], init_method='env://')
