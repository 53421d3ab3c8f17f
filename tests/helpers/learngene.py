"""Tiny ancestries and their learngenes, for the learngene tests."""
import copy
from typing import Sequence

import torch

from mmvitdyn.learngene import build_learngene, condense
from mmvitdyn.models import ViT
from .models import TINY_ARCH, images, tiny


def make_ancestry(arch=TINY_ARCH, seed=0, **kwargs) -> ViT:
    """A random tiny ViT (``kwargs`` override its arguments) whose heads attend
    differently (q/k weights far from 0)."""
    model = tiny(ViT, seed=seed, arch=arch, out_type='raw', **kwargs)
    with torch.no_grad():
        for block in model.blocks:
            block.attn.qkv.weight.normal_(0, 0.5)
            if block.attn.qkv.bias is not None:
                block.attn.qkv.bias.normal_(0, 0.1)
            block.mlp.fc1.bias.normal_(0, 0.1)
            block.norm1.weight.uniform_(0.5, 1.5)
        if model.final_norm:
            model.norm.bias.normal_(0, 0.1)
    return model


def write_learngene(ancestry, path, **kwargs):
    """Build a learngene of ``ancestry`` from 4 random images into ``path``."""
    return build_learngene(ancestry, [images()], out=str(path), **kwargs)


def mad_with_counts(counts: Sequence[int], num_heads: int) -> torch.Tensor:
    """A (layers, heads) MAD table that DBSCAN at eps = 10 splits into
    ``counts[l]`` clusters in layer l: head h sits in cluster ``h % c``,
    clusters 30 px apart, members 1 px apart."""
    return torch.tensor([[30. * (h % c) + h // c for h in range(num_heads)] for c in counts])


def learngene_with_counts(ancestry, counts: Sequence[int], path=None):
    """A learngene of ``ancestry`` whose layers have ``counts`` centroids (a
    representative clustering, without running images through the ancestry)."""
    mad = mad_with_counts(counts, ancestry.blocks[0].attn.num_heads)
    learngene = condense(ancestry, mad, num_images=0, eps=10.)
    assert learngene.num_centroids == list(counts)
    if path is not None:
        learngene.save(str(path))
    return learngene


def broken(data: dict, where: tuple, value) -> dict:
    """A copy of a learngene file's ``data`` with ``where`` (a path of keys and
    indices) set to ``value``; ``...`` deletes the entry instead."""
    data = copy.deepcopy(data)
    *path, last = where
    target = data
    for key in path:
        target = target[key]
    if value is ...:
        del target[last]
    else:
        target[last] = value
    return data
