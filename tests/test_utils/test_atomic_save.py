"""Files are written through a temporary file, fsync and rename: never half-written."""
import os
import resource
import socket
import subprocess
import sys
from contextlib import contextmanager

import pytest
import torch
from mmengine.fileio import get_file_backend

from mmvitdyn.checkpoint import load_checkpoint_file
from mmvitdyn.utils import ATOMIC_BACKEND, remove_orphaned_temporaries, save_atomically


@contextmanager
def max_file_size(limit: int):
    """Writing past ``limit`` bytes fails (EFBIG), like a full disk part-way through."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def test_the_file_is_flushed_before_the_rename_and_the_directory_after(tmp_path, monkeypatch):
    events = []
    fsync, replace = os.fsync, os.replace
    monkeypatch.setattr(
        os, 'fsync', lambda fd: events.append(
            ('fsync', os.readlink(f'/proc/self/fd/{fd}'))) or fsync(fd))
    monkeypatch.setattr(
        os, 'replace', lambda src, dst: events.append(
            ('replace', str(src), str(dst))) or replace(src, dst))
    dst = tmp_path / 'out/learngene.pth'
    save_atomically({'w': torch.arange(4.)}, dst)
    tmp = str(tmp_path / 'out' / f'.learngene.pth.tmp-{socket.gethostname()}-{os.getpid()}')
    assert events == [('fsync', tmp), ('replace', tmp, str(dst)), ('fsync', str(dst.parent))]
    assert torch.equal(load_checkpoint_file(str(dst))['w'], torch.arange(4.))


def test_a_save_that_fails_part_way_leaves_the_previous_file(tmp_path):
    dst = tmp_path / 'learngene.pth'
    save_atomically({'w': torch.zeros(4)}, dst)
    # torch's C++ writer reports the failed write as a RuntimeError
    with max_file_size(64 << 10), pytest.raises(RuntimeError):
        save_atomically({'w': torch.ones(1 << 16)}, dst)  # 256 KiB of tensor data
    assert [p.name for p in tmp_path.iterdir()] == ['learngene.pth']
    assert torch.equal(load_checkpoint_file(str(dst))['w'], torch.zeros(4))


def test_the_atomic_file_backend_writes_whole_files_or_none(tmp_path):
    backend = get_file_backend(str(tmp_path), backend_args=dict(backend=ATOMIC_BACKEND))
    backend.put(b'first', tmp_path / 'ckpt.pth')
    backend.put_text('epoch_1.pth', tmp_path / 'last_checkpoint')
    with max_file_size(64 << 10), pytest.raises(OSError, match='File too large'):
        backend.put(bytes(1 << 20), tmp_path / 'ckpt.pth')
    assert sorted(p.name for p in tmp_path.iterdir()) == ['ckpt.pth', 'last_checkpoint']
    assert backend.get(tmp_path / 'ckpt.pth') == b'first'
    assert backend.get_text(tmp_path / 'last_checkpoint') == 'epoch_1.pth'


def test_temporaries_of_dead_savers_are_removed_and_live_ones_kept(tmp_path):
    dead = subprocess.run([sys.executable, '-c', 'import os; print(os.getpid())'],
                          capture_output=True,
                          text=True).stdout.strip()
    host = socket.gethostname()
    orphan = tmp_path / f'.epoch_2.pth.tmp-{host}-{dead}'
    live = tmp_path / f'.epoch_3.pth.tmp-{host}-{os.getpid()}'
    other_host = tmp_path / f'.epoch_4.pth.tmp-another-host-{dead}'
    unrelated = tmp_path / '.hidden.tmp-notapid'
    for path in (orphan, live, other_host, unrelated):
        path.write_bytes(b'partial')
    assert remove_orphaned_temporaries(str(tmp_path)) == [orphan]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [live.name, other_host.name, unrelated.name])
