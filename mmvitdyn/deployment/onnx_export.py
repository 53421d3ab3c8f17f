"""ONNX export with a dynamic batch axis (torch's ``torch.export``-based exporter),
and the export run by ONNX Runtime (docs/design_notes.md)."""
import json
import warnings
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch
from torch import nn

from ..analysis import TensorForward, is_recognizer
from ..settings import openmp_threads_spin

# The ONNX opset the models are exported to: torch.onnx's default in torch 2.14
# (``torch.onnx._constants.ONNX_DEFAULT_OPSET``), run by ONNX Runtime >= 1.16.
DEFAULT_OPSET = 20
# What is exported: 'model', the whole model's ``forward(inputs, mode='tensor')``
# (a classifier's class scores, a detector's backbone and neck features), or
# 'backbone', the backbone's outputs (e.g. the feature maps of a segmentor's ViT).
EXPORT_PARTS = ('model', 'backbone')
# ONNX Runtime's execution providers OnnxRuntimeModel runs a model with.
ONNX_PROVIDERS = ('CPUExecutionProvider', 'CUDAExecutionProvider', 'TensorrtExecutionProvider')
# The inputs export_onnx takes, by number of dimensions: the ONNX input's name, its layout.
INPUT_LAYOUTS = {4: ('images', '(B, 3, H, W)'), 5: ('clips', '(B, 3, T, H, W)')}


def export_part(model: nn.Module, part: str = 'model') -> nn.Module:
    """``TensorForward(model)`` for ``part='model'`` or ``model.backbone`` for
    'backbone' (:data:`EXPORT_PARTS`): ``forward(inputs)`` of one tensor, images or
    (a recogniser's) clips (B, 3, T, H, W)."""
    if part not in EXPORT_PARTS:
        raise ValueError(f'part={part!r} is not one of {EXPORT_PARTS}')
    if part == 'model':
        return TensorForward(model)
    backbone = getattr(model, 'backbone', None)
    if backbone is None:
        raise ValueError(f"part='backbone': the {type(model).__name__} has no backbone; "
                         "use part='model'")
    return backbone


def input_size(model: nn.Module) -> Tuple[int, int]:
    """(H, W) of the images (a video backbone's frames) a ViT backbone's position
    embedding is made for (its patch grid times its patch size), else 224 x 224."""
    backbone = getattr(model, 'backbone', model)
    backbone = getattr(backbone, 'vit', backbone)  # DyTVideoViT: the frame ViT
    grid, patch = getattr(backbone, 'patch_resolution', None), getattr(backbone, 'patch_size', None)
    if grid is None or patch is None:
        return 224, 224
    return grid[0] * patch, grid[1] * patch


# mmaction2's video readers (the first transform of a test pipeline) whose decoders give
# RGB frames (DecordDecode, PyAVDecode's to_rgb, OpenCVDecode's reversed BGR).
RGB_VIDEO_READERS = ('DecordInit', 'PyAVInit', 'OpenCVInit')


def preprocessing(model: nn.Module, pipeline: Sequence[dict] = ()) -> Dict[str, object]:
    """The model's data preprocessor as the ONNX ``metadata_props`` name it.

    Args:
        model (nn.Module): An OpenMMLab model with a ``data_preprocessor``.
        pipeline (Sequence[dict]): The test pipeline; a first
            ``LoadImageFromFile`` or video reader of :data:`RGB_VIDEO_READERS`
            fixes the channel order. Defaults to ().

    Returns:
        dict: ``input_size`` [H, W]; ``mean`` and ``std`` (3 floats in the input's
        channel order) or None; ``channel_order`` 'RGB', 'BGR' or a sentence;
        ``classes`` when known; for an mmaction2 recogniser ``frames``, T of its
        clips: the ``clip_len`` of the pipeline's frame sampler (e.g. SampleFrames).

    Raises:
        ValueError: A recogniser whose pipeline has no ``clip_len``.
    """
    preprocessor = getattr(model, 'data_preprocessor', None)
    normalised = getattr(preprocessor, '_enable_normalize', False)
    swapped = any(
        getattr(preprocessor, flag, False)
        for flag in ('to_rgb', 'channel_conversion', '_channel_conversion'))
    loader = pipeline[0].get('type', '') if pipeline else ''
    if isinstance(loader, str) and loader.endswith('LoadImageFromFile'):
        channel_order = 'RGB' if swapped else 'BGR'
    elif isinstance(loader, str) and loader.split('.')[-1] in RGB_VIDEO_READERS:
        channel_order = 'BGR' if swapped else 'RGB'
    else:
        channel_order = (f"the data set's order{', reversed' if swapped else ''} "
                         '(the test pipeline reads neither image files nor videos)')
    spec = dict(
        input_size=list(input_size(model)),
        mean=preprocessor.mean.flatten().tolist() if normalised else None,
        std=preprocessor.std.flatten().tolist() if normalised else None,
        channel_order=channel_order)
    classes = getattr(model, 'dataset_meta', {}).get('classes')
    if classes is not None:
        spec['classes'] = list(classes)
    if is_recognizer(model):
        lengths = [t['clip_len'] for t in pipeline if 'clip_len' in t]
        if not lengths:
            raise ValueError('the test pipeline samples no clip: a recogniser needs a frame '
                             "sampler with clip_len (e.g. dict(type='SampleFrames', clip_len=8))")
        spec['frames'] = int(lengths[0])
    return spec


def output_names(outputs: Union[torch.Tensor, Sequence[torch.Tensor]], part: str) -> list:
    """ONNX names of ``outputs``: 'logits', 'features' or 'features_<i>'."""
    if isinstance(outputs, torch.Tensor):
        return ['logits' if part == 'model' else 'features']
    return [f'features_{index}' for index in range(len(outputs))]


def export_onnx(module: nn.Module,
                example: torch.Tensor,
                path: str,
                opset: int = DEFAULT_OPSET,
                verbose: bool = False,
                outputs: Optional[Sequence[str]] = None,
                metadata: Optional[Dict[str, object]] = None) -> None:
    """Export ``module(inputs)`` (eval mode) to ``path``: input 'images' or 'clips'
    (:data:`INPUT_LAYOUTS`), batch axis 'batch' dynamic, the others fixed; weights
    over 2 GB to an external data file.

    Args:
        module (nn.Module): See :func:`export_part`.
        example (Tensor): Example images (B, 3, H, W) or clips (B, 3, T, H, W), B >= 2.
        path (str): The ``.onnx`` file to write.
        opset (int): ONNX opset. Defaults to :data:`DEFAULT_OPSET`.
        verbose (bool): Print the exporter's progress. Defaults to False.
        outputs (Sequence[str], optional): Output names. Defaults to None.
        metadata (dict, optional): ``metadata_props``, values as JSON.
    """
    layout = INPUT_LAYOUTS.get(example.dim())
    if layout is None or example.shape[0] < 2:
        allowed = ' or '.join(f'{name} {shape}' for name, shape in INPUT_LAYOUTS.values())
        raise ValueError(f'example of shape {tuple(example.shape)}: the example must be '
                         f'{allowed} with B >= 2, so that the batch axis stays dynamic')
    batch = torch.export.Dim('batch', min=1)
    with warnings.catch_warnings():
        # A DyT block keeps its last masks as an attribute (for the activation
        # statistics); the exported graph does not need them.
        warnings.filterwarnings('ignore', message='The tensor attributes .* were assigned')
        program = torch.onnx.export(
            module, (example, ),
            dynamo=True,
            dynamic_shapes=({
                0: batch
            }, ),
            opset_version=opset,
            input_names=[layout[0]],
            output_names=None if outputs is None else list(outputs),
            verbose=verbose)
    for key, value in (metadata or {}).items():
        program.model.metadata_props[key] = json.dumps(value)
    program.save(path)


class OnnxRuntimeModel:
    """An ONNX file (one input, the images or clips) run by ONNX Runtime, called like the
    module.

    On the CPU its intra-op threads spin while idle only under
    ``OMP_WAIT_POLICY=ACTIVE``, as torch's (docs/benchmarks.md). With a CUDA or
    TensorRT provider first, images on a CUDA device are bound in place (ONNX
    Runtime's IO binding) and the outputs come back on that device; otherwise
    the images go through host memory and the outputs are on the CPU.

    Args:
        path (str): The ONNX file.
        threads (int, optional): Intra-op threads on the CPU. Defaults to None:
            ONNX Runtime's own.
        providers (Sequence[str], optional): Execution providers in order of
            preference, from :data:`ONNX_PROVIDERS` (ONNX Runtime falls back to
            the next for the nodes one cannot run); each must be in
            ``onnxruntime.get_available_providers()`` (the CUDA and TensorRT ones
            come with onnxruntime-gpu). Defaults to None: the CPU's.
    """

    def __init__(self,
                 path: str,
                 threads: Optional[int] = None,
                 providers: Optional[Sequence[str]] = None):
        import onnxruntime  # a test / deployment requirement (requirements/tests.txt)

        providers = ['CPUExecutionProvider'] if providers is None else list(providers)
        check_providers(providers, onnxruntime.get_available_providers())
        options = onnxruntime.SessionOptions()
        if threads is not None:
            options.intra_op_num_threads = threads
        options.add_session_config_entry('session.intra_op.allow_spinning',
                                         str(int(openmp_threads_spin())))
        self.session = onnxruntime.InferenceSession(path, options, providers=providers)
        unloaded = [name for name in providers if name not in self.session.get_providers()]
        if unloaded:  # ONNX Runtime falls back to the CPU when a provider fails to load
            raise RuntimeError(f'ONNX Runtime could not start {unloaded} for {path} (its log '
                               f'above says why); the session has {self.session.get_providers()}')
        self.input_name = self.session.get_inputs()[0].name
        self.output_names = [output.name for output in self.session.get_outputs()]
        self.output_shapes: Dict[Tuple[int, ...], List[Tuple[int, ...]]] = {}
        self.on_gpu = providers[0] != 'CPUExecutionProvider'

    def __call__(self, images: torch.Tensor) -> Union[torch.Tensor, Sequence[torch.Tensor]]:
        """Images (B, 3, H, W) or clips (B, 3, T, H, W) -> the exported module's
        output: a tensor, or a tuple of them when it returns several."""
        if images.is_cuda and self.on_gpu:
            tensors = self._run_bound(images)
        else:
            outputs = self.session.run(None, {self.input_name: images.detach().cpu().numpy()})
            tensors = tuple(torch.from_numpy(output) for output in outputs)
        return tensors[0] if len(tensors) == 1 else tensors

    def _run_bound(self, images: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        """Run on ``images`` in place, the outputs written to torch tensors on their
        device (their shapes learnt from a first run at each input shape)."""
        images = images.detach().float().contiguous()
        device = images.device
        binding = self.session.io_binding()
        binding.bind_input(self.input_name, device.type, device.index or 0, np.float32,
                           tuple(images.shape), images.data_ptr())
        shapes = self.output_shapes.get(tuple(images.shape))
        if shapes is None:  # ONNX Runtime allocates the outputs once, to show their shapes
            for name in self.output_names:
                binding.bind_output(name, device.type, device.index or 0)
            self.session.run_with_iobinding(binding)
            shapes = [tuple(value.shape()) for value in binding.get_outputs()]
            self.output_shapes[tuple(images.shape)] = shapes
            binding.clear_binding_outputs()
        outputs = tuple(torch.empty(shape, device=device) for shape in shapes)
        for name, output in zip(self.output_names, outputs):
            binding.bind_output(name, device.type, device.index or 0, np.float32,
                                tuple(output.shape), output.data_ptr())
        self.session.run_with_iobinding(binding)
        return outputs


def check_providers(providers: Sequence[str], available: Sequence[str]) -> None:
    """ValueError unless ``providers`` is a non-empty list of :data:`ONNX_PROVIDERS`
    that are all in ``available`` (``onnxruntime.get_available_providers()``)."""
    unknown = [name for name in providers if name not in ONNX_PROVIDERS]
    if not providers or unknown:
        raise ValueError(f'providers={list(providers)}: each must be one of '
                         f'{list(ONNX_PROVIDERS)}')
    missing = [name for name in providers if name not in available]
    if missing:
        raise ValueError(f'providers={list(providers)}: this ONNX Runtime has no {missing} '
                         f'(it has {list(available)}); the CUDA and TensorRT providers come '
                         'with onnxruntime-gpu')
