"""ONNX export (tools/deployment/pytorch2onnx.py, mmvitdyn.deployment) run by ONNX Runtime:
the outputs of PyTorch within 1e-4, exported at batch 2 and run at batch 3, on images whose
dispatchers run every token, none, and some."""
import json
from collections import Counter

import onnx
import onnxruntime
import pytest
import torch
from mmengine.config import Config

from helpers.configs import DYT_ADE_CFG, DYT_DIGITS_CFG
from helpers.dyt import spread_gates
from helpers.models import TINY_ARCH, images, tiny
from helpers.tools import run_tool
from mmvitdyn.apis import init_model
from mmvitdyn.deployment import ONNX_PROVIDERS, OnnxRuntimeModel, export_onnx, export_part
from mmvitdyn.engine import load_config
from mmvitdyn.models import DyTViT

# The digits DyT classifier shrunk to 2 blocks of 32 dims on 32 x 32 images in 8 x 8
# patches (16 patch tokens), random and frozen, with ToMe merging 2 tokens per block
# (after the attention, before the dispatched MLP).
TINY_DIGITS_TOME = {
    'model.backbone.arch.embed_dims': 32,
    'model.backbone.arch.num_layers': 2,
    'model.backbone.arch.num_heads': 4,
    'model.backbone.arch.feedforward_channels': 64,
    'model.backbone.patch_size': 8,
    'model.backbone.token_reduction.type': 'ToMe',
    'model.backbone.token_reduction.r': 2,
    'model.head.in_channels': 32,
    'model.backbone.allow_random_frozen': True
}


def split_gate(backbone: DyTViT, part: str = 'mlp') -> None:
    """Block 0's gate of ``part`` (it reads the block's input) reads how bright the image
    is: on a constant image of +10 every patch token is active, on one of -10 none. A
    constant image c makes every patch token
    ``c * u + b + pos`` (u: the patch embedding's weights summed per channel); the gate is
    ``w = 10 u / |u|^2``, so its logit is 10 c plus a term of the bias and position (the
    tests check the masks it gives)."""
    u = backbone.patch_embed.proj.weight.sum((1, 2, 3))
    gate = backbone.blocks[0].dispatchers[part].gate
    with torch.no_grad():
        gate.weight.copy_(10 * u / u.square().sum())
        gate.bias.zero_()


def bright_dark_random(size: int) -> torch.Tensor:
    """Images +10, -10 and random (3, 3, size, size)."""
    flat = torch.ones(1, 3, size, size)
    return torch.cat([10 * flat, -10 * flat, 3 * images(1, size, seed=3)])


def patch_counts(backbone: DyTViT, part: str = 'mlp') -> list:
    """Active patch tokens of each image in each block (``part``'s mask) of the last forward."""
    return [block.masks[part][:, 1:].sum(1).int().tolist() for block in backbone.dyt_blocks()]


def graph_ops(path) -> set:
    """The op types of an ONNX file's graph."""
    return {node.op_type for node in onnx.load(str(path)).graph.node}


def runtime_ops(path) -> Counter:
    """The op types of the graph ONNX Runtime runs for an ONNX file (its extended
    optimisations: fusions included, nothing specific to this machine's CPU)."""
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(path.with_suffix('.optimized.onnx'))
    onnxruntime.InferenceSession(str(path), options, providers=['CPUExecutionProvider'])
    return Counter(node.op_type for node in onnx.load(options.optimized_model_filepath).graph.node)


def assert_runtime_equals(path, expected, x):
    outputs = OnnxRuntimeModel(str(path))(x)
    expected = expected if isinstance(expected, (tuple, list)) else (expected, )
    outputs = outputs if isinstance(outputs, tuple) else (outputs, )
    assert len(outputs) == len(expected)
    for out, ref in zip(outputs, expected):
        torch.testing.assert_close(out, ref, atol=1e-4, rtol=0)


def test_tool_exports_dyt_with_tome_packed(tmp_path):
    """The documented command on a DyT + ToMe classifier: block 0's MLP runs every one of
    the 14 patch tokens ToMe leaves of the bright image, none of the dark one and some of
    the random one; block 1's none of the batch (bias -1e4: an empty gather). The ONNX
    graph gathers the active rows (NonZero), and its class scores equal PyTorch's."""
    model = init_model(load_config(str(DYT_DIGITS_CFG), TINY_DIGITS_TOME))
    spread_gates(model.backbone)
    split_gate(model.backbone)
    torch.nn.init.constant_(model.backbone.blocks[1].dispatchers['mlp'].gate.bias, -1e4)
    checkpoint, out = tmp_path / 'dyt.pth', tmp_path / 'dyt.onnx'
    torch.save({'state_dict': model.state_dict()}, checkpoint)
    run_tool(['deployment/pytorch2onnx.py', DYT_DIGITS_CFG, checkpoint, out, '--cfg-options'] +
             [f'{key}={value}' for key, value in TINY_DIGITS_TOME.items()], tmp_path)

    x = bright_dark_random(32)
    with torch.no_grad():
        expected = model(x, mode='tensor')
    counts = patch_counts(model.backbone)
    assert counts[0][:2] == [14, 0] and 0 < counts[0][2] < 14 and counts[1] == [0, 0, 0], counts
    assert 'NonZero' in graph_ops(out)
    assert_runtime_equals(out, expected, x)


def test_export_of_adaptformer(tmp_path):
    """AdaptFormer (the dense ViT with adapters, 2 blocks): ONNX Runtime equals PyTorch."""
    model = tiny(DyTViT, dispatch=None, arch=dict(TINY_ARCH, num_layers=2))
    path = tmp_path / 'adaptformer.onnx'
    export_onnx(model, images(2), str(path))
    x = bright_dark_random(32)
    with torch.no_grad():
        expected = model(x)
    assert_runtime_equals(path, expected, x)


def test_dispatched_mlp_runs_fused_as_the_dense_one(tmp_path):
    """DyT with MLP dispatch (3 blocks) and AdaptFormer, the same weights: in the graph ONNX
    Runtime runs, every block's MLP has its first linear's bias fused with the GELU (BiasGelu)
    in both, and DyT's dispatched linears are no 2-D Gemm; its outputs equal PyTorch's."""
    dense = tiny(DyTViT, dispatch=None)
    model = tiny(DyTViT, dispatch='mlp')
    model.load_state_dict(dense.state_dict(), strict=False)
    spread_gates(model)
    ops = {}
    for name, module in (('dense', dense), ('dyt', model)):
        export_onnx(module, images(2), str(tmp_path / f'{name}.onnx'))
        ops[name] = runtime_ops(tmp_path / f'{name}.onnx')
    assert ops['dense']['BiasGelu'] == ops['dyt']['BiasGelu'] == TINY_ARCH['num_layers'], ops
    assert ops['dyt']['Gemm'] == 0 and ops['dyt']['NonZero'] == TINY_ARCH['num_layers'], ops
    x = bright_dark_random(32)
    with torch.no_grad():
        expected = model(x)
    assert 0 < sum(map(sum, patch_counts(model))) < 3 * 3 * 16
    assert_runtime_equals(tmp_path / 'dyt.onnx', expected, x)


@pytest.mark.parametrize('policy, spinning', [(None, '0'), ('PASSIVE', '0'), ('active', '1')])
def test_runtime_threads_wait_as_torch_threads(policy, spinning, monkeypatch, tmp_path):
    """ONNX Runtime's intra-op threads spin while idle only under OMP_WAIT_POLICY=ACTIVE
    (unset: mmvitdyn's passive default)."""
    if policy is None:
        monkeypatch.delenv('OMP_WAIT_POLICY', raising=False)
    else:
        monkeypatch.setenv('OMP_WAIT_POLICY', policy)
    path = tmp_path / 'adaptformer.onnx'
    export_onnx(
        tiny(DyTViT, dispatch=None, arch=dict(TINY_ARCH, num_layers=1)), images(2), str(path))
    options = OnnxRuntimeModel(str(path), threads=1).session.get_session_options()
    assert options.get_session_config_entry('session.intra_op.allow_spinning') == spinning


def test_export_of_the_segmentation_backbone(tmp_path):
    """The DyT UperNet config's backbone at 64 x 64 (2 of its 4 blocks, whose feature maps
    go out; the neck, not exported, is left for 4): ONNX Runtime equals PyTorch."""
    model = init_model(
        load_config(
            str(DYT_ADE_CFG), {
                'model.backbone.arch.num_layers': 2,
                'model.backbone.out_indices': (0, 1),
                'model.backbone.allow_random_frozen': True
            }))
    backbone = export_part(model, 'backbone')
    spread_gates(backbone)
    split_gate(backbone)
    path = tmp_path / 'backbone.onnx'
    export_onnx(backbone, torch.zeros(2, 3, 64, 64), str(path))
    x = bright_dark_random(64)
    with torch.no_grad():
        expected = backbone(x)
    assert len(expected) == 2 and patch_counts(backbone)[0][:2] == [16, 0]
    assert_runtime_equals(path, expected, x)


@pytest.mark.parametrize('dispatch', ['attn', 'attn_mlp', 'layer'])
def test_export_of_attention_and_layer_dispatch(dispatch, tmp_path):
    """The dispatch variants that gate the attention (2 blocks): block 0's first gate (the
    attention's, the layer's) runs all 16 patch tokens of the bright image, none of the dark
    one and some of the random one (attn_mlp: its random MLP gate the reverse, none, all and
    some); block 1's gates none of the batch (bias -1e4: attention among the class tokens
    alone, an empty MLP gather). The graph gathers the active rows (NonZero); ONNX Runtime
    equals PyTorch."""
    model = tiny(DyTViT, dispatch=dispatch, arch=dict(TINY_ARCH, num_layers=2))
    spread_gates(model)
    first = 'layer' if dispatch == 'layer' else 'attn'
    split_gate(model, first)
    for dispatcher in model.blocks[1].dispatchers.values():
        torch.nn.init.constant_(dispatcher.gate.bias, -1e4)
    path = tmp_path / f'{dispatch}.onnx'
    export_onnx(model, images(2), str(path))
    x = bright_dark_random(32)
    with torch.no_grad():
        expected = model(x)
    counts = {part: patch_counts(model, part) for part in model.blocks[0].dispatchers}
    assert counts[first][0][:2] == [16, 0] and 0 < counts[first][0][2] < 16, counts
    assert all(count[1] == [0, 0, 0] for count in counts.values()), counts
    if dispatch == 'attn_mlp':
        assert counts['mlp'][0][:2] == [0, 16] and 0 < counts['mlp'][0][2] < 16, counts
    assert 'NonZero' in graph_ops(path)
    assert_runtime_equals(path, expected, x)


def test_tool_names_the_interface_and_stores_the_preprocessing(tmp_path):
    """The tool on the UperNet config's backbone with the colour swap off: the graph's
    input is 'images', its outputs 'features_0' and 'features_1' (the two blocks' maps);
    the file's metadata holds the config's mean and std, the size exported and BGR
    (mmcv's decoding order, not swapped), as the tool prints them."""
    options = {
        'model.backbone.arch.num_layers': 2,
        'model.backbone.out_indices': (0, 1),
        'model.backbone.allow_random_frozen': True,
        'model.data_preprocessor.bgr_to_rgb': False,
    }
    model = init_model(load_config(str(DYT_ADE_CFG), options))
    checkpoint, out = tmp_path / 'dyt.pth', tmp_path / 'backbone.onnx'
    torch.save({'state_dict': model.state_dict()}, checkpoint)
    printed = run_tool([
        'deployment/pytorch2onnx.py', DYT_ADE_CFG, checkpoint, out, '--part', 'backbone',
        '--img-size', '64', '--cfg-options'
    ] + [f'{key}={value}' for key, value in options.items()], tmp_path).stdout
    preprocessor = Config.fromfile(str(DYT_ADE_CFG)).model.data_preprocessor
    graph = onnx.load(str(out))
    assert [i.name for i in graph.graph.input] == ['images']
    assert [o.name for o in graph.graph.output] == ['features_0', 'features_1']
    meta = {prop.key: json.loads(prop.value) for prop in graph.metadata_props}
    assert meta['input_size'] == [64, 64] and meta['channel_order'] == 'BGR'
    assert meta['mean'] == pytest.approx(list(preprocessor.mean))
    assert meta['std'] == pytest.approx(list(preprocessor.std))
    assert (f"input 'images': float32 (batch, 3, 64, 64), channels BGR, (pixel - mean) / std "
            f"with mean {meta['mean']} std {meta['std']}") in printed
    assert "output 'features_1': float32 (batch, " in printed


def test_runtime_providers_are_checked(tmp_path):
    """A provider name outside ONNX_PROVIDERS, or one this ONNX Runtime lacks, is an error
    naming the allowed (the available) ones, not ONNX Runtime's fall-back to the CPU."""
    path = tmp_path / 'adaptformer.onnx'
    export_onnx(
        tiny(DyTViT, dispatch=None, arch=dict(TINY_ARCH, num_layers=1)), images(2), str(path))
    with pytest.raises(
            ValueError,
            match=r"providers=\['CUDA'\]: each must be one of \['CPUExecutionProvider', "
            r"'CUDAExecutionProvider', 'TensorrtExecutionProvider'\]"):
        OnnxRuntimeModel(str(path), providers=['CUDA'])
    available = onnxruntime.get_available_providers()
    missing = [name for name in ONNX_PROVIDERS if name not in available]
    if not missing:
        pytest.skip('this ONNX Runtime has every provider of ONNX_PROVIDERS')
    with pytest.raises(
            ValueError,
            match=f'this ONNX Runtime has no \\[{missing[0]!r}\\] '
            r'\(it has .*onnxruntime-gpu'):
        OnnxRuntimeModel(str(path), providers=[missing[0], 'CPUExecutionProvider'])
    session = OnnxRuntimeModel(str(path), providers=['CPUExecutionProvider']).session
    assert session.get_providers() == ['CPUExecutionProvider']


def test_bound_run_equals_pytorch(tmp_path):
    """The IO-binding run (as on a CUDA device, here on the CPU: the input bound in
    place, the outputs written to torch tensors): a featmap backbone's three maps
    within 1e-4 of PyTorch's at two batch sizes, none the export's."""
    backbone = tiny(DyTViT, dispatch='mlp', out_indices=(0, 1, 2), out_type='featmap')
    spread_gates(backbone)
    path = tmp_path / 'backbone.onnx'
    export_onnx(backbone, images(2), str(path))
    runtime = OnnxRuntimeModel(str(path), threads=1)
    for batch in (3, 1, 3):
        x = images(batch, seed=batch)
        with torch.no_grad():
            expected = backbone(x)
        outputs = runtime._run_bound(x)
        assert len(outputs) == len(expected) == 3
        for out, ref in zip(outputs, expected):
            torch.testing.assert_close(out, ref, atol=1e-4, rtol=0)
    assert sorted(runtime.output_shapes) == [(1, 3, 32, 32), (3, 3, 32, 32)]
