"""Reading a checkpoint file runs no code from it and stays within its bounds."""
import io
import itertools
import os
import pickle
import re
import resource
import time
import zipfile

import numpy as np
import pytest
import torch
from mmengine.logging import HistoryBuffer
from mmengine.runner import CheckpointLoader

from helpers.checkpoints import (crafted_checkpoint, deflate_bomb, doubled_zip64, edit_pickle,
                                 file_state, legacy_storage_bomb, legacy_tar, op_bytes, op_get,
                                 op_global, op_int, op_put, op_text, rename_records, rewrite_zip,
                                 two_directories, zip_checkpoint)
from mmvitdyn.checkpoint import UnsafeCheckpointError, load_checkpoint_file
from mmvitdyn.checkpoint import loader as checkpoint_loader
from mmvitdyn.checkpoint import values as checkpoint_values
from mmvitdyn.settings import EXPANSION_ENV, TRUST_ENV


@pytest.fixture(autouse=True)
def untrusting(monkeypatch):
    monkeypatch.delenv(TRUST_ENV, raising=False)
    monkeypatch.delenv(EXPANSION_ENV, raising=False)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def runner_checkpoint() -> dict:
    """What mmengine 0.10's Runner saves besides tensors: history buffers and numpy values."""
    buffer = HistoryBuffer()
    for value in (0.5, 1.5, 4.0):
        buffer.update(value)
    return dict(
        state_dict={'w': torch.arange(3.)},
        message_hub=dict(
            log_scalars={'loss': buffer}, runtime_info=dict(best_score=np.float64(.25))),
        meta=dict(
            step=np.int64(7),
            rate=np.float32(0.5),
            big_endian=np.array([1, 2], dtype='>i4'),
            kept=np.asfortranarray(np.arange(6, dtype=np.int16).reshape(2, 3))))


def check_runner_checkpoint(loaded: dict) -> None:
    assert torch.equal(loaded['state_dict']['w'], torch.tensor([0., 1., 2.]))
    buffer = loaded['message_hub']['log_scalars']['loss']
    assert type(buffer) is HistoryBuffer
    assert buffer.mean() == pytest.approx(2.0) and buffer.statistics('max') == 4.0
    best = loaded['message_hub']['runtime_info']['best_score']
    assert best == 0.25 and best.dtype == np.float64
    meta = loaded['meta']
    assert (meta['step'], meta['rate']) == (7, 0.5) and meta['rate'].dtype == np.float32
    assert meta['big_endian'].tolist() == [1, 2] and meta['big_endian'].dtype == np.dtype('>i4')
    assert meta['kept'].tolist() == [[0, 1, 2], [3, 4, 5]] and meta['kept'].flags.f_contiguous


@pytest.mark.parametrize('zip_format', [True, False])
def test_runner_checkpoints_load_and_torch_globals_stay_as_they_were(tmp_path, zip_format):
    torch.save(
        runner_checkpoint(), tmp_path / 'runner.pth', _use_new_zipfile_serialization=zip_format)
    before = set(torch.serialization.get_safe_globals())
    check_runner_checkpoint(CheckpointLoader.load_checkpoint(str(tmp_path / 'runner.pth')))
    assert set(torch.serialization.get_safe_globals()) == before


def test_a_download_in_memory_loads_like_a_file(tmp_path):
    buffer = io.BytesIO()
    torch.save(runner_checkpoint(), buffer)
    check_runner_checkpoint(load_checkpoint_file(io.BytesIO(buffer.getvalue())))


@pytest.mark.parametrize('core', ['numpy.core', 'numpy._core'])
def test_numpy_1_and_2_names_load(tmp_path, core):
    """numpy 1.x pickles arrays and scalars as ``numpy.core.multiarray.*``, numpy 2 as
    ``numpy._core.multiarray.*``: both load, whichever numpy is installed."""
    torch.save(
        dict(array=np.array([[1.5, 2.0]], dtype=np.float32), scalar=np.int16(-3)),
        tmp_path / 'saved.pth')
    edit_pickle(tmp_path / 'saved.pth', tmp_path / 'renamed.pth',
                lambda data: re.sub(rb'numpy\.(_)?core\.',
                                    core.encode() + b'.', data))
    loaded = load_checkpoint_file(tmp_path / 'renamed.pth')
    assert loaded['array'].tolist() == [[1.5, 2.0]] and loaded['array'].dtype == np.float32
    assert loaded['scalar'] == -3 and loaded['scalar'].dtype == np.int16


@pytest.mark.parametrize('zip_format', [True, False])
def test_a_crafted_checkpoint_is_refused_and_runs_nothing(tmp_path, zip_format):
    created = tmp_path / 'created_by_unpickling'
    ckpt = crafted_checkpoint(tmp_path / 'crafted.pth', created, zip_format)
    with pytest.raises(UnsafeCheckpointError) as err:
        CheckpointLoader.load_checkpoint(str(ckpt))
    message = str(err.value)
    assert 'pathlib.Path' in message and str(ckpt) in message
    assert f'--trust-checkpoint {ckpt}' in message and f'{TRUST_ENV}=1' in message
    assert not created.exists()
    assert load_checkpoint_file(ckpt, trusted=True)['state_dict']['w'].sum() == 2
    assert created.exists()  # the opt-in unpickles in full: the check above could fail


class CallsSystem:

    def __reduce__(self):
        return os.system, ('true', )


def test_a_refused_function_is_named(tmp_path):
    """torch's refusal of a function whose module it blocks (os.system, whose
    module is posix) names it, as the README promises, on torch 2.14 too (its
    message has no 'WeightsUnpickler error:' line)."""
    torch.save({'state_dict': {'w': torch.ones(2)}, 'x': CallsSystem()}, tmp_path / 'x.pth')
    with pytest.raises(
            UnsafeCheckpointError, match=f'is refused: .*GLOBAL {os.system.__module__}.system'):
        load_checkpoint_file(tmp_path / 'x.pth')


class StateOf:
    """Pickles as ``func(*args)`` followed by BUILD with ``state``."""

    def __init__(self, func, args, state):
        self.reduced = (func, args, state)

    def __reduce__(self):
        return self.reduced


# Each entry: what a pickle holds, and what the refusal names. They name only
# allowed globals (numpy's dtype and array reconstruction, HistoryBuffer,
# getattr), with a state or argument that a plain value never has.
NUMPY_DTYPE_STATE = (3, '|', None, ('a', ), {'a': (np.dtype('f8'), 1 << 20)}, 8, 1, 0)
CRAFTED_VALUES = {
    'float64 dtype given a field far beyond its bytes':
    (StateOf(np.dtype, ('f8', False, True), NUMPY_DTYPE_STATE), 'is not its own'),
    'structured dtype': (np.dtype([('a', 'i4'),
                                   ('b', 'O')]), "numpy.dtype('V12') is not a numeric"),
    'object array': (np.array([None, 1], dtype=object), "numpy.dtype('O8') is not a numeric"),
    'array whose bytes do not fit its shape': (StateOf(
        np.zeros(0).__reduce__()[0], (np.ndarray, (0, ), b'b'),
        (1, (1000, ), np.dtype('f8'), False, b'\0' * 8)), 'has 8 bytes of data, expected 8000'),
    'getattr of another attribute': (StateOf(getattr, (np.ndarray, 'tofile'), None), 'getattr'),
}


@pytest.mark.parametrize('case', sorted(CRAFTED_VALUES))
def test_numpy_values_are_data_never_state_setters(tmp_path, case):
    value, names = CRAFTED_VALUES[case]
    torch.save(dict(value=value), tmp_path / 'crafted.pth')
    with pytest.raises(UnsafeCheckpointError, match=re.escape(names)):
        load_checkpoint_file(tmp_path / 'crafted.pth')


def test_a_history_buffer_cannot_rebind_the_statistics_of_every_buffer(tmp_path):
    buffer = HistoryBuffer()
    buffer.update(1.0)
    buffer.update(3.0)
    state = dict(buffer.__getstate__(), statistics_methods={'mean': HistoryBuffer.max})
    torch.save(dict(buffer=StateOf(HistoryBuffer, (), state)), tmp_path / 'crafted.pth')
    with pytest.raises(UnsafeCheckpointError, match='statistics_methods must map'):
        load_checkpoint_file(tmp_path / 'crafted.pth')
    assert HistoryBuffer._statistics_methods['mean'] is HistoryBuffer.mean
    assert buffer.mean() == 2.0


def test_a_call_of_what_an_allowed_call_returned_is_refused(tmp_path):
    """``getattr(HistoryBuffer, 'mean')`` is allowed; calling the method it returns is not."""
    buffer = HistoryBuffer()
    buffer.update(1.0)
    torch.save(dict(payload=StateOf(HistoryBuffer.mean, (buffer, ), None)), tmp_path / 'call.pth')
    with pytest.raises(UnsafeCheckpointError, match='unrecognized function'):
        load_checkpoint_file(tmp_path / 'call.pth')


@pytest.mark.filterwarnings('ignore:`torch.jit.(script|save)` is deprecated')
def test_a_torchscript_archive_is_refused(tmp_path):
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), tmp_path / 'scripted.pt')
    with pytest.raises(UnsafeCheckpointError, match='TorchScript'):
        load_checkpoint_file(tmp_path / 'scripted.pt')


@pytest.mark.filterwarnings('ignore:Sparse invariant checks')
def test_a_sparse_tensor_with_indices_out_of_range_is_refused(tmp_path):
    sparse = torch.sparse_coo_tensor(torch.tensor([[0, 5]]), torch.tensor([1., 2.]), (10, ))
    torch.save(dict(s=sparse), tmp_path / 'sparse.pth')
    indices = (0).to_bytes(8, 'little') + (5).to_bytes(8, 'little')
    rewrite_zip(
        tmp_path / 'sparse.pth', tmp_path / 'bad.pth', lambda name, data:
        ((0).to_bytes(8, 'little') + (10**6).to_bytes(8, 'little') if data == indices else data))
    assert load_checkpoint_file(tmp_path / 'sparse.pth')['s'].to_dense().sum() == 3
    with pytest.raises(UnsafeCheckpointError, match='found index 1000000'):
        load_checkpoint_file(tmp_path / 'bad.pth')


@pytest.mark.parametrize('trusted', [False, True])
@pytest.mark.parametrize('member', ['hard link', 'fifo'])
def test_the_legacy_tar_format_is_refused_without_touching_anything(tmp_path, member, trusted):
    victim = tmp_path / 'victim.txt'
    victim.write_text('untouched')
    os.chmod(victim, 0o640)
    before = file_state(victim)
    legacy_tar(tmp_path / 'legacy.tar', link_to=victim, fifo=member == 'fifo')
    start = time.perf_counter()
    with pytest.raises(UnsafeCheckpointError, match=r'legacy \.tar format'):
        load_checkpoint_file(tmp_path / 'legacy.tar', trusted=trusted)
    assert time.perf_counter() - start < 5
    assert file_state(victim) == before and victim.read_text() == 'untouched'


def test_a_deflate_bomb_is_refused_in_bounded_memory(tmp_path, monkeypatch):
    deflate_bomb(tmp_path / 'bomb.pth', megabytes=256)
    size = os.path.getsize(tmp_path / 'bomb.pth')
    assert size < 2 << 20  # 256 MiB of tensor data in under 2 MB
    peak = peak_rss_mb()
    with pytest.raises(UnsafeCheckpointError) as err:
        load_checkpoint_file(tmp_path / 'bomb.pth')
    assert peak_rss_mb() - peak < 64
    message = str(err.value)
    assert 'data/0' in message and str(256 << 20) in message and 'at most 4x' in message
    assert f'{EXPANSION_ENV}=' in message
    monkeypatch.setenv(EXPANSION_ENV, '4000')  # the bound raised: the bomb is real
    assert load_checkpoint_file(tmp_path / 'bomb.pth')['w'].numel() == 64 << 20


@pytest.mark.parametrize('numel', [10**9, 10**12])
def test_a_legacy_storage_larger_than_its_file_is_refused_in_bounded_memory(tmp_path, numel):
    legacy_storage_bomb(tmp_path / 'bomb.pth', numel)
    assert os.path.getsize(tmp_path / 'bomb.pth') < 500
    peak = peak_rss_mb()
    with pytest.raises(UnsafeCheckpointError) as err:
        load_checkpoint_file(tmp_path / 'bomb.pth')
    assert peak_rss_mb() - peak < 64
    message = str(err.value)
    assert f'({4 * numel} bytes)' in message or 'allocate' in message
    if numel == 10**9:
        assert 'at most 4x' in message and f'{EXPANSION_ENV}=' in message


def test_old_torch_refuses_every_untrusted_load_naming_the_opt_in(tmp_path, monkeypatch):
    torch.save(dict(w=torch.ones(2)), tmp_path / 'plain.pth')
    monkeypatch.setattr(checkpoint_loader, 'TORCH_LOADS_SAFELY', False)
    with pytest.raises(UnsafeCheckpointError, match=r'install torch >= 2\.6') as err:
        load_checkpoint_file(tmp_path / 'plain.pth')
    assert f'--trust-checkpoint {tmp_path / "plain.pth"}' in str(err.value)
    assert load_checkpoint_file(tmp_path / 'plain.pth', trusted=True)['w'].sum() == 2


def test_bad_settings_name_the_variable(tmp_path, monkeypatch):
    torch.save(dict(w=torch.ones(2)), tmp_path / 'plain.pth')
    monkeypatch.setenv(TRUST_ENV, 'yes please')
    with pytest.raises(ValueError, match=rf"{TRUST_ENV}='yes please' is not one of"):
        CheckpointLoader.load_checkpoint(str(tmp_path / 'plain.pth'))
    monkeypatch.setenv(TRUST_ENV, '')
    monkeypatch.setenv(EXPANSION_ENV, '-1')
    with pytest.raises(ValueError, match=rf"{EXPANSION_ENV}='-1' must be a finite number > 0"):
        load_checkpoint_file(tmp_path / 'plain.pth')


def test_a_missing_file_and_a_truncated_one_name_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match='missing.pth'):
        load_checkpoint_file(tmp_path / 'missing.pth')
    torch.save(dict(w=torch.ones(1000)), tmp_path / 'whole.pth')
    data = (tmp_path / 'whole.pth').read_bytes()
    (tmp_path / 'truncated.pth').write_bytes(data[:len(data) // 2])
    with pytest.raises(pickle.UnpicklingError, match='truncated.pth'):
        load_checkpoint_file(tmp_path / 'truncated.pth')


def openmmlab_layouts() -> dict:
    """What OpenMMLab checkpoints hold around their tensors, by the code that wrote them."""
    state = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2)).state_dict()
    return {
        'mmcv 1.x runner (mmdet 2.x, mmseg 0.x, mmcls 0.x)':
        dict(
            state_dict=state,
            meta=dict(
                mmcv_version='1.7.1',
                time='Tue Mar 21 10:00:00 2023',
                config='model = dict(type="MaskRCNN")',
                CLASSES=('person', 'bicycle'),
                PALETTE=[[220, 20, 60], [119, 11, 32]],
                epoch=12,
                iter=87960,
                hook_msgs=dict(last_ckpt='work_dirs/epoch_12.pth', best_score=0.412)),
            optimizer=dict(state={}, param_groups=[dict(lr=0.02, momentum=0.9, params=[0, 1])])),
        'mmengine runner (mmdet 3.x, mmseg 1.x, mmpretrain 1.x)':
        dict(
            meta=dict(
                dataset_meta=dict(classes=('cat', 'dog'), palette=[(0, 0, 0), (255, 0, 0)]),
                seed=np.int64(42),
                experiment_name='mask-rcnn_r50',
                mmengine_version='0.10.7'),
            state_dict=state,
            message_hub=runner_checkpoint()['message_hub'],
            param_schedulers=[dict(by_epoch=True, last_step=11, base_values=[0.02])]),
        'timm / DeiT release':
        dict(model=state),
        'bare state dict with parameters': {
            'w': torch.nn.Parameter(torch.ones(2))
        },
    }


@pytest.mark.parametrize('layout', sorted(openmmlab_layouts()))
def test_openmmlab_and_timm_layouts_load_by_default(tmp_path, layout):
    saved = openmmlab_layouts()[layout]
    torch.save(saved, tmp_path / 'release.pth')
    loaded = load_checkpoint_file(tmp_path / 'release.pth')
    assert loaded.keys() == saved.keys()
    tensors = loaded.get('state_dict', loaded.get('model', loaded))
    expected = saved.get('state_dict', saved.get('model', saved))
    assert all(torch.equal(tensors[k], expected[k]) for k in expected)
    assert getattr(tensors, '_metadata', None) == getattr(expected, '_metadata', None)


HISTORY_BUFFER = 'mmengine.logging.history_buffer'


def numpy_array_ops(values) -> bytes:
    """Opcodes of a float64 numpy array as numpy 2 pickles it."""
    raw = np.asarray(values, dtype='f8').tobytes()
    dtype = (
        op_global('numpy', 'dtype') + b'(' + op_text('f8') + b'\x89\x88tR(' + op_int(3) +
        op_text('<') + b'NNN' + op_int(-1) + op_int(-1) + op_int(0) + b'tb')
    return (op_global('numpy._core.multiarray', '_reconstruct') + b'(' +
            op_global('numpy', 'ndarray') + op_int(0) + b'\x85' + op_bytes(b'b') + b'tR(' +
            op_int(1) + op_int(len(values)) + b'\x85' + dtype + b'\x89' + op_bytes(raw) + b'tb')


# Pickles no pickler writes, each refused, and what the refusal says.
HAND_MADE = {
    'bytearray of a size (300 MiB of zeros from a few bytes)':
    (op_global('builtins', 'bytearray') + b'(' + op_int(300 << 20) + b'tR', 'bytearray of a size'),
    'hex codec chained through the memo (doubling 18 times)':
    (op_bytes(b'A' * 64) + op_put(0) + b''.join(
        op_global('_codecs', 'encode') + b'(' + op_get(i - 1) + op_text('hex') + b'tR' + op_put(i)
        for i in range(1, 19)), '_codecs.encode other than'),
    'latin1 bytes copied from the memo beyond the bound':
    (op_text('A' * 4096) + op_put(0) + b'(' + b''.join(
        op_global('_codecs', 'encode') + b'(' + op_get(0) + op_text('latin1') + b'tR'
        for _ in range(64)) + b't', 'its calls make'),
    'an uninitialised tensor of a declared size':
    (op_global('torch', 'FloatTensor') + b'(' + op_int(10**9) + b'tR', 'torch.FloatTensor called'),
    'a dtype recipe made without its code (NEWOBJ)':
    (op_global('numpy', 'dtype') + b')\x81(' + op_int(3) + op_text('<') + b'NNN' + op_int(-1) +
     op_int(-1) + op_int(0) + b'tb', 'built without its code'),
    'numpy.ndarray called': (op_global('numpy', 'ndarray') + b'(' + op_int(10**9) + b'\x85tR',
                             'a call of numpy.ndarray'),
    'a state dict whose copy() is shadowed':
    (op_global('collections', 'OrderedDict') + b')R}' + op_text('copy') +
     op_global('collections', 'OrderedDict') + b'sb', "attributes ['copy']"),
}


@pytest.mark.parametrize('case', sorted(HAND_MADE))
def test_hand_made_pickles_are_refused_in_bounded_memory(case):
    body, names = HAND_MADE[case]
    peak = peak_rss_mb()
    with pytest.raises(UnsafeCheckpointError, match=re.escape(names)):
        load_checkpoint_file(io.BytesIO(zip_checkpoint(body)))
    assert peak_rss_mb() - peak < 64


def test_a_history_buffer_state_grown_after_its_check_keeps_only_its_fields():
    state = (b'}' + op_put(1) + b'(' + op_text('max_length') + op_int(10) +
             op_text('_log_history') + numpy_array_ops([1.0]) + op_text('_count_history') +
             numpy_array_ops([1.0]) + b'u')
    body = (b'(' + op_global(HISTORY_BUFFER, 'HistoryBuffer') + b')\x81' + state + b'b' +
            op_get(1) + op_text('update') + op_int(7) + b'st')  # the dict grows after BUILD
    buffer = load_checkpoint_file(io.BytesIO(zip_checkpoint(body)))[0]
    assert sorted(vars(buffer)) == ['_count_history', '_log_history', 'max_length']
    assert callable(buffer.update) and buffer.mean() == 1.0


def test_a_record_with_two_zip64_sizes_is_bounded_by_the_size_torch_reads():
    data = doubled_zip64(1 << 20, declared=0xFFFFFFFF)
    with pytest.raises(UnsafeCheckpointError, match='data/0, to 4294967295'):
        load_checkpoint_file(io.BytesIO(data))
    good = doubled_zip64(1 << 20, declared=1 << 20)  # the same file with agreeing sizes
    assert load_checkpoint_file(io.BytesIO(good))['a'].numel() == 1 << 20


def test_empty_numpy_arrays_load(tmp_path):
    torch.save(dict(empty=np.zeros((0, 3), dtype=np.float32)), tmp_path / 'empty.pth')
    empty = load_checkpoint_file(tmp_path / 'empty.pth')['empty']
    assert empty.shape == (0, 3) and empty.dtype == np.float32


def test_an_npz_bomb_is_refused_before_numpy_reads_it(tmp_path):
    from mmvitdyn.checkpoint import load_state_dict_file
    deflate_bomb(tmp_path / 'vit.npz', megabytes=64)
    peak = peak_rss_mb()
    with pytest.raises(UnsafeCheckpointError, match='inflate to'):
        load_state_dict_file(str(tmp_path / 'vit.npz'))
    assert peak_rss_mb() - peak < 32


def test_the_users_own_allow_list_neither_weakens_nor_loses_entries(tmp_path):
    """A process that allowed numpy's real dtype itself (torch's documented advice)
    still gets the checked recipe during our loads, and keeps its entries after."""
    state = (3, '|', None, ('a', ), {'a': (np.dtype('f8'), 1 << 20)}, 8, 1, 0)
    torch.save(dict(d=StateOf(np.dtype, ('f8', False, True), state)), tmp_path / 'crafted.pth')
    before = set(torch.serialization.get_safe_globals())
    torch.serialization.add_safe_globals([np.dtype, type(np.dtype('f8'))])
    try:
        with pytest.raises(UnsafeCheckpointError, match='is not its own'):
            load_checkpoint_file(tmp_path / 'crafted.pth')
        assert set(
            torch.serialization.get_safe_globals()) == before | {np.dtype,
                                                                 type(np.dtype('f8'))}
    finally:
        torch.serialization.clear_safe_globals()
        torch.serialization.add_safe_globals(list(before))


def test_two_central_directories_are_bounded_as_torch_reads_them():
    """Python's zipfile reads a 260 kB archive here; torch's reader the same
    bytes as 256 MiB of one deflated record: the bound follows torch's."""
    data = two_directories(megabytes=256)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert sum(info.file_size for info in archive.infolist()) < 4 * len(data)
    peak = peak_rss_mb()
    with pytest.raises(UnsafeCheckpointError) as err:
        load_checkpoint_file(io.BytesIO(data))
    assert peak_rss_mb() - peak < 64
    assert 'data/0, to 268435456' in str(err.value) and 'at most 4x' in str(err.value)


def test_a_pickle_named_in_another_case_is_scanned_as_torch_reads_it(tmp_path):
    """torch's reader finds ``data.pkl`` case-insensitively: ``data.PKL`` is the
    pickle it unpickles, and the scan reads it."""
    template = tmp_path / 'template.pth'
    (tmp_path / 'template.pth').write_bytes(
        zip_checkpoint(op_global('builtins', 'bytearray') + b'(' + op_int(256 << 20) + b'tR'))
    rename_records(template, tmp_path / 'upper.pth', lambda name: name.replace('.pkl', '.PKL'))
    peak = peak_rss_mb()
    with pytest.raises(UnsafeCheckpointError, match='bytearray of a size'):
        load_checkpoint_file(tmp_path / 'upper.pth')
    assert peak_rss_mb() - peak < 64


def test_legacy_storages_are_bounded_in_total(tmp_path, monkeypatch):
    """Five storages of 600 bytes, each under a 1000-byte bound, together over it."""
    path = tmp_path / 'five.pth'
    torch.save({f'w{i}': torch.zeros(150)
                for i in range(5)},
               path,
               _use_new_zipfile_serialization=False)
    monkeypatch.setenv(EXPANSION_ENV, str(1000 / os.path.getsize(path)))
    with pytest.raises(UnsafeCheckpointError, match='brings the declared tensor data to 1200'):
        load_checkpoint_file(path)
    monkeypatch.setenv(EXPANSION_ENV, str(3000 / os.path.getsize(path)))
    assert len(load_checkpoint_file(path)) == 5


@pytest.mark.parametrize('value', ['nan', 'inf', '-inf', 'four', '0'])
def test_a_bound_that_is_no_finite_positive_number_is_refused(tmp_path, monkeypatch, value):
    torch.save(dict(w=torch.ones(2)), tmp_path / 'plain.pth')
    monkeypatch.setenv(EXPANSION_ENV, value)
    with pytest.raises(ValueError, match=rf"{EXPANSION_ENV}='{value}' must be a finite number"):
        load_checkpoint_file(tmp_path / 'plain.pth')


def test_a_history_buffer_getattr_cannot_reach_the_class_statistics(tmp_path):
    """``getattr(HistoryBuffer, '_statistics_methods')`` would hand the pickle the
    dict every buffer's statistics come from; SETITEM would rebind ``mean``."""
    statistics = (
        op_global('builtins', 'getattr') + b'(' + op_global(HISTORY_BUFFER, 'HistoryBuffer') +
        op_text('_statistics_methods') + b'tR')
    max_method = (
        op_global('builtins', 'getattr') + b'(' + op_global(HISTORY_BUFFER, 'HistoryBuffer') +
        op_text('max') + b'tR')
    body = statistics + op_text('mean') + max_method + b's'
    with pytest.raises(
            UnsafeCheckpointError, match=r"getattr\(HistoryBufferRecipe, "
            r"'_statistics_methods'\)"):
        load_checkpoint_file(io.BytesIO(zip_checkpoint(body)))
    assert HistoryBuffer._statistics_methods['mean'] is HistoryBuffer.mean


@pytest.mark.parametrize('tensor, problem',
                         [(torch.empty(3, 4, device='meta'), 'is a meta tensor'),
                          (torch.zeros(1).expand(10**6), 'has elements that share memory'),
                          (torch.arange(4.).as_strided((3, 2),
                                                       (1, 1)), 'has elements that share memory')])
def test_tensors_without_data_of_their_own_are_refused(tmp_path, tensor, problem):
    """Meta tensors always (they are never weights); views whose elements
    share memory unless the file is trusted (a model may save an expanded buffer)."""
    torch.save(dict(state_dict={'blocks.0.w': tensor, 'ok': torch.ones(2)}), tmp_path / 'c.pth')
    for trusted in (False, True) if tensor.is_meta else (False, ):
        with pytest.raises(UnsafeCheckpointError) as err:
            load_checkpoint_file(tmp_path / 'c.pth', trusted=trusted)
        assert f'tensor state_dict.blocks.0.w {problem}' in str(err.value)
        assert str(tmp_path / 'c.pth') in str(err.value)
    if not tensor.is_meta:
        loaded = load_checkpoint_file(tmp_path / 'c.pth', trusted=True)['state_dict']['blocks.0.w']
        assert loaded.shape == tensor.shape and loaded.stride() == tensor.stride()


def test_views_that_torch_save_writes_load(tmp_path):
    base = torch.arange(12.).reshape(3, 4)
    interleaved = torch.arange(8.).as_strided((2, 2), (2, 3))  # offsets 0, 3, 2, 5: no overlap
    nested = torch.nested.nested_tensor([torch.ones(2, 3), torch.zeros(4, 3)])
    torch.save(
        dict(
            t=base.t(),
            row=base[1],
            col=base[:, 2],
            tied=base,
            interleaved=interleaved,
            channels_last=torch.randn(2, 3, 4, 4).to(memory_format=torch.channels_last),
            nested=nested), tmp_path / 'views.pth')
    loaded = load_checkpoint_file(tmp_path / 'views.pth')
    assert torch.equal(loaded['t'], base.t()) and torch.equal(loaded['col'], base[:, 2])
    assert torch.equal(loaded['interleaved'], interleaved)
    assert torch.equal(loaded['nested'].unbind()[1], torch.zeros(4, 3))


def test_the_mapped_file_is_the_opened_one(tmp_path, monkeypatch):
    """``mmap=True`` maps the file that was opened and checked, even when its
    name points elsewhere by the time torch opens it."""
    torch.save(dict(w=torch.ones(3)), tmp_path / 'good.pth')
    torch.save(dict(w=torch.zeros(3)), tmp_path / 'other.pth')
    (tmp_path / 'link.pth').symlink_to(tmp_path / 'good.pth')
    real_load = torch.load

    def swap_then_load(*args, **kwargs):  # the link moves between the check and the read
        (tmp_path / 'link.pth').unlink()
        (tmp_path / 'link.pth').symlink_to(tmp_path / 'other.pth')
        return real_load(*args, **kwargs)

    monkeypatch.setattr(torch, 'load', swap_then_load)
    assert load_checkpoint_file(tmp_path / 'link.pth', mmap=True)['w'].tolist() == [1., 1., 1.]


def test_a_fifo_is_refused_without_waiting(tmp_path):
    os.mkfifo(tmp_path / 'fifo.pth')
    start = time.perf_counter()
    with pytest.raises(FileNotFoundError, match='not a regular file'):
        load_checkpoint_file(tmp_path / 'fifo.pth')
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize('trusted', [False, True])
def test_mapping_a_legacy_or_in_memory_checkpoint_is_refused_as_such(tmp_path, trusted):
    torch.save(dict(w=torch.ones(2)), tmp_path / 'legacy.pth', _use_new_zipfile_serialization=False)
    buffer = io.BytesIO()
    torch.save(dict(w=torch.ones(2)), buffer)
    for source in (tmp_path / 'legacy.pth', io.BytesIO(buffer.getvalue())):
        with pytest.raises(UnsafeCheckpointError, match=r'cannot be mapped \(mmap=True\): only'):
            load_checkpoint_file(source, mmap=True, trusted=trusted)


@pytest.mark.parametrize('chunk', [3, 1 << 20], ids=['chunked', 'at-once'])
def test_the_overlap_check_equals_counting_offsets(chunk, monkeypatch):
    """On 300 random views of a 60-element storage, with the offsets computed 3
    at a time or all at once: shares memory iff two elements' offsets
    (storage_offset + sum(index_d * stride_d), counted here) coincide."""
    monkeypatch.setattr(checkpoint_values, 'OFFSET_CHUNK', chunk)
    generator = torch.Generator().manual_seed(0)

    def draw(high):
        return int(torch.randint(0, high, (), generator=generator))

    storage = torch.zeros(60)
    for _ in range(300):
        shape = [1 + draw(4) for _ in range(1 + draw(3))]
        strides = [draw(6) for _ in shape]
        offset = draw(4)
        if offset + sum((s - 1) * d for s, d in zip(shape, strides)) >= 60:
            continue
        view = storage.as_strided(shape, strides, offset)
        offsets = [
            offset + sum(i * d for i, d in zip(index, strides))
            for index in itertools.product(*map(range, shape))
        ]
        expected = len(set(offsets)) < len(offsets)
        assert checkpoint_values._shares_memory(view, [10**6]) == expected, (shape, strides)


def test_the_overlap_checks_of_a_checkpoint_are_bounded(tmp_path):
    """One view referred to 30,000 times is checked once; 600 distinct views of
    interleaved strides over one 4,000-byte storage (300,000 offsets to compute,
    more than 4 per byte of storage) are refused, naming the bound."""
    base = torch.zeros(4000, dtype=torch.bool)
    view = base.as_strided((2, 250), (3, 2))  # interleaved, no overlap: offsets to compute
    torch.save({'w': [view] * 30000}, tmp_path / 'repeated.pth')
    assert len(load_checkpoint_file(tmp_path / 'repeated.pth')['w']) == 30000
    views = [base.as_strided((2, 250), (3, 2), offset) for offset in range(600)]
    torch.save({'w': views}, tmp_path / 'distinct.pth')
    with pytest.raises(
            UnsafeCheckpointError,
            match='would take more than 4 element offsets per '
            "byte of the checkpoint's storages"):
        load_checkpoint_file(tmp_path / 'distinct.pth')
