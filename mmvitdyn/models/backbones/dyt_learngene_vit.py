"""DyT on a Cluster-Learngene descendant, by composition of the two backbones."""
from mmengine.registry import MODELS

from .dyt_vit import DyTViT
from .learngene_vit import LearngeneViT


@MODELS.register_module()
class DyTLearngeneViT(LearngeneViT, DyTViT):
    """A descendant initialised from a learngene whose blocks are DyT blocks.

    ``LearngeneViT`` shapes the blocks (heads per layer, expanded FFNs) and
    inherits the weights; ``DyTViT`` adds adapters and token dispatchers and,
    with ``freeze_pretrained=True``, trains only them. Arguments are those of
    both classes.
    """
