"""Distributed training on processes without an accelerator (gloo backend).

mmengine 0.10.7 assumes a GPU per process: ``init_dist('pytorch')`` calls
``torch.cuda.set_device`` and the Runner wraps the model in DDP with
``device_ids=[LOCAL_RANK]``, which torch rejects for a CPU module. Here the
process group is initialised before the Runner (which then skips its own
initialisation) and the model is wrapped without device ids.
"""
import os

import torch.distributed as dist
from mmengine.model import MMDistributedDataParallel
from mmengine.registry import MODEL_WRAPPERS


@MODEL_WRAPPERS.register_module()
class CPUDistributedDataParallel(MMDistributedDataParallel):
    """``MMDistributedDataParallel`` for a model that lives on the CPU."""

    def __init__(self, module, device_ids=None, **kwargs):
        super().__init__(module=module, device_ids=None, **kwargs)


def init_cpu_distributed(cfg) -> None:
    """Initialise a gloo process group from torchrun's environment variables.

    Args:
        cfg (Config): Runner config; ``env_cfg.dist_cfg.backend`` must be 'gloo'.
    """
    backend = cfg.get('env_cfg', {}).get('dist_cfg', {}).get('backend', 'nccl')
    if backend != 'gloo':
        raise RuntimeError(f"env_cfg.dist_cfg.backend={backend!r} needs GPUs, and none is visible; "
                           "on the CPU use --cfg-options env_cfg.dist_cfg.backend=gloo")
    missing = [
        k for k in ('RANK', 'WORLD_SIZE', 'MASTER_ADDR', 'MASTER_PORT') if k not in os.environ
    ]
    if missing:
        raise RuntimeError(f'--launcher pytorch needs {missing} in the environment; '
                           'start through tools/dist_train.sh (torchrun)')
    if not dist.is_initialized():
        dist.init_process_group(backend='gloo', init_method='env://')
    cfg.model_wrapper_cfg = dict(type='CPUDistributedDataParallel')
