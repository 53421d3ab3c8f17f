"""mmvitdyn backbone keys -> an mmpretrain classifier checkpoint."""
import re
from typing import Mapping

import torch

from .formats import StateDict
from .vit_names import PREDICTORS_PREFIX, VIT_PARAM_GROUPS

# The backbone's keys: the stem, the blocks, the final norm and DynamicViT's predictors.
BACKBONE_KEY = re.compile('|'.join(
    [*VIT_PARAM_GROUPS.values(), r'^norm\.', '^' + re.escape(PREDICTORS_PREFIX)]))


def to_classifier(state_dict: Mapping[str, torch.Tensor]) -> StateDict:
    """Backbone tensors under ``backbone.``, ``head.*`` as ``head.fc.*``
    (``LinearClsHead``); other tensors (``pre_logits``, ``head_dist``) dropped."""
    out = {f'backbone.{k}': v for k, v in state_dict.items() if BACKBONE_KEY.match(k)}
    for name in ('weight', 'bias'):
        if f'head.{name}' in state_dict:
            out[f'head.fc.{name}'] = state_dict[f'head.{name}']
    return out
