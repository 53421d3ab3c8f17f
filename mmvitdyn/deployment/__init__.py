"""A trained model outside eager PyTorch: ``torch.compile`` and ONNX export run by ONNX Runtime."""
from .compile import COMPILE_CONFIG, compile_model
from .onnx_export import (DEFAULT_OPSET, EXPORT_PARTS, INPUT_LAYOUTS, ONNX_PROVIDERS,
                          OnnxRuntimeModel, check_providers, export_onnx, export_part, input_size,
                          output_names, preprocessing)

__all__ = [
    'COMPILE_CONFIG', 'DEFAULT_OPSET', 'EXPORT_PARTS', 'INPUT_LAYOUTS', 'ONNX_PROVIDERS',
    'OnnxRuntimeModel', 'check_providers', 'compile_model', 'export_onnx', 'export_part',
    'input_size', 'output_names', 'preprocessing'
]
