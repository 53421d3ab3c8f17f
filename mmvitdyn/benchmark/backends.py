"""The models of a benchmark timed under several backends side by side, and their rows
(``--backends``; docs/benchmarks.md, "The exported model")."""
import os.path as osp
from functools import partial
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import torch
from torch import nn

from ..deployment import OnnxRuntimeModel, compile_model, export_onnx
from .timing import comparison_rows, ratio_of_medians, time_interleaved

# How a model runs: PyTorch, torch.compile (inductor), exported to ONNX and run by ONNX Runtime.
BACKENDS = ('eager', 'compile', 'onnx')


class Backends:
    """What timing calls for a model under each backend of :data:`BACKENDS`.

    A model is compiled or exported once, the first time it is asked for (a
    model may serve several batch sizes), and kept (so its ``id`` stays its own).

    Args:
        threads (int, optional): ONNX Runtime's intra-op threads.
        onnx_dir (str): Where the ONNX exports are written.
        providers (Sequence[str], optional): ONNX Runtime's execution providers
            (:class:`~mmvitdyn.deployment.OnnxRuntimeModel`). Defaults to None: the CPU.
    """

    def __init__(self,
                 threads: Optional[int],
                 onnx_dir: str,
                 providers: Optional[Sequence[str]] = None):
        self.threads = threads
        self.onnx_dir = onnx_dir
        self.providers = providers
        self.made: Dict[tuple, tuple] = {}

    def call(self, backend: str, model: nn.Module, inputs: torch.Tensor) -> Callable[[], object]:
        """``model`` on ``inputs`` under ``backend``, as a call without arguments."""
        if backend not in BACKENDS:
            raise ValueError(f'backend={backend!r} is not one of {BACKENDS}')
        key = (backend, id(model))
        if key not in self.made:
            self.made[key] = (model, self._make(backend, model, inputs))
        return partial(self.made[key][1], inputs)

    def _make(self, backend: str, model: nn.Module, inputs: torch.Tensor) -> Callable:
        if backend == 'eager':
            return model
        if backend == 'compile':
            return compile_model(model)
        path = osp.join(self.onnx_dir, f'model{len(self.made)}.onnx')
        example = inputs  # the export's example batch (images or clips) must be >= 2
        if example.shape[0] == 1:
            example = example.repeat(2, *[1] * (example.dim() - 1))
        export_onnx(model, example, path)
        return OnnxRuntimeModel(path, threads=self.threads, providers=self.providers)


def time_backends(backends: Backends,
                  names: Sequence[str],
                  models: Dict[str, Tuple[nn.Module, torch.Tensor]],
                  runs: int,
                  device: torch.device,
                  min_time: float = 0.,
                  amp: Optional[str] = None) -> Dict[str, Dict[str, torch.Tensor]]:
    """Time every model of ``models`` (name -> (model, inputs)) under each backend of
    ``names``, all in the same :func:`time_interleaved` rounds (under
    ``torch.inference_mode()``; compilation and export before).

    Returns:
        dict: Backend -> model name -> its samples (runs, 2) seconds.
    """
    fns = {
        f'{name} [{backend}]': backends.call(backend, model, inputs)
        for backend in names
        for name, (model, inputs) in models.items()
    }
    with torch.inference_mode():
        samples = time_interleaved(fns, runs, device, min_time=min_time, amp=amp)
    return {backend: {name: samples[f'{name} [{backend}]'] for name in models} for backend in names}


def backend_rows(samples: Dict[str, Dict[str, torch.Tensor]],
                 base: str,
                 batch_size: int,
                 device: torch.device,
                 amp: Optional[str],
                 flops: Optional[Dict[str, float]] = None,
                 unit: str = 'images') -> List[dict]:
    """The :func:`comparison_rows` of each backend of ``samples`` (:func:`time_backends`),
    backend by backend, each against ``base`` under the same backend, with ``backend``;
    beside eager a row also has ``vs_eager``, its median ``<unit>_per_s`` over the same
    model's in eager."""
    rows = {
        backend: comparison_rows(seconds, base, batch_size, device, amp, flops, unit)
        for backend, seconds in samples.items()
    }
    eager = {row['model']: row for row in rows.get('eager', [])}
    speed = f'{unit}_per_s'
    for backend, timed in rows.items():
        for row in timed:
            row['backend'] = backend
            if backend != 'eager' and eager:
                row['vs_eager'] = ratio_of_medians(row[speed], eager[row['model']][speed])
    return [row for timed in rows.values() for row in timed]
