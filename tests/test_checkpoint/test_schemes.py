"""Every checkpoint scheme mmengine knows ends in the safe loader: remote files too."""
import http.server
import io
import os
import shutil
import sys
import threading
import types
from functools import partial

import pytest
import torch
from mmengine.runner import CheckpointLoader
from mmengine.runner.checkpoint import get_external_models, get_mmcls_models

import mmvitdyn.checkpoint.schemes as schemes
from helpers.checkpoints import crafted_checkpoint
from mmvitdyn.checkpoint import UnsafeCheckpointError, trusted_checkpoints
from mmvitdyn.checkpoint.schemes import SCHEMES, hub_checkpoint_path
from mmvitdyn.settings import TRUST_ENV

OPENMMLAB_NAME = next(n for n, u in sorted(get_external_models().items()) if u.startswith('http'))
MMCLS_NAME = sorted(get_mmcls_models())[0]
# Each scheme and alias, with the URL mmengine's tables resolve it to.
REMOTE_NAMES = {
    'https://download.example/models/crafted.pth': 'https://download.example/models/crafted.pth',
    'http://download.example/models/crafted.pth': 'http://download.example/models/crafted.pth',
    'torchvision://resnet18': schemes.get_torchvision_models()['resnet18'],
    'modelzoo://resnet18': schemes.get_torchvision_models()['resnet18'],
    f'open-mmlab://{OPENMMLAB_NAME}': get_external_models()[OPENMMLAB_NAME],
    f'openmmlab://{OPENMMLAB_NAME}': get_external_models()[OPENMMLAB_NAME],
    f'mmcls://{MMCLS_NAME}': get_mmcls_models()[MMCLS_NAME],
}


@pytest.fixture
def torch_home(tmp_path, monkeypatch):
    """An empty torch hub cache, no trust, and no network: a download fails the test."""
    monkeypatch.setenv('TORCH_HOME', str(tmp_path / 'torch_home'))
    monkeypatch.delenv(TRUST_ENV, raising=False)

    def no_download(url, *args, **kwargs):
        raise AssertionError(f'tried to download {url}')

    monkeypatch.setattr(torch.hub, 'download_url_to_file', no_download)
    return tmp_path / 'torch_home'


def plant(url: str, created):
    """A crafted checkpoint in torch hub's cache under ``url``'s file name."""
    path = hub_checkpoint_path(url)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return crafted_checkpoint(path, created)


def test_every_registered_scheme_is_ours():
    import mmdet.apis  # noqa: F401  (the OpenMMLab packages register what they register)
    import mmpretrain  # noqa: F401
    import mmseg.apis  # noqa: F401
    registered = dict(CheckpointLoader._schemes)
    assert set(registered) == set(SCHEMES), 'a scheme without a safe loader, or one missing'
    others = {p: loader.__module__ for p, loader in registered.items() if loader is not SCHEMES[p]}
    assert not others


@pytest.mark.parametrize('name', sorted(REMOTE_NAMES))
def test_a_planted_hub_file_is_refused_for_every_scheme(torch_home, tmp_path, monkeypatch, name):
    created = tmp_path / 'created'
    cached = plant(REMOTE_NAMES[name], created)
    with pytest.raises(UnsafeCheckpointError, match='pathlib.Path') as err:
        CheckpointLoader.load_checkpoint(name)
    message = str(err.value)
    assert str(cached) in message and f'--trust-checkpoint {name} ' in message
    assert not created.exists()
    downloads = []

    def download(url, path, progress=True):  # serves the planted file's bytes
        downloads.append(url)
        shutil.copyfile(cached, path)

    monkeypatch.setattr(torch.hub, 'download_url_to_file', download)
    with trusted_checkpoints([name]):  # the opt-in by the name the user wrote
        assert CheckpointLoader.load_checkpoint(name) is not None
    assert created.exists()  # trusted: unpickled in full, from a fresh download
    assert downloads == [REMOTE_NAMES[name]]


def test_mmcls_keys_are_converted_as_mmengine_converts_them(torch_home):
    url = REMOTE_NAMES[f'mmcls://{MMCLS_NAME}']
    path = hub_checkpoint_path(url)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.save(dict(state_dict={'backbone.w': torch.ones(1), 'head.b': torch.zeros(1)}), path)
    loaded = CheckpointLoader.load_checkpoint(f'mmcls://{MMCLS_NAME}')
    assert list(loaded) == ['state_dict']  # mmengine keeps the backbone, without its prefix
    assert list(loaded['state_dict']) == ['w'] and loaded['state_dict']['w'].item() == 1


class Files(http.server.SimpleHTTPRequestHandler):

    def log_message(self, *args):
        pass


@pytest.fixture
def http_root(tmp_path):
    """A local HTTP server (127.0.0.1) serving ``tmp_path / 'served'``."""
    root = tmp_path / 'served'
    root.mkdir()
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), partial(Files, directory=root))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f'http://127.0.0.1:{server.server_address[1]}'
    server.shutdown()
    server.server_close()


def test_a_download_is_cached_then_read_by_the_safe_loader(tmp_path, monkeypatch, http_root):
    monkeypatch.setenv('TORCH_HOME', str(tmp_path / 'torch_home'))
    monkeypatch.delenv(TRUST_ENV, raising=False)
    root, base = http_root
    torch.save(dict(state_dict={'w': torch.arange(3.)}), root / 'good.pth')
    created = tmp_path / 'created'
    crafted_checkpoint(root / 'crafted.pth', created)
    loaded = CheckpointLoader.load_checkpoint(f'{base}/good.pth')
    assert torch.equal(loaded['state_dict']['w'], torch.arange(3.))
    assert (tmp_path / 'torch_home/hub/checkpoints/good.pth').is_file()
    with pytest.raises(UnsafeCheckpointError, match='pathlib.Path'):
        CheckpointLoader.load_checkpoint(f'{base}/crafted.pth')
    assert not created.exists()
    assert sorted(p.name for p in (tmp_path / 'torch_home/hub/checkpoints').iterdir()) == [
        'crafted.pth', 'good.pth'
    ]  # no partial download left behind


def test_pavi_downloads_are_refused_like_local_files(tmp_path, monkeypatch):
    monkeypatch.delenv(TRUST_ENV, raising=False)
    created = tmp_path / 'created'
    crafted = crafted_checkpoint(tmp_path / 'crafted.pth', created)

    class Model:
        name = 'crafted.pth'

        def download(self, path):
            with open(path, 'wb') as out:
                out.write(crafted.read_bytes())

    modelcloud = types.SimpleNamespace(get=lambda path: Model())
    monkeypatch.setitem(sys.modules, 'pavi', types.SimpleNamespace(modelcloud=modelcloud))
    monkeypatch.setitem(sys.modules, 'pavi.modelcloud', modelcloud)
    with pytest.raises(UnsafeCheckpointError, match='pavi://project/crafted.pth'):
        CheckpointLoader.load_checkpoint('pavi://project/crafted.pth')
    assert not created.exists()


@pytest.mark.parametrize('name', ['s3://bucket/crafted.pth', 'cluster:petrel://bucket/crafted.pth'])
def test_object_store_bytes_are_refused_like_local_files(tmp_path, monkeypatch, name):
    monkeypatch.delenv(TRUST_ENV, raising=False)
    created = tmp_path / 'created'
    data = crafted_checkpoint(tmp_path / 'crafted.pth', created).read_bytes()
    backend = types.SimpleNamespace(get=lambda filename: data)
    monkeypatch.setattr(schemes, 'get_file_backend', lambda filename, backend_args: backend)
    with pytest.raises(UnsafeCheckpointError, match='pathlib.Path'):
        CheckpointLoader.load_checkpoint(name)
    assert not created.exists()
    torch.save(dict(w=torch.ones(2)), buffer := io.BytesIO())
    backend.get = lambda filename: buffer.getvalue()
    assert CheckpointLoader.load_checkpoint(name)['w'].sum() == 2


def test_a_symbolic_link_to_a_crafted_file_is_refused(tmp_path, monkeypatch):
    monkeypatch.delenv(TRUST_ENV, raising=False)
    created = tmp_path / 'created'
    target = crafted_checkpoint(tmp_path / 'crafted.pth', created)
    (tmp_path / 'link.pth').symlink_to(target)
    with pytest.raises(UnsafeCheckpointError):
        CheckpointLoader.load_checkpoint(str(tmp_path / 'link.pth'))
    assert not created.exists()
    with trusted_checkpoints([target]):  # trusting the file trusts a link to it
        CheckpointLoader.load_checkpoint(str(tmp_path / 'link.pth'))
    assert created.exists()


def test_a_trusted_url_is_downloaded_afresh_not_taken_from_the_cache(tmp_path, monkeypatch,
                                                                     http_root):
    """The hub cache is keyed by file name: a file cached from another URL must not
    be unpickled in full because the user trusts this one."""
    monkeypatch.setenv('TORCH_HOME', str(tmp_path / 'torch_home'))
    monkeypatch.delenv(TRUST_ENV, raising=False)
    root, base = http_root
    (root / 'evil').mkdir()
    (root / 'good').mkdir()
    created = tmp_path / 'created'
    crafted_checkpoint(root / 'evil/model.pth', created)
    torch.save(dict(state_dict={'w': torch.ones(2)}), root / 'good/model.pth')
    with pytest.raises(UnsafeCheckpointError):  # cached under model.pth, refused
        CheckpointLoader.load_checkpoint(f'{base}/evil/model.pth')
    with trusted_checkpoints([f'{base}/good/model.pth']):
        loaded = CheckpointLoader.load_checkpoint(f'{base}/good/model.pth')
    assert loaded['state_dict']['w'].sum() == 2 and not created.exists()
