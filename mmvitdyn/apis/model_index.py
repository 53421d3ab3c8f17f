"""mmvitdyn's model index, registered in mmpretrain's ``ModelHub``.

``model-index.yml`` imports the metafiles of ``configs/dyt`` and
``configs/cluster_learngene`` (OpenMMLab's schema): ``mim search mmvitdyn``
reads it from ``mmvitdyn/.mim/`` of an installed wheel, where ``setup.py``
copies it with the configs. :func:`register_models` adds its image
classification models to :class:`mmpretrain.apis.ModelHub`, so that
``mmpretrain.list_models('*dyt*')`` and ``mmpretrain.get_model(name)`` find
them; importing :mod:`mmvitdyn.apis` calls it (``import mmvitdyn`` imports no
mmpretrain, so it cannot).
"""
from pathlib import Path
from typing import List, Optional, Union

from mmpretrain.apis import ModelHub
from modelindex.load_model_index import load

from ..utils.config_names import earlier_names

PACKAGE = Path(__file__).resolve().parents[1]
# The models mmpretrain's get_model can build: it builds every model in
# mmpretrain's registry scope, where mmdet's and mmseg's parts are unknown.
HUB_TASK = 'Image Classification'


def model_index_path() -> Path:
    """The model index: ``mmvitdyn/.mim/model-index.yml`` of an installed
    wheel, else the source checkout's ``model-index.yml`` (an editable install).

    Raises:
        FileNotFoundError: If neither exists.
    """
    candidates = (PACKAGE / '.mim' / 'model-index.yml', PACKAGE.parent / 'model-index.yml')
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError('mmvitdyn\'s model index is missing: neither '
                            f'{" nor ".join(map(str, candidates))} exists')


def register_models(index: Optional[Union[str, Path]] = None) -> List[str]:
    """Add the image-classification models of ``index`` to mmpretrain's ``ModelHub``.

    ``ModelHub.register_model_index`` takes a whole index, and ours also lists
    detection and segmentation models, which ``get_model`` cannot build; so
    each classification model is added as that method adds it: under its
    lower-case name, with its config path made absolute (relative paths are
    relative to the index's folder). Names already in the hub are left as
    they are, so a second call adds nothing. A renamed config's earlier
    names (:func:`~mmvitdyn.utils.config_names.earlier_names`) find its model too.

    Args:
        index (str | Path, optional): A model-index file. Defaults to None
            (:func:`model_index_path`).

    Returns:
        list[str]: The names added.
    """
    path = Path(index) if index is not None else model_index_path()
    model_index = load(str(path))
    model_index.build_models_with_collections()
    added = []
    renames = {}  # folder -> current config name -> earlier names
    for model in model_index.models:
        if HUB_TASK not in {result.task for result in model.results or []}:
            continue
        config = path.parent / model.config
        if config.parent not in renames:
            renames[config.parent] = earlier_names(config.parent)
        model.config = str(config)
        for name in [model.name, *renames[config.parent].get(config.name, [])]:
            if not ModelHub.has(name.lower()):
                ModelHub._models_dict[name.lower()] = model
                added.append(name.lower())
    return added
