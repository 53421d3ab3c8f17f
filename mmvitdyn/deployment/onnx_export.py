"""ONNX export with a dynamic batch axis (torch's ``torch.export``-based exporter),
and the export run by ONNX Runtime (docs/design_notes.md)."""
import json
import warnings
from typing import Dict, Optional, Sequence, Tuple, Union

import torch
from torch import nn

from ..analysis import TensorForward
from ..settings import openmp_threads_spin

# The ONNX opset the models are exported to: torch.onnx's default in torch 2.14
# (``torch.onnx._constants.ONNX_DEFAULT_OPSET``), run by ONNX Runtime >= 1.16.
DEFAULT_OPSET = 20
# What is exported: 'model', the whole model's ``forward(inputs, mode='tensor')``
# (a classifier's class scores, a detector's backbone and neck features), or
# 'backbone', the backbone's outputs (e.g. the feature maps of a segmentor's ViT).
EXPORT_PARTS = ('model', 'backbone')


def export_part(model: nn.Module, part: str = 'model') -> nn.Module:
    """``TensorForward(model)`` for ``part='model'`` or ``model.backbone`` for
    'backbone' (:data:`EXPORT_PARTS`): ``forward(images)`` of one tensor."""
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
    """(H, W) of the images a ViT backbone's position embedding is made for
    (its patch grid times its patch size), else 224 x 224."""
    backbone = getattr(model, 'backbone', model)
    grid, patch = getattr(backbone, 'patch_resolution', None), getattr(backbone, 'patch_size', None)
    if grid is None or patch is None:
        return 224, 224
    return grid[0] * patch, grid[1] * patch


def preprocessing(model: nn.Module, pipeline: Sequence[dict] = ()) -> Dict[str, object]:
    """The model's data preprocessor as the ONNX ``metadata_props`` name it.

    Args:
        model (nn.Module): An OpenMMLab model with a ``data_preprocessor``.
        pipeline (Sequence[dict]): The test pipeline; a first
            ``LoadImageFromFile`` fixes the channel order. Defaults to ().

    Returns:
        dict: ``input_size`` [H, W]; ``mean`` and ``std`` (3 floats in the input's
        channel order) or None; ``channel_order`` 'RGB', 'BGR' or a sentence;
        ``classes`` when known.
    """
    preprocessor = getattr(model, 'data_preprocessor', None)
    normalised = getattr(preprocessor, '_enable_normalize', False)
    swapped = any(
        getattr(preprocessor, flag, False)
        for flag in ('to_rgb', 'channel_conversion', '_channel_conversion'))
    loader = pipeline[0].get('type', '') if pipeline else ''
    if isinstance(loader, str) and loader.endswith('LoadImageFromFile'):
        channel_order = 'RGB' if swapped else 'BGR'
    else:
        channel_order = (f"the data set's order{', reversed' if swapped else ''} "
                         '(the test pipeline does not load image files)')
    spec = dict(
        input_size=list(input_size(model)),
        mean=preprocessor.mean.flatten().tolist() if normalised else None,
        std=preprocessor.std.flatten().tolist() if normalised else None,
        channel_order=channel_order)
    classes = getattr(model, 'dataset_meta', {}).get('classes')
    if classes is not None:
        spec['classes'] = list(classes)
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
    """Export ``module(images)`` (eval mode) to ``path``: input 'images', batch
    axis 'batch' dynamic; weights over 2 GB to an external data file.

    Args:
        module (nn.Module): See :func:`export_part`.
        example (Tensor): Example images (B, 3, H, W), B >= 2.
        path (str): The ``.onnx`` file to write.
        opset (int): ONNX opset. Defaults to :data:`DEFAULT_OPSET`.
        verbose (bool): Print the exporter's progress. Defaults to False.
        outputs (Sequence[str], optional): Output names. Defaults to None.
        metadata (dict, optional): ``metadata_props``, values as JSON.
    """
    if example.dim() != 4 or example.shape[0] < 2:
        raise ValueError(f'example of shape {tuple(example.shape)}: the example images must be '
                         '(B, 3, H, W) with B >= 2, so that the batch axis stays dynamic')
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
            input_names=['images'],
            output_names=None if outputs is None else list(outputs),
            verbose=verbose)
    for key, value in (metadata or {}).items():
        program.model.metadata_props[key] = json.dumps(value)
    program.save(path)


class OnnxRuntimeModel:
    """An ONNX file (one input, the images) run by ONNX Runtime on the CPU with
    ``threads`` intra-op threads (default: its own), called like the module; its
    idle threads spin only under ``OMP_WAIT_POLICY=ACTIVE``, as torch's
    (docs/benchmarks.md)."""

    def __init__(self, path: str, threads: Optional[int] = None):
        import onnxruntime  # a test / deployment requirement (requirements/tests.txt)

        options = onnxruntime.SessionOptions()
        if threads is not None:
            options.intra_op_num_threads = threads
        options.add_session_config_entry('session.intra_op.allow_spinning',
                                         str(int(openmp_threads_spin())))
        self.session = onnxruntime.InferenceSession(
            path, options, providers=['CPUExecutionProvider'])
        self.input_name = self.session.get_inputs()[0].name

    def __call__(self, images: torch.Tensor) -> Union[torch.Tensor, Sequence[torch.Tensor]]:
        """Images (B, 3, H, W) -> the exported module's output: a tensor, or a
        tuple of them when it returns several."""
        outputs = self.session.run(None, {self.input_name: images.detach().cpu().numpy()})
        tensors = tuple(torch.from_numpy(output) for output in outputs)
        return tensors[0] if len(tensors) == 1 else tensors
