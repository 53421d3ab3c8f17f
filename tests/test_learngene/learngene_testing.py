"""Tiny ancestries and their learngenes, shared by the learngene tests
(``from test_learngene.learngene_testing import ...``)."""
import torch

from mmvitdyn.learngene import build_learngene
from mmvitdyn.models import ViT

TINY = dict(embed_dims=32, num_layers=3, num_heads=4, feedforward_channels=64)


def make_ancestry(arch=TINY, img_size=32, patch_size=8, seed=0, **kwargs) -> ViT:
    """A random ViT whose heads attend differently (q/k weights far from 0)."""
    torch.manual_seed(seed)
    model = ViT(arch=arch, img_size=img_size, patch_size=patch_size, out_type='raw', **kwargs)
    model.init_weights()
    with torch.no_grad():
        for block in model.blocks:
            block.attn.qkv.weight.normal_(0, 0.5)
            if block.attn.qkv.bias is not None:
                block.attn.qkv.bias.normal_(0, 0.1)
            block.mlp.fc1.bias.normal_(0, 0.1)
            block.norm1.weight.uniform_(0.5, 1.5)
        model.norm.bias.normal_(0, 0.1)
    return model.eval()


def images(n=4, size=32, seed=1) -> torch.Tensor:
    return torch.randn(n, 3, size, size, generator=torch.Generator().manual_seed(seed))


def write_learngene(ancestry, path, **kwargs):
    """Build a learngene of ``ancestry`` from 4 random images into ``path``."""
    learngene, _ = build_learngene(ancestry, [images()], out=str(path), **kwargs)
    return learngene
