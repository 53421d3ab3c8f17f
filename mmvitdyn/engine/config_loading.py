"""Reading a config as the tools and :func:`~mmvitdyn.apis.init_model` do, and
naming the files a command run with it reads."""
import os.path as osp
import tempfile
from typing import List, Optional

from mmengine.config import Config

from ..datasets import data_paths
from .setup_error import SetupError

# How each supported scope switches on drawing predictions and dumping them.
SCOPES = {
    'mmpretrain': dict(vis_on=dict(enable=True), vis_dir_key='out_dir', dump='DumpResults'),
    'mmdet': dict(vis_on=dict(draw=True), vis_dir_key='test_out_dir', dump='DumpDetResults'),
    'mmseg': dict(vis_on=dict(draw=True), vis_dir_key=None, dump='DumpResults'),
    'mmaction': dict(vis_on=dict(enable=True), vis_dir_key='out_dir', dump='DumpResults'),
}


def load_config(path: str, cfg_options: Optional[dict] = None) -> Config:
    """Read a config, apply ``--cfg-options``, keep no workers where there are
    none (:func:`keep_workers_only_where_there_are_some`) and check its
    ``default_scope``."""
    if not osp.isfile(path):
        raise SetupError(f'config file {path!r} does not exist (configs live under configs/, '
                         'e.g. configs/vit/)')
    cfg = Config.fromfile(path)
    if cfg_options:
        cfg.merge_from_dict(cfg_options)
    keep_workers_only_where_there_are_some(cfg)
    scope = cfg.get('default_scope')
    if scope not in SCOPES:
        raise SetupError(f'{path}: default_scope={scope!r} is not supported; '
                         f'use one of {sorted(SCOPES)}')
    return cfg


def config_files(path: str) -> List[str]:
    """The config file ``path`` and every ``_base_`` file it inherits, as
    mmengine's ``Config.fromfile`` finds them."""
    files = [path]
    with tempfile.TemporaryDirectory() as folder:  # as fromfile: {{ fileDirname }} etc. first
        text = osp.join(folder, 'config' + osp.splitext(path)[1])
        Config._substitute_predefined_vars(path, text)
        bases = Config._get_base_files(text)
    for base in bases:
        files += config_files(Config._get_cfg_path(base, path)[0])
    return files


def config_inputs(cfg: Config) -> List[str]:
    """What a command run with ``cfg`` reads, for its writers to leave
    alone: the config's files (:func:`config_files`) and its data paths
    (folders included; see :func:`~mmvitdyn.datasets.data_paths`)."""
    return config_files(cfg.filename) + data_paths(cfg)


def keep_workers_only_where_there_are_some(cfg: Config) -> None:
    """Turn ``persistent_workers`` off in each data loader of ``num_workers=0``
    (mmdet's and mmseg's bases set it, which torch's DataLoader refuses without
    workers)."""
    for loader in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        settings = cfg.get(loader)
        if isinstance(settings, dict) and settings.get('num_workers') == 0:
            settings['persistent_workers'] = False
