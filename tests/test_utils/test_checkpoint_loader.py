"""Loading a checkpoint runs no code from it, unless the user opts in."""
import io
import pathlib
import pickle
import re

import numpy as np
import pytest
import torch
from mmengine.logging import HistoryBuffer
from mmengine.runner import CheckpointLoader

from helpers.configs import VIT_DIGITS_CFG
from helpers.tools import run_tool
from mmvitdyn.utils import TRUST_ENV, UnsafeCheckpointError, load_local_checkpoint
from mmvitdyn.utils.checkpoint_loader import RestrictedUnpickler


class CreatesFile:
    """Unpickling this creates ``path``: what a malicious checkpoint could do."""

    def __init__(self, path):
        self.path = pathlib.Path(path)

    def __reduce__(self):
        return pathlib.Path.touch, (self.path, )


def crafted_checkpoint(tmp_path, zip_format: bool = True) -> tuple:
    """A checkpoint whose loading would create ``created``."""
    ckpt, created = tmp_path / 'crafted.pth', tmp_path / 'created_by_unpickling'
    torch.save(
        dict(state_dict={'w': torch.ones(2)}, payload=CreatesFile(created)),
        ckpt,
        _use_new_zipfile_serialization=zip_format)
    return ckpt, created


@pytest.mark.parametrize('zip_format', [True, False])
def test_runner_checkpoint_types_load_without_changing_torch_globals(tmp_path, zip_format):
    buffer = HistoryBuffer()
    for value in (0.5, 1.5, 4.0):
        buffer.update(value)
    saved = dict(
        state_dict={'w': torch.arange(3.)},
        message_hub=dict(log_scalars={'loss': buffer}),
        meta=dict(
            best=np.float64(0.25),
            step=np.int64(7),
            rate=np.float32(0.5),
            kept=np.array([1, 2], dtype=np.int32)))
    torch.save(saved, tmp_path / 'runner.pth', _use_new_zipfile_serialization=zip_format)
    before = set(torch.serialization.get_safe_globals())
    assert HistoryBuffer not in before  # importing mmvitdyn allowed nothing process-wide
    loaded = CheckpointLoader.load_checkpoint(str(tmp_path / 'runner.pth'))
    assert set(torch.serialization.get_safe_globals()) == before
    assert torch.equal(loaded['state_dict']['w'], torch.tensor([0., 1., 2.]))
    assert loaded['message_hub']['log_scalars']['loss'].mean() == pytest.approx(2.0)
    assert loaded['message_hub']['log_scalars']['loss'].statistics('max') == 4.0
    meta = loaded['meta']
    assert (meta['best'], meta['step'], meta['rate']) == (0.25, 7, 0.5)
    assert meta['best'].dtype == np.float64 and meta['rate'].dtype == np.float32
    assert meta['kept'].tolist() == [1, 2] and meta['kept'].dtype == np.int32


@pytest.mark.parametrize('zip_format', [True, False])
def test_crafted_checkpoint_is_refused_and_runs_nothing(tmp_path, monkeypatch, zip_format):
    monkeypatch.delenv(TRUST_ENV, raising=False)
    ckpt, created = crafted_checkpoint(tmp_path, zip_format)
    with pytest.raises(UnsafeCheckpointError) as err:
        CheckpointLoader.load_checkpoint(str(ckpt))
    message = str(err.value)
    assert 'pathlib.Path' in message
    assert '--trust-checkpoint' in message and f'{TRUST_ENV}=1' in message
    assert not created.exists()


@pytest.mark.parametrize('core', ['numpy.core', 'numpy._core'])
def test_numpy_1_and_2_names_load(core):
    """numpy 1.x pickles arrays and scalars as ``numpy.core.multiarray.*``, numpy 2 as
    ``numpy._core.multiarray.*``: both load, whichever numpy is installed."""
    saved = dict(array=np.array([[1.5, 2.0]], dtype=np.float32), scalar=np.int16(-3))
    data = re.sub(rb'numpy\.(_)?core\.', core.encode() + b'.', pickle.dumps(saved, protocol=2))
    assert f'{core}.multiarray\n_reconstruct'.encode() in data
    loaded = RestrictedUnpickler(io.BytesIO(data)).load()
    assert loaded['array'].tolist() == [[1.5, 2.0]] and loaded['array'].dtype == np.float32
    assert loaded['scalar'] == -3 and loaded['scalar'].dtype == np.int16


def test_other_getattr_in_a_checkpoint_is_refused(tmp_path, monkeypatch):
    monkeypatch.delenv(TRUST_ENV, raising=False)

    class WritesFile:

        def __reduce__(self):  # getattr(numpy.ndarray, 'tofile') would write a file
            return getattr, (np.ndarray, 'tofile')

    torch.save(dict(payload=WritesFile()), tmp_path / 'getattr.pth')
    with pytest.raises(UnsafeCheckpointError, match=r"needs builtins.getattr\(ndarray, 'tofile'\)"):
        load_local_checkpoint(str(tmp_path / 'getattr.pth'))


def test_a_call_of_what_an_allowed_call_returned_is_refused(tmp_path, monkeypatch):
    """``getattr(HistoryBuffer, 'mean')`` is allowed; calling the method it returns is not."""
    monkeypatch.delenv(TRUST_ENV, raising=False)
    buffer = HistoryBuffer()
    buffer.update(1.0)

    class CallsMean:

        def __reduce__(self):
            return HistoryBuffer.mean, (buffer, )

    torch.save(dict(payload=CallsMean()), tmp_path / 'call.pth')
    with pytest.raises(
            UnsafeCheckpointError,
            match=r'needs a call of mmengine\.logging\.history_buffer\.HistoryBuffer\.mean,'):
        load_local_checkpoint(str(tmp_path / 'call.pth'))


# Pickles that name only allowed globals, each with one operation that the
# plain unpickler performs: state set on a function (an attribute added to
# torch's tensor rebuild function for the whole process), an item written
# into a tensor, an extension code.
CRAFTED_PICKLES = {
    'the state of torch._utils._rebuild_tensor_v2 set':
    b'\x80\x02ctorch._utils\n_rebuild_tensor_v2\n}X\x07\x00\x00\x00craftedK\x01sb.',
    'items added to a torch.Tensor': b'\x80\x02ctorch\nTensor\nK\x02\x85R(K\x00K\x05u.',
    'the pickle opcode EXT1': b'\x80\x02\x82\x01.',
}


@pytest.mark.parametrize('needs', sorted(CRAFTED_PICKLES))
def test_operations_beyond_the_allowed_ones_are_refused(needs):
    with pytest.raises(pickle.UnpicklingError) as err:
        RestrictedUnpickler(io.BytesIO(CRAFTED_PICKLES[needs])).load()
    assert str(err.value) == needs
    assert not hasattr(torch._utils._rebuild_tensor_v2, 'crafted')


@pytest.mark.filterwarnings('ignore:`torch.jit.(script|save)` is deprecated')
def test_a_torchscript_archive_is_refused(tmp_path, monkeypatch):
    monkeypatch.delenv(TRUST_ENV, raising=False)
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), tmp_path / 'scripted.pt')
    with pytest.raises(UnsafeCheckpointError, match='needs torch.jit.load'):
        load_local_checkpoint(str(tmp_path / 'scripted.pt'))


def test_the_environment_variable_opts_in(tmp_path, monkeypatch):
    ckpt, created = crafted_checkpoint(tmp_path)
    monkeypatch.setenv(TRUST_ENV, '1')
    loaded = CheckpointLoader.load_checkpoint(str(ckpt))
    assert created.exists() and torch.equal(loaded['state_dict']['w'], torch.ones(2))


def test_a_bad_environment_value_names_it(tmp_path, monkeypatch):
    ckpt, _ = crafted_checkpoint(tmp_path)
    monkeypatch.setenv(TRUST_ENV, 'yes please')
    expected = rf"{TRUST_ENV}='yes please' is not one of \['', '0', '1'\]"
    with pytest.raises(ValueError, match=expected):
        load_local_checkpoint(str(ckpt))


def test_tools_refuse_a_crafted_checkpoint_unless_trusted(data_workspace, tmp_path):
    ckpt, created = crafted_checkpoint(tmp_path)
    opts = ['--work-dir', tmp_path / 'work', '--cfg-options', 'test_dataloader.dataset.indices=8']
    proc = run_tool(['test.py', VIT_DIGITS_CFG, ckpt, *opts],
                    data_workspace,
                    env={TRUST_ENV: ''},
                    check=False)
    assert proc.returncode != 0
    assert 'UnsafeCheckpointError' in proc.stderr and '--trust-checkpoint' in proc.stderr
    assert not created.exists()
    run_tool(['test.py', VIT_DIGITS_CFG, ckpt, '--trust-checkpoint', *opts],
             data_workspace,
             env={TRUST_ENV: ''})
    assert created.exists()
