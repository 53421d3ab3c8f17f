"""ONNX export of a video model (clips (B, 3, T, H, W), mmvitdyn.deployment) run by ONNX
Runtime: exported at batch 2 and run at batch 3 within 1e-4 of PyTorch, DyT skipping some
tokens; an example of another rank is refused, naming the two layouts."""
import onnx
import pytest
import torch

from helpers.models import tiny_backbone_cfg
from mmvitdyn.analysis import calibrate_gates
from mmvitdyn.benchmark import ClipClassifier
from mmvitdyn.deployment import OnnxRuntimeModel, export_onnx


def clips(n: int, frames: int = 2, seed: int = 1) -> torch.Tensor:
    """(n, 3, frames, 32, 32) standard-normal clips from their own seeded generator."""
    return torch.randn(n, 3, frames, 32, 32, generator=torch.Generator().manual_seed(seed))


def test_exported_clip_model_equals_eager_at_another_batch(tmp_path):
    """ClipClassifier of a 2-block DyTViT (MLP dispatch), gates calibrated to 0.5 on the
    export's 2 clips of 2 frames: on 3 other clips ONNX Runtime's class scores equal
    PyTorch's within 1e-4 while DyT skips some patch tokens (the graph gathers the active
    rows, NonZero); the input 'clips' has a free batch axis and fixed frames and size."""
    torch.manual_seed(0)
    vit = tiny_backbone_cfg('DyTViT', dispatch='mlp')
    vit['arch']['num_layers'] = 2  # the export traces every block: fewer are faster
    model = ClipClassifier(vit, num_classes=5).eval()
    example, x = clips(2), clips(3, seed=2)
    calibrate_gates(model, example, 0.5)
    path = tmp_path / 'clips.onnx'
    export_onnx(model, example, str(path))
    with torch.no_grad():
        expected = model(x)
    rate = model.activation_rates()['act_rate']
    assert expected.shape == (3, 5) and 0.2 < rate < 0.8, rate
    torch.testing.assert_close(
        OnnxRuntimeModel(str(path), threads=1)(x), expected, atol=1e-4, rtol=0)
    graph = onnx.load(str(path)).graph
    assert 'NonZero' in {node.op_type for node in graph.node}
    [clip_input] = graph.input
    dims = clip_input.type.tensor_type.shape.dim
    assert clip_input.name == 'clips' and dims[0].dim_param and not dims[0].HasField('dim_value')
    assert [d.dim_value for d in dims[1:]] == [3, 2, 32, 32]


@pytest.mark.parametrize('shape', [(2, 3, 32), (2, 1, 3, 2, 32, 32), (1, 3, 2, 32, 32)])
def test_example_of_another_rank_or_batch_1_is_refused(shape, tmp_path):
    with pytest.raises(
            ValueError,
            match=r'example of shape \(.*\): the example must be images \(B, 3, H, W\) or clips '
            r'\(B, 3, T, H, W\) with B >= 2, so that the batch axis stays dynamic'):
        export_onnx(torch.nn.Identity(), torch.zeros(shape), str(tmp_path / 'refused.onnx'))
