"""The opt-in to full unpickling trusts exactly the files it names, for one command."""
import os
import subprocess
import sys
import textwrap

import pytest
import torch
from mmengine.runner import CheckpointLoader

from helpers.checkpoints import CreatesFile, crafted_checkpoint
from helpers.configs import VIT_DIGITS_CFG
from helpers.models import tiny
from helpers.tools import REPO, load_tool, run_tool
from mmvitdyn.checkpoint import UnsafeCheckpointError, is_trusted, trusted_checkpoints
from mmvitdyn.settings import TRUST_ENV


@pytest.fixture(autouse=True)
def untrusting(monkeypatch):
    monkeypatch.delenv(TRUST_ENV, raising=False)


def crafted_timm_checkpoint(path, created):
    """A timm-layout ViT checkpoint that also creates ``created`` when unpickled."""
    torch.save(dict(model=tiny().state_dict(), payload=CreatesFile(created)), path)
    return path


def test_trust_holds_inside_the_block_for_the_named_file_only(tmp_path):
    named = crafted_checkpoint(tmp_path / 'named.pth', tmp_path / 'named_created')
    other = crafted_checkpoint(tmp_path / 'other.pth', tmp_path / 'other_created')
    with trusted_checkpoints([named]):
        assert is_trusted(named) and not is_trusted(other)
        CheckpointLoader.load_checkpoint(str(named))
        with pytest.raises(UnsafeCheckpointError):
            CheckpointLoader.load_checkpoint(str(other))
    assert (tmp_path / 'named_created').exists() and not (tmp_path / 'other_created').exists()
    assert not is_trusted(named)
    (tmp_path / 'named_created').unlink()
    with pytest.raises(UnsafeCheckpointError):
        CheckpointLoader.load_checkpoint(str(named))
    assert not (tmp_path / 'named_created').exists()


def test_a_process_started_inside_the_block_trusts_nothing(tmp_path):
    named = crafted_checkpoint(tmp_path / 'named.pth', tmp_path / 'created')
    child = textwrap.dedent(f"""
        import mmvitdyn
        from mmengine.runner import CheckpointLoader
        CheckpointLoader.load_checkpoint({str(named)!r})
    """)
    env = {**os.environ, 'PYTHONPATH': str(REPO)}
    with trusted_checkpoints([named]):
        assert TRUST_ENV not in os.environ
        proc = subprocess.run([sys.executable, '-c', child],
                              env=env,
                              capture_output=True,
                              text=True)
    assert proc.returncode != 0 and 'UnsafeCheckpointError' in proc.stderr
    assert not (tmp_path / 'created').exists()


def test_the_tool_flag_trusts_its_source_for_that_command_only(tmp_path):
    converter = load_tool('model_converters/timm2mmvitdyn.py')
    src = crafted_timm_checkpoint(tmp_path / 'vit.pth', tmp_path / 'created')
    environ = dict(os.environ)
    converter.main([str(src), str(tmp_path / 'out.pth'), '--trust-checkpoint'])
    assert (tmp_path / 'created').exists() and (tmp_path / 'out.pth').is_file()
    assert dict(os.environ) == environ and not is_trusted(src)
    (tmp_path / 'created').unlink()
    with pytest.raises(UnsafeCheckpointError):  # a later load in the same process
        CheckpointLoader.load_checkpoint(str(src))
    assert not (tmp_path / 'created').exists()


def test_a_tool_that_failed_leaves_nothing_trusted(tmp_path, capsys):
    converter = load_tool('model_converters/dyt2mmvitdyn.py')  # a timm file is the wrong format
    src = crafted_timm_checkpoint(tmp_path / 'vit.pth', tmp_path / 'created')
    with pytest.raises(SystemExit):
        converter.main([str(src), str(tmp_path / 'out.pth'), '--trust-checkpoint'])
    assert 'is a timm checkpoint' in capsys.readouterr().err
    assert not is_trusted(src) and not (tmp_path / 'out.pth').exists()


def test_the_flag_with_paths_trusts_those_and_not_the_source(tmp_path, capsys):
    converter = load_tool('model_converters/timm2mmvitdyn.py')
    src = crafted_timm_checkpoint(tmp_path / 'vit.pth', tmp_path / 'created')
    with pytest.raises(SystemExit) as exit_info:
        converter.main([
            str(src),
            str(tmp_path / 'out.pth'), '--trust-checkpoint',
            str(tmp_path / 'elsewhere.pth')
        ])
    assert exit_info.value.code == 2 and 'pathlib.Path' in capsys.readouterr().err
    assert not (tmp_path / 'created').exists()


def test_train_py_trusts_only_what_it_is_told(data_workspace, tmp_path):
    proc = run_tool(
        ['train.py', VIT_DIGITS_CFG, '--work-dir', tmp_path / 'work', '--trust-checkpoint'],
        data_workspace,
        check=False)
    assert proc.returncode == 2
    assert 'has none; name the files: --trust-checkpoint PATH' in proc.stderr
    assert not (tmp_path / 'work').exists()


def test_test_py_refuses_a_crafted_checkpoint_unless_it_is_named(data_workspace, tmp_path):
    created = tmp_path / 'created'
    ckpt = crafted_checkpoint(tmp_path / 'crafted.pth', created)
    opts = ['--work-dir', tmp_path / 'work', '--cfg-options', 'test_dataloader.dataset.indices=8']
    proc = run_tool(['test.py', VIT_DIGITS_CFG, ckpt, *opts], data_workspace, check=False)
    assert proc.returncode != 0 and 'UnsafeCheckpointError' in proc.stderr
    assert f'--trust-checkpoint {ckpt}' in proc.stderr and not created.exists()
    run_tool(['test.py', VIT_DIGITS_CFG, ckpt, *opts, '--trust-checkpoint'], data_workspace)
    assert created.exists()


def test_a_forked_child_trusts_nothing(tmp_path):
    named = crafted_checkpoint(tmp_path / 'named.pth', tmp_path / 'created')
    read, write = os.pipe()
    with trusted_checkpoints([named]):
        pid = os.fork()
        if pid == 0:  # the child: report whether it trusts the file, then leave at once
            os.write(write, b'1' if is_trusted(named) else b'0')
            os._exit(0)
        assert is_trusted(named)
    os.waitpid(pid, 0)
    assert os.read(read, 1) == b'0'


def test_trust_is_decided_on_the_file_opened_not_on_its_name(tmp_path, monkeypatch):
    """The link is swapped to a crafted file just before the loader opens it
    (the race that a name check followed by an open by name loses)."""
    trusted = crafted_checkpoint(tmp_path / 'trusted.pth', tmp_path / 'trusted_created')
    crafted = crafted_checkpoint(tmp_path / 'crafted.pth', tmp_path / 'crafted_created')
    link = tmp_path / 'link.pth'
    link.symlink_to(trusted)
    real_os_open, real_open = os.open, open

    def swapped_first(opener):

        def open_swapped(path, *args, **kwargs):
            if os.fspath(path) == str(link) and link.resolve() == trusted:
                link.unlink()
                link.symlink_to(crafted)
            return opener(path, *args, **kwargs)

        return open_swapped

    monkeypatch.setattr(os, 'open', swapped_first(real_os_open))
    monkeypatch.setattr('builtins.open', swapped_first(real_open))
    with trusted_checkpoints([link]):
        with pytest.raises(UnsafeCheckpointError, match=str(link)):
            CheckpointLoader.load_checkpoint(str(link))
    assert not (tmp_path / 'crafted_created').exists()


def test_a_file_replaced_under_a_trusted_name_is_not_trusted(tmp_path):
    named = crafted_checkpoint(tmp_path / 'named.pth', tmp_path / 'named_created')
    with trusted_checkpoints([named]):
        crafted_checkpoint(tmp_path / 'new.pth', tmp_path / 'new_created')
        os.replace(tmp_path / 'new.pth', named)  # the name now holds another file
        with pytest.raises(UnsafeCheckpointError):
            CheckpointLoader.load_checkpoint(str(named))
    assert not (tmp_path / 'new_created').exists()


def test_a_file_written_later_under_a_freed_inode_is_not_trusted(tmp_path):
    """The file system may give the freed inode of the trusted file to the next one."""
    named = crafted_checkpoint(tmp_path / 'named.pth', tmp_path / 'named_created')
    with trusted_checkpoints([named]):
        inode = os.stat(named).st_ino
        for attempt in range(20):  # until the new file gets the freed inode (ext4: at once)
            named.unlink()
            crafted_checkpoint(named, tmp_path / 'new_created')
            if os.stat(named).st_ino == inode:
                break
        with pytest.raises(UnsafeCheckpointError):
            CheckpointLoader.load_checkpoint(str(named))
    assert not (tmp_path / 'new_created').exists()
