"""Cluster-Learngene descendant: a ViT initialised from a learngene."""
import re
from typing import Dict, Optional

import torch
from mmengine.logging import MMLogger
from mmengine.registry import MODELS
from torch import nn

from ...learngene import (DescendantPlan, ExpandedMlp, FFNExpansion, Learngene, copy_into,
                          heads_per_layer, inherit_attention, plan_descendant)
from ..layers import resize_pos_embed
from .vit import ViT

DESCENDANT_ARCH_KEYS = {
    'embed_dims', 'num_layers', 'num_heads', 'omega', 'head_schedule', 'feedforward_channels'
}
# Parameters a descendant takes from the learngene (the rest, the FFN maps g
# and anything a subclass adds, start as initialised).
INHERITED = re.compile(r'(patch_embed\.proj|norm|blocks\.\d+\.(norm1|norm2|attn\.qkv|attn\.proj|'
                       r'mlp\.fc1|mlp\.fc2))\.(weight|bias)|cls_token|pos_embed|'
                       r'blocks\.\d+\.mlp\.expansion\.fc[12]_(weight|bias)')


@MODELS.register_module()
class LearngeneViT(ViT):
    """A descendant ViT of Cluster-Learngene, built from a learngene file.

    The token width, head width, FFN width and patch size are the
    ancestry's (read from the learngene); the depth and the heads per layer
    are the descendant's. In :meth:`init_weights` it inherits the learngene
    by priority weight-sharing (see :mod:`mmvitdyn.learngene.inheritance`),
    unless ``init_cfg`` loads a checkpoint (a trained descendant) or
    ``inherit=False`` (the same descendant trained from scratch). Its blocks
    are the ViT's (or a subclass's) blocks with heads and FFNs adjusted in
    :meth:`build_block`, so e.g. ``class X(LearngeneViT, DyTViT)`` composes.

    The structure is rebuilt from the learngene file's metadata (tensors are
    only read when inheriting) and saved as the ``learngene_layout`` buffer:
    loading a checkpoint built from a learngene with other FFN groups, heads
    or depth raises instead of silently dropping weights.

    Args:
        learngene (str): Path of the learngene file.
        arch (dict): The descendant: ``num_layers`` (default: the
            ancestry's) and one of ``num_heads`` (int or one per layer),
            ``omega`` (H_a / H_d) or ``num_heads=(first, last)`` with
            ``head_schedule='incrementing'|'decrementing'``; default: the
            ancestry's heads. ``embed_dims`` and ``feedforward_channels``
            may be given but must equal the ancestry's.
        ffn_expansion (bool): Layers sharing an FFN group use one FFN W and
            the learnable map g (True, the method), or independent FFNs
            initialised with W (False; also the layout after
            :meth:`materialize_ffns`). Defaults to True.
        inherit (bool): Initialise from the learngene. False builds the same
            descendant with random weights (the From-Scratch baseline).
            Defaults to True.
        patch_size (int, optional): Must be the ancestry's; defaults to it.
        qkv_bias (bool, optional): Defaults to the ancestry's.
        **kwargs: Other arguments of :class:`ViT` (``img_size``,
            ``out_type``, ``out_indices``, ``drop_path_rate``, ``init_cfg`` ...).
    """

    def __init__(self,
                 learngene: str,
                 arch: dict = dict(),
                 ffn_expansion: bool = True,
                 inherit: bool = True,
                 patch_size: Optional[int] = None,
                 qkv_bias: Optional[bool] = None,
                 **kwargs):
        meta = Learngene.load(learngene, mmap=True)
        ancestry = meta.ancestry
        arch = self._descendant_arch(arch, ancestry, learngene)
        if patch_size is not None and patch_size != ancestry['patch_size']:
            raise ValueError(f"patch_size={patch_size} differs from the learngene's patch size "
                             f"{ancestry['patch_size']} ({learngene})")
        self.learngene_path = learngene
        self.inherit = inherit
        self.ffn_expansion = ffn_expansion
        self.head_dim = ancestry['head_dim']
        self.plan: DescendantPlan = plan_descendant(meta, arch['heads'], ffn_expansion)
        self._learngene_parts = dict(qkv_bias=ancestry['qkv_bias'],
                                     final_norm=bool(meta.final_norm))
        self._building: Dict[int, FFNExpansion] = {}
        super().__init__(arch=dict(embed_dims=arch['embed_dims'],
                                   num_layers=arch['num_layers'],
                                   num_heads=max(arch['heads']),
                                   feedforward_channels=arch['feedforward_channels']),
                         patch_size=ancestry['patch_size'],
                         qkv_bias=ancestry['qkv_bias'] if qkv_bias is None else qkv_bias,
                         **kwargs)
        del self._building
        self.register_buffer('learngene_layout', self.plan.layout())
        self._register_load_state_dict_pre_hook(self._check_layout_on_load)
        counts = self.parameter_counts()
        MMLogger.get_current_instance().info(
            f"LearngeneViT from {learngene}: heads per layer {self.plan.heads}, learngene layers "
            f"{self.plan.sources}, T-Params {counts['t_params'] / 1e6:.3f}M, "
            f"I-Params {counts['i_params'] / 1e6:.3f}M")

    @staticmethod
    def _descendant_arch(arch: dict, ancestry: dict, source: str) -> dict:
        if not isinstance(arch, dict):
            raise ValueError(f'arch must be a dict with keys from {sorted(DESCENDANT_ARCH_KEYS)}, '
                             f'got {arch!r}')
        unknown = set(arch) - DESCENDANT_ARCH_KEYS
        if unknown:
            raise ValueError(f'arch has unknown keys {sorted(unknown)}; allowed: '
                             f'{sorted(DESCENDANT_ARCH_KEYS)}')
        for key, what in (('embed_dims', 'embed dim'), ('feedforward_channels', 'FFN width')):
            if key in arch and arch[key] != ancestry[key]:
                raise ValueError(f"arch.{key}={arch[key]} differs from the learngene's {what} "
                                 f'{ancestry[key]} ({source}); descendants keep the ancestry\'s '
                                 'widths and differ in heads and depth')
        num_layers = arch.get('num_layers', ancestry['num_layers'])
        heads = heads_per_layer(num_layers, ancestry['num_heads'], arch.get('num_heads'),
                                arch.get('omega'), arch.get('head_schedule'))
        return dict(embed_dims=ancestry['embed_dims'],
                    num_layers=num_layers,
                    heads=heads,
                    feedforward_channels=ancestry['feedforward_channels'])

    def build_block(self, index: int, **kwargs) -> nn.Module:
        """The parent's block with this layer's heads (of the ancestry's
        width) and, inside an expanded FFN run, the run's shared FFN."""
        kwargs.update(num_heads=self.plan.heads[index], head_dim=self.head_dim)
        block = super().build_block(index, **kwargs)
        run_index, run, position = self.plan.run_of(index)
        if self.plan.is_expanded(run):
            if position == 0:
                self._building[run_index] = FFNExpansion(kwargs['dim'], kwargs['mlp_hidden_dim'],
                                                         len(run.layers))
            block.mlp = ExpandedMlp(self._building[run_index],
                                    position,
                                    kwargs.get('drop', 0.),
                                    owner=position == 0)
        return block

    def _loads_checkpoint(self) -> bool:
        return isinstance(self.init_cfg, dict) and self.init_cfg.get('type') == 'Pretrained'

    def init_weights(self):
        """Random init (or the ``init_cfg`` checkpoint), then, unless a
        checkpoint was loaded or ``inherit=False``, inherit the learngene."""
        super().init_weights()
        if self.inherit and not self._loads_checkpoint():
            self.inherit_from(Learngene.load(self.learngene_path))

    @torch.no_grad()
    def inherit_from(self, learngene: Learngene) -> None:
        """Copy the learngene into this descendant (priority weight-sharing)."""
        for key, value in learngene.embeddings.items():
            if key == 'pos_embed':
                value = resize_pos_embed(value, tuple(learngene.ancestry['patch_resolution']),
                                         self.patch_resolution, self.num_extra_tokens,
                                         self.interpolate_mode)
            copy_into(self.get_parameter(key), value, key)
        if learngene.final_norm and self.final_norm:
            for key, value in learngene.final_norm.items():
                copy_into(self.norm.get_parameter(key), value, f'norm.{key}')
        for index, block in enumerate(self.blocks):
            layer = learngene.layers[self.plan.sources[index]]
            inherit_attention(block.attn, layer, self.plan.assignments[index],
                              f'blocks.{index}.attn')
            for norm in ('norm1', 'norm2'):
                for key, value in getattr(layer, norm).items():
                    copy_into(
                        getattr(block, norm).get_parameter(key), value,
                        f'blocks.{index}.{norm}.{key}')
            _, run, position = self.plan.run_of(index)
            weights = learngene.ffn_groups[run.group].weights
            if isinstance(block.mlp, ExpandedMlp):
                if position == 0:
                    block.mlp.source.load_ffn(weights)
                    block.mlp.source.reset_map()
            else:
                for key, value in weights.items():
                    copy_into(block.mlp.get_parameter(key), value, f'blocks.{index}.mlp.{key}')

    @torch.no_grad()
    def materialize_ffns(self) -> 'LearngeneViT':
        """Replace every expanded FFN by a plain FFN holding its current W_t
        (for export and inference). The result loads into a descendant built
        with ``ffn_expansion=False``."""
        blocks = [b for b in self.blocks if isinstance(b.mlp, ExpandedMlp)]
        plain = [b.mlp.materialize() for b in blocks]
        for block, mlp in zip(blocks, plain):
            block.mlp = mlp
        self.plan.expand = self.ffn_expansion = False
        self.learngene_layout.copy_(self.plan.layout())
        return self

    def parameter_counts(self) -> Dict[str, int]:
        """``t_params``: all parameters of the backbone; ``i_params``: those
        initialised from the learngene (0 with ``inherit=False``)."""
        total = inherited = 0
        for name, param in self.named_parameters():
            total += param.numel()
            if self.inherit and INHERITED.fullmatch(name) and self._learngene_holds(name):
                inherited += param.numel()
        return dict(t_params=total, i_params=inherited)

    def _learngene_holds(self, name: str) -> bool:
        if name.endswith('attn.qkv.bias'):
            return self._learngene_parts['qkv_bias']
        if name.startswith('norm.'):
            return self._learngene_parts['final_norm']
        return True

    def _check_layout_on_load(self, state_dict, prefix, *args, **kwargs):
        """Load-state-dict pre-hook: refuse a checkpoint of another structure."""
        saved = state_dict.get(prefix + 'learngene_layout')
        if saved is None or torch.equal(saved.cpu(), self.learngene_layout.cpu()):
            return
        raise ValueError(
            'the checkpoint was trained as a different descendant than this LearngeneViT builds '
            f'from {self.learngene_path}. Layout rows are (learngene layer, heads, expanded FFN run '
            f'or -1, position):\n  checkpoint: {saved.tolist()}\n  model:      '
            f'{self.learngene_layout.tolist()}\nUse the learngene (or arch / ffn_expansion) the '
            'checkpoint was trained with.')
