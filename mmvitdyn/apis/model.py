"""A model from a config, built the way mmengine's Runner builds it (docs/design_notes.md)."""
import copy
from typing import Optional, Union

from mmengine.config import Config
from mmengine.registry import MODELS, init_default_scope
from mmengine.runner import load_checkpoint
from torch import nn

from ..engine.config_loading import load_config


def init_model(config: Union[str, Config],
               checkpoint: Optional[str] = None,
               device: str = 'cpu',
               cfg_options: Optional[dict] = None) -> nn.Module:
    """``config``'s model (a file or a Config; ``cfg_options`` merged) built as
    ``Runner.__init__`` builds it, ``checkpoint`` loaded as its ``load_from`` is,
    on ``device`` in eval mode; ``model.cfg`` is the config used and
    ``model.dataset_meta`` the checkpoint's ``meta.dataset_meta`` if it has one."""
    cfg = load_config(config, cfg_options) if isinstance(config, str) else copy.deepcopy(config)
    if isinstance(config, Config) and cfg_options:
        cfg.merge_from_dict(cfg_options)
    init_default_scope(cfg.get('default_scope', 'mmengine'))
    model_cfg = copy.deepcopy(cfg.model)
    if cfg.get('data_preprocessor') is not None:
        model_cfg.setdefault('data_preprocessor', cfg.data_preprocessor)
    model = MODELS.build(model_cfg)
    if checkpoint is not None:
        loaded = load_checkpoint(
            model, checkpoint, map_location='cpu', revise_keys=[(r'^module\.', '')])
        dataset_meta = loaded.get('meta', {}).get('dataset_meta')
        if dataset_meta is not None:
            model.dataset_meta = dataset_meta
    model.cfg = cfg
    return model.to(device).eval()
