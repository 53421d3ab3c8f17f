"""torch.compile (inductor, CPU) of the dense ViT and of DyT's packed path: one graph,
no recompilation when the number of active tokens changes, eager's outputs."""
import pytest
import torch
from torch._dynamo.testing import CompileCounterWithBackend
from torch._inductor import config as inductor_config
from torch._inductor.runtime.cache_dir_utils import temporary_cache_dir

from helpers.dyt import spread_gates
from helpers.models import images, tiny
from mmvitdyn.deployment import COMPILE_CONFIG, compile_model
from mmvitdyn.models import DyTViT


@pytest.fixture(autouse=True)
def fresh_dynamo():
    """Each test compiles from scratch and leaves no compiled code behind."""
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.fixture(scope='module')
def inductor(tmp_path_factory):
    """Inductor builds its kernels under the module's own temporary directory, in this
    process (compile_threads=1: no worker processes), for the vector ISA the CPU's flags
    name (no probe builds)."""
    with temporary_cache_dir(str(tmp_path_factory.mktemp('inductor'))), \
            inductor_config.patch({'compile_threads': 1, 'cpp.vec_isa_ok': True}):
        yield


def active_counts(model: DyTViT) -> list:
    """Active patch tokens of each image in each block of the last forward."""
    return [block.masks['mlp'][:, 1:].sum(1).tolist() for block in model.dyt_blocks()]


@pytest.mark.parametrize('dispatch', ['mlp', None])
def test_inductor_compiles_one_graph_equal_to_eager(dispatch, inductor):
    """DyT's packed MLP dispatch and the dense ViT (AdaptFormer) compile into one graph (one
    frame: no graph break); two batches whose images activate different numbers of tokens
    run through it without recompiling, equal to eager within 1e-5."""
    model = tiny(DyTViT, dispatch=dispatch)
    if dispatch is not None:
        spread_gates(model)
    batches = [images(4, seed=1), images(4, seed=2)]
    expected, counts = [], []
    with torch.no_grad():
        for x in batches:
            expected.append(model(x)[0])
            counts.append(active_counts(model) if dispatch else None)
        counter = CompileCounterWithBackend('inductor')
        compiled = compile_model(model, backend=counter)
        outputs = [compiled(x)[0] for x in batches]
    assert counter.frame_count == 1
    for out, ref in zip(outputs, expected):
        torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5)
    if dispatch is not None:  # other token counts in the two batches, some in every block
        assert counts[0] != counts[1] and all(0 < sum(c) < 16 * 4 for c in counts[0]), counts


def test_packed_attention_traces_without_graph_break():
    """Attention-MLP dispatch (packed attention, padded to a length read with ``.item()``,
    then packed MLP rows) traces into one graph under COMPILE_CONFIG."""
    model = tiny(DyTViT, dispatch='attn_mlp')
    spread_gates(model)
    with torch.no_grad(), torch._dynamo.config.patch(**COMPILE_CONFIG):
        explained = torch._dynamo.explain(model)(images(4))
    assert (explained.graph_count, explained.graph_break_count) == (1, 0), str(explained)
