"""A model from a config, built the way mmengine's Runner builds it.

Every tool that needs a model from a config (FLOP counting, dispatch maps,
learngene building, materialising, the image demo) goes through
:func:`init_model`, so none of them can see inputs the trained model never
saw: the Runner merges a config's top-level ``data_preprocessor`` (the
normalisation of mmpretrain-style configs) into the model, and so does this.
"""
import copy
from typing import Optional, Union

from mmengine.config import Config
from mmengine.registry import MODELS, init_default_scope
from mmengine.runner import load_checkpoint
from torch import nn

from ..engine.runner_setup import load_config


def init_model(config: Union[str, Config],
               checkpoint: Optional[str] = None,
               device: str = 'cpu',
               cfg_options: Optional[dict] = None) -> nn.Module:
    """Build ``config``'s model as the Runner does, load weights, switch to eval.

    As in ``Runner.__init__``: the config's ``custom_imports`` are imported
    (by ``Config.fromfile``), its ``default_scope`` becomes the default
    registry scope, and a top-level ``data_preprocessor`` goes into the model
    unless the model sets its own. The checkpoint is loaded as the Runner's
    ``load_from`` is (``mmengine.runner.load_checkpoint``, non-strict, a
    ``module.`` prefix stripped); its ``meta.dataset_meta`` (class names and
    palette) becomes ``model.dataset_meta``, which OpenMMLab inferencers and
    visualisers read.

    Args:
        config (str | Config): A config file or a loaded config.
        checkpoint (str, optional): Weights to load. Defaults to None (the
            model's own initialisation).
        device (str): Where to put the model. Defaults to 'cpu'.
        cfg_options (dict, optional): Overrides merged into the config
            (``--cfg-options``). Defaults to None.

    Returns:
        nn.Module: The model in eval mode, with ``model.cfg`` the config used.
    """
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
