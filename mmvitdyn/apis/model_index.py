"""mmvitdyn's model index (``model-index.yml``), registered in mmpretrain's ``ModelHub``
(docs/design_notes.md, "Inference and the model index")."""
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
    """``mmvitdyn/.mim/model-index.yml`` of a wheel, else the checkout's ``model-index.yml``;
    ``FileNotFoundError`` when neither exists."""
    candidates = (PACKAGE / '.mim' / 'model-index.yml', PACKAGE.parent / 'model-index.yml')
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError('mmvitdyn\'s model index is missing: neither '
                            f'{" nor ".join(map(str, candidates))} exists')


def register_models(index: Optional[Union[str, Path]] = None) -> List[str]:
    """Add the image-classification models of ``index`` (default :func:`model_index_path`)
    to mmpretrain's ``ModelHub`` under their lower-case names and their configs' earlier
    names; names already there are kept. Returns the names added."""
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
