"""mmengine's checkpoint schemes, each ending in :func:`load_checkpoint_file`.

Importing mmvitdyn registers :data:`SCHEMES` for every prefix mmengine's
``CheckpointLoader`` knows (:func:`register_checkpoint_schemes`). Each loader
resolves the name as mmengine does and fetches the bytes (a URL through torch
hub's cache, or afresh when the user trusts it); docs/checkpoints.md says why.
"""
import io
import os
import os.path as osp
import sys
from tempfile import TemporaryDirectory
from typing import Dict, Optional
from urllib.parse import urlparse

import torch
from mmengine.dist import get_dist_info
from mmengine.fileio import get_file_backend
from mmengine.runner import CheckpointLoader
from mmengine.runner.checkpoint import (_get_mmengine_home, _process_mmcls_checkpoint,
                                        get_deprecated_model_names, get_external_models,
                                        get_mmcls_models, get_torchvision_models)

from .loader import load_checkpoint_file
from .trust import is_trusted


def url_filename(url: str) -> str:
    """The file name a URL ends in (what torch hub's cache is keyed by)."""
    filename = osp.basename(urlparse(url).path)
    if not filename:
        raise ValueError(f'checkpoint URL {url!r} names no file')
    return filename


def hub_checkpoint_path(url: str) -> str:
    """Where ``torch.hub`` caches ``url``: ``$TORCH_HOME/hub/checkpoints/<file name>``."""
    return osp.join(torch.hub.get_dir(), 'checkpoints', url_filename(url))


def fetch_url(url: str) -> str:
    """The local copy of ``url`` in torch hub's cache, downloaded if absent
    (rank 0 first, the other ranks after a barrier); torch writes the download
    to a temporary file and renames it, so no partial file is cached."""
    cached = hub_checkpoint_path(url)
    rank, world_size = get_dist_info()
    if rank == 0 and not osp.isfile(cached):
        os.makedirs(osp.dirname(cached), exist_ok=True)
        torch.hub.download_url_to_file(url, cached, progress=sys.stderr.isatty())
    if world_size > 1:
        torch.distributed.barrier()
        if rank > 0 and not osp.isfile(cached):
            torch.hub.download_url_to_file(url, cached, progress=False)
    return cached


def _load_fetched(path: str,
                  map_location,
                  name: str,
                  url: Optional[str] = None,
                  trusted: Optional[bool] = None):
    """Read ``path``, the local copy of the checkpoint the user named ``name``
    (resolved to ``url``); unless ``trusted`` says, trusted as the file or by
    ``name``."""
    via = f'{url}, read from {path}' if url and url != name else f'read from {path}'
    return load_checkpoint_file(
        path, map_location, trusted=trusted, trust_names=[name], name=name, via=via)


def load_from_local(filename: str, map_location=None):
    """A local file (``~`` expanded, symbolic links followed), trusted as the
    file it opens."""
    return load_checkpoint_file(osp.expanduser(filename), map_location, name=filename)


def load_from_http(filename: str, map_location=None, *, alias: Optional[str] = None):
    """An ``http(s)://`` URL (that ``alias`` resolved to), through torch hub's
    cache, or, when the user trusts it, downloaded afresh."""
    name = alias or filename
    if not is_trusted(name, filename):
        return _load_fetched(fetch_url(filename), map_location, name, filename, trusted=False)
    with TemporaryDirectory() as tmp_dir:
        path = osp.join(tmp_dir, url_filename(filename))
        torch.hub.download_url_to_file(filename, path, progress=sys.stderr.isatty())
        return _load_fetched(path, map_location, name, filename, trusted=True)


def load_from_torchvision(filename: str, map_location=None):
    """``torchvision://NAME`` (``modelzoo://NAME``): torchvision's URL of NAME."""
    prefix = 'modelzoo://' if filename.startswith('modelzoo://') else 'torchvision://'
    model_name = filename[len(prefix):]
    urls = get_torchvision_models()
    if model_name not in urls:
        raise KeyError(f'{filename}: torchvision has no model {model_name!r}')
    return load_from_http(urls[model_name], map_location, alias=filename)


def load_from_openmmlab(filename: str, map_location=None):
    """``open-mmlab://NAME`` (``openmmlab://NAME``): mmengine's table of
    OpenMMLab models (deprecated names mapped), a URL or a file under
    mmengine's home."""
    prefix = 'open-mmlab://' if filename.startswith('open-mmlab://') else 'openmmlab://'
    model_name = filename[len(prefix):]
    model_name = get_deprecated_model_names().get(model_name, model_name)
    urls = get_external_models()
    if model_name not in urls:
        raise KeyError(f'{filename}: mmengine knows no OpenMMLab model {model_name!r}')
    url = urls[model_name]
    if url.startswith(('http://', 'https://')):
        return load_from_http(url, map_location, alias=filename)
    path = osp.join(_get_mmengine_home(), url)
    if not osp.isfile(path):
        raise FileNotFoundError(f'{filename}: {path} can not be found')
    return _load_fetched(path, map_location, filename)


def load_from_mmcls(filename: str, map_location=None):
    """``mmcls://NAME``: mmengine's table of mmcls models, keys converted as mmengine does."""
    model_name = filename[len('mmcls://'):]
    urls = get_mmcls_models()
    if model_name not in urls:
        raise KeyError(f'{filename}: mmengine knows no mmcls model {model_name!r}')
    return _process_mmcls_checkpoint(load_from_http(urls[model_name], map_location, alias=filename))


def load_from_pavi(filename: str, map_location=None):
    """``pavi://PATH``: downloaded by pavi's model cloud client into a temporary folder."""
    try:
        from pavi import modelcloud
    except ImportError as err:
        raise ImportError(f'{filename}: install pavi to load checkpoints from its model '
                          'cloud') from err
    model = modelcloud.get(filename[len('pavi://'):])
    with TemporaryDirectory() as tmp_dir:
        path = osp.join(tmp_dir, osp.basename(model.name))
        model.download(path)
        return _load_fetched(path, map_location, filename)


def load_from_ceph(filename: str, map_location=None, backend: str = 'petrel'):
    """``s3://`` / ``petrel://`` objects, read by mmengine's file backend."""
    file_backend = get_file_backend(filename, backend_args=dict(backend=backend))
    with io.BytesIO(file_backend.get(filename)) as buffer:
        return load_checkpoint_file(buffer, map_location, trust_names=[filename], name=filename)


#: mmengine's prefixes (regular expressions matched at the start) -> our loader.
SCHEMES: Dict[str, object] = {
    '': load_from_local,
    'http://': load_from_http,
    'https://': load_from_http,
    'modelzoo://': load_from_torchvision,
    'torchvision://': load_from_torchvision,
    'open-mmlab://': load_from_openmmlab,
    'openmmlab://': load_from_openmmlab,
    'mmcls://': load_from_mmcls,
    'pavi://': load_from_pavi,
    r'(\S+\:)?s3://': load_from_ceph,
    r'(\S+\:)?petrel://': load_from_ceph,
}


def register_checkpoint_schemes() -> None:
    """Make mmengine's ``CheckpointLoader`` use :data:`SCHEMES` for every prefix."""
    for prefix, loader in SCHEMES.items():
        CheckpointLoader.register_scheme(prefixes=prefix, loader=loader, force=True)
