"""Atomic publishing of generated sets: all or nothing, reused when equal."""
import json

import pytest

from mmvitdyn.datasets.generators.atomic import MARKER, write_atomically


def write_two_files(root):
    (root / 'a.txt').write_text('a')
    (root / 'b.txt').write_text('b')
    return {'train': 2}


def fail_halfway(root):
    (root / 'a.txt').write_text('a')
    raise KeyboardInterrupt


def test_writes_files_and_marker(tmp_path):
    out = tmp_path / 'set'
    generated = write_atomically(str(out), 'toy/1', {'n': 2}, write_two_files)
    assert generated.created and generated.counts == {'train': 2}
    assert sorted(p.name for p in out.iterdir()) == [MARKER, 'a.txt', 'b.txt']
    marker = json.loads((out / MARKER).read_text())
    assert marker == {'generator': 'toy/1', 'params': {'n': 2}, 'counts': {'train': 2}}


def test_interrupted_write_leaves_nothing(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        write_atomically(str(tmp_path / 'set'), 'toy/1', {}, fail_halfway)
    assert list(tmp_path.iterdir()) == []


def test_interrupted_overwrite_keeps_old_set(tmp_path):
    out = tmp_path / 'set'
    write_atomically(str(out), 'toy/1', {}, write_two_files)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(str(out), 'toy/1', {}, fail_halfway, overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ['set']
    assert (out / 'b.txt').read_text() == 'b'


def test_same_params_reuse_without_writing(tmp_path):
    out = tmp_path / 'set'
    write_atomically(str(out), 'toy/1', {'size': (2, 3)}, write_two_files)
    again = write_atomically(str(out), 'toy/1', {'size': (2, 3)}, fail_halfway)
    assert not again.created and again.counts == {'train': 2}


@pytest.mark.parametrize('generator, params', [('toy/2', {}), ('toy/1', {'n': 3})])
def test_other_set_in_the_way_raises(tmp_path, generator, params):
    out = tmp_path / 'set'
    write_atomically(str(out), 'toy/1', {}, write_two_files)
    with pytest.raises(FileExistsError, match='overwrite=True'):
        write_atomically(str(out), generator, params, write_two_files)
    replaced = write_atomically(str(out), generator, params, write_two_files, overwrite=True)
    assert replaced.created


def test_folder_without_marker_raises(tmp_path):
    (tmp_path / 'set').mkdir()
    with pytest.raises(FileExistsError, match='no .complete marker'):
        write_atomically(str(tmp_path / 'set'), 'toy/1', {}, write_two_files)
