"""The ViT descendants of Cluster-Learngene: ``LearngeneViT`` and ``DyTLearngeneViT``."""
import re
from functools import partial
from typing import Dict, List, Optional, Sequence, Union

import torch
from mmengine.logging import MMLogger
from mmengine.registry import MODELS
from torch import nn

from ...checkpoint import loads_checkpoint
from ...models.backbones import DyTViT, ViT
from ...models.layers import (SHARED_HEAD_PARAMS, FFNExpansion, attention_with_shared_heads,
                              expanded_mlp, heads_are_shared, hold, resize_pos_embed, unshare_heads)
from ..artefacts.block import BlockLearngene
from ..artefacts.tleg import TLEGLearngene
from ..artefacts.vit import Learngene, vit_arguments
from ..file_format import require
from ..inheritance import (DescendantPlan, check_built_from, copy_into, copy_state, copy_tensors,
                           heads_per_layer, inherit_attention, inherit_ffn, plan_descendant,
                           plan_whole_layers)
from .inheritance_record import Holders, InheritanceRecord, expanded_ffn_holders

# A tied-heads tensor as torch.nn.utils.parametrize stored it (mmvitdyn before 0.1.0).
OLD_TIED_HEAD = re.compile(r'attn\.(qkv|proj)\.parametrizations\.(weight|bias)\.original$')
DESCENDANT_ARCH_KEYS = {
    'embed_dims', 'num_layers', 'num_heads', 'omega', 'head_schedule', 'feedforward_channels'
}
# init_mode -> the learngene file it reads.
INIT_MODES = {
    'cluster': Learngene,
    'heuristic': BlockLearngene,
    'auto': BlockLearngene,
    'tleg': TLEGLearngene,
}
AnyLearngene = Union[Learngene, BlockLearngene, TLEGLearngene]


@MODELS.register_module()
class LearngeneViT(InheritanceRecord, ViT):
    """A descendant ViT of Cluster-Learngene, built from a learngene file.

    The token, head and FFN widths, the patch size and the family (``norm_cfg``, ``act_cfg``,
    ``pre_norm``, ``layer_scale_init_value``, ``num_reg_tokens``, ``dist_token``,
    ``class_token``) are the ancestry's, read from the learngene; depth and heads per layer are
    the descendant's. :meth:`init_weights` inherits the learngene unless ``init_cfg`` loads a
    checkpoint. The structure is saved as the ``learngene_layout`` buffer: a checkpoint of
    another structure is refused.

    Args:
        learngene (str): Path of the learngene file.
        arch (dict): ``num_layers`` (default: the ancestry's) and one of ``num_heads`` (int or one
            per layer), ``omega`` (H_a / H_d, one or per layer), ``head_schedule`` (see
            :func:`~mmvitdyn.learngene.inheritance.heads_per_layer`); default: the ancestry's
            heads. ``embed_dims`` and ``feedforward_channels`` must equal the ancestry's.
        ffn_sharing (str): 'tied' (one W and the learnable map g, W_t = g_t(W)) or 'independent'
            (every layer's FFN starts as W and trains on its own). Defaults to 'tied'.
        tie_heads (bool): Heads given the same centroid stay one parameter. Defaults to False.
        init_mode (str): 'cluster' (a Cluster-Learngene file), or whole layers of the
            learngene's heads, nothing shared: 'heuristic' / 'auto' (a block learngene), 'tleg'
            (theta_A, theta_B). Defaults to 'cluster'.
        patch_size (int, optional): Must be the ancestry's; defaults to it.
        qkv_bias (bool, optional): Defaults to the ancestry's.
        layer_cfgs (dict | Sequence[dict]): See :class:`ViT`; the heads and FFNs are the plan's.
        **kwargs: Other arguments of :class:`ViT`; family arguments must equal the learngene's.

    Raises:
        ValueError: An argument differs from the learngene's (named).
    """

    HOLDER_PARTS = ('.mlp.expansion.', '.attn.shared_heads.')

    def __init__(self,
                 learngene: str,
                 arch: dict = dict(),
                 ffn_sharing: str = 'tied',
                 tie_heads: bool = False,
                 init_mode: str = 'cluster',
                 patch_size: Optional[int] = None,
                 qkv_bias: Optional[bool] = None,
                 layer_cfgs: Union[dict, Sequence[dict]] = dict(),
                 **kwargs):
        meta = self._load_learngene(learngene, init_mode, mmap=True)
        ancestry = meta.ancestry
        arch = self._descendant_arch(arch, ancestry, learngene)
        if patch_size is not None and patch_size != ancestry['patch_size']:
            raise ValueError(f"patch_size={patch_size} differs from the learngene's patch size "
                             f"{ancestry['patch_size']} ({learngene})")
        if init_mode == 'cluster':
            plan = plan_descendant(meta, arch['heads'], ffn_sharing, tie_heads)
        else:
            wrong = {h for h in arch['heads'] if h != ancestry['num_heads']}
            if wrong:
                raise ValueError(
                    f"init_mode={init_mode!r} inherits whole layers of {ancestry['num_heads']} "
                    f"heads; arch gives layers of {sorted(wrong)} heads (keep the learngene's)")
            if qkv_bias is not None and qkv_bias != ancestry['qkv_bias']:
                raise ValueError(f'qkv_bias={qkv_bias} differs from the learngene\'s layers '
                                 f"(qkv_bias={ancestry['qkv_bias']}) in init_mode={init_mode!r}")
            plan = plan_whole_layers(meta.sources(arch['num_layers']), arch['heads'])
        family = vit_arguments(ancestry)
        for key in sorted(set(family) & set(kwargs)):
            given = kwargs.pop(key)
            if given != family[key]:
                raise ValueError(f"{key}={given!r} differs from the learngene's ancestry "
                                 f'({key}={family[key]!r}, {learngene}); a descendant computes '
                                 "as its ancestry's family")
        family['qkv_bias'] = family['qkv_bias'] if qkv_bias is None else qkv_bias
        super().__init__(
            arch=dict(
                embed_dims=arch['embed_dims'],
                num_layers=arch['num_layers'],
                num_heads=max(arch['heads']),
                feedforward_channels=arch['feedforward_channels']),
            patch_size=ancestry['patch_size'],
            layer_cfgs=self.merge_layer_cfgs(layer_cfgs, self._layer_entries(plan, ancestry),
                                             'LearngeneViT (the plan)'),
            **family,
            **kwargs)
        self.learngene_path = learngene
        self.init_mode = init_mode
        self.head_dim = ancestry['head_dim']
        self.plan: DescendantPlan = plan
        # Deployed tensor name -> size, for what the learngene initialised.
        self.inherited: Dict[str, int] = {}
        self.register_buffer('learngene_layout', self.plan.layout())
        self._register_load_state_dict_pre_hook(self._on_load_state_dict)

    @staticmethod
    def _layer_entries(plan: DescendantPlan, ancestry: dict) -> List[dict]:
        """Per block: its heads, an attention with tied heads and, in a tied FFN run, the run's
        :class:`FFNExpansion` (one per run)."""
        entries = []
        expansions: Dict[int, FFNExpansion] = {}
        for index, heads in enumerate(plan.heads):
            entry = dict(num_heads=heads, head_dim=ancestry['head_dim'])
            if plan.shares_heads(index):
                entry['attn_layer'] = partial(attention_with_shared_heads, plan.assignments[index])
            run_index, run, position = plan.run_of(index)
            if plan.is_expanded(run):
                if run_index not in expansions:
                    expansions[run_index] = FFNExpansion(ancestry['embed_dims'],
                                                         ancestry['feedforward_channels'],
                                                         len(run.layers))
                entry['mlp_layer'] = partial(expanded_mlp, expansions[run_index], position)
            entries.append(entry)
        return entries

    @property
    def ffn_sharing(self) -> str:
        return self.plan.ffn_sharing

    @property
    def tie_heads(self) -> bool:
        return self.plan.tie_heads

    @staticmethod
    def _load_learngene(path: str, init_mode: str, mmap: bool = False) -> AnyLearngene:
        """The learngene of ``init_mode`` read from ``path``."""
        if init_mode not in INIT_MODES:
            raise ValueError(f'init_mode={init_mode!r} is not one of {list(INIT_MODES)}')
        learngene = INIT_MODES[init_mode].load(path, mmap=mmap)
        if init_mode != 'cluster' and learngene.method != init_mode:
            raise ValueError(f"init_mode={init_mode!r} needs a {init_mode} learngene; {path} is "
                             f"the {learngene.method} learngene")
        return learngene

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
        return dict(
            embed_dims=ancestry['embed_dims'],
            num_layers=num_layers,
            heads=heads,
            feedforward_channels=ancestry['feedforward_channels'])

    def init_weights(self):
        """Random init (or the ``init_cfg`` checkpoint), then inherit unless a checkpoint was
        loaded; logs T-/I-Params."""
        super().init_weights()
        if not loads_checkpoint(self.init_cfg):
            self.inherit_from(self._load_learngene(self.learngene_path, self.init_mode))
        counts = self.parameter_counts()
        MMLogger.get_current_instance().info(
            f'{type(self).__name__} ({self.init_mode}) from {self.learngene_path}: heads per layer '
            f'{self.plan.heads}, learngene layers {self.plan.sources}, FFN sharing '
            f'{self.ffn_sharing}, tied heads {self.tie_heads}; T-Params '
            f"{counts['t_params'] / 1e6:.3f}M, I-Params {counts['i_params'] / 1e6:.3f}M, "
            f"trainable {counts['trainable'] / 1e6:.3f}M")

    @torch.no_grad()
    def inherit_from(self, learngene: AnyLearngene) -> None:
        """Copy the learngene into this descendant; record in :attr:`inherited` every deployed
        tensor it set.

        Raises:
            ValueError: The learngene lacks or mis-shapes something (named), or has other centroid
                counts or FFN groups than the one it was built from; nothing is counted then.
        """
        learngene.validate()
        if self.init_mode == 'cluster':
            self.inherited = self._inherit_clusters(learngene)
        else:
            self.inherited = self._inherit_layers(learngene)

    def _inherit_layers(self, learngene: Union[BlockLearngene, TLEGLearngene]) -> Dict[str, int]:
        """Whole layers from the learngene's layer states, and the stem and final norm."""
        sources = [-1 if s is None else s for s in learngene.sources(len(self.blocks))]
        check_built_from(self, self.learngene_path, {
            'learngene': INIT_MODES[self.init_mode].__name__,
            'layers': self.plan.sources
        }, {
            'learngene': type(learngene).__name__,
            'layers': sources
        })
        inherited = self._inherit_stem(learngene) if learngene.embeddings else {}
        for index, (block,
                    state) in enumerate(zip(self.blocks, learngene.layer_states(len(self.blocks)))):
            if state is not None:
                copy_tensors(block, state, f'blocks.{index}', inherited)
        return inherited

    def _inherit_clusters(self, learngene: Learngene) -> Dict[str, int]:
        """Priority weight-sharing from a Cluster-Learngene learngene."""
        plan = plan_descendant(learngene, self.plan.heads, self.ffn_sharing, self.tie_heads)
        check_built_from(self, self.learngene_path, {
            'centroids per layer': self.plan.assignments,
            'FFN runs': self.plan.runs
        }, {
            'centroids per layer': plan.assignments,
            'FFN runs': plan.runs
        })
        inherited = self._inherit_stem(learngene)
        for index, block in enumerate(self.blocks):
            source = self.plan.sources[index]
            layer = learngene.layers[source]
            prefix = f'blocks.{index}'
            written = inherit_attention(block.attn, layer, self.plan.assignments[index],
                                        f'{prefix}.attn')
            inherited.update({f'{prefix}.attn.{name}': size for name, size in written.items()})
            for norm in ('norm1', 'norm2'):
                copy_state(
                    getattr(block, norm), getattr(layer, norm), f'{prefix}.{norm}',
                    f'layers[{source}].{norm}', inherited)
            copy_tensors(block, learngene.layer_scales[source], prefix, inherited)
            _, run, _ = self.plan.run_of(index)
            inherit_ffn(block.mlp, learngene.ffn_groups[run.group].weights,
                        self.plan.is_expanded(run), f'{prefix}.mlp',
                        f'ffn_groups[{run.group}].weights', inherited)
        return inherited

    def _inherit_stem(self, learngene: AnyLearngene) -> Dict[str, int]:
        """The stem (position embedding resized to this grid) and the final norm (into
        ``fc_norm`` without a final norm); returns the inherited names and sizes."""
        inherited: Dict[str, int] = {}
        for key, _ in self.named_parameters():
            if self.is_stem_param(key):
                value = require(learngene.embeddings, key, 'embeddings')
                if key == 'pos_embed':
                    value = resize_pos_embed(value, tuple(learngene.ancestry['patch_resolution']),
                                             self.patch_resolution, self.num_pos_prefix_tokens,
                                             self.interpolate_mode)
                owner, _, leaf = key.rpartition('.')
                copy_into(self.get_submodule(owner), leaf, value, key)
                inherited[key] = value.numel()
        target = 'norm' if self.final_norm else 'fc_norm'
        if learngene.final_norm and not isinstance(getattr(self, target), nn.Identity):
            copy_state(getattr(self, target), learngene.final_norm, target, 'final_norm', inherited)
        return inherited

    def block_tensors(self, index: int) -> Dict[str, torch.Tensor]:
        """Block ``index``'s tied tensors: tied heads and, in a tied FFN run, W_t = g_t(W)."""
        return {**super().block_tensors(index), **self._expanded_ffn(index)}

    def _expanded_ffn(self, index: int) -> Dict[str, torch.Tensor]:
        _, run, position = self.plan.run_of(index)
        if not self.plan.is_expanded(run):
            return {}
        expansion = self.blocks[run.layers[0]].mlp.expansion
        return {f'mlp.{key}': value for key, value in expansion.weights(position).items()}

    def materialize(self) -> 'LearngeneViT':
        """Make every tensor a plain parameter holding its current value (outputs unchanged);
        the result loads into a descendant with ``ffn_sharing='independent', tie_heads=False``."""
        ffns = [self._expanded_ffn(index) for index in range(len(self.blocks))]
        for block, ffn in zip(self.blocks, ffns):
            hold(block, ffn)
        for block in self.blocks:
            if 'expansion' in block.mlp._modules:
                del block.mlp.expansion
            if heads_are_shared(block.attn):
                unshare_heads(block.attn)
        self.plan.ffn_sharing, self.plan.tie_heads = 'independent', False
        with torch.no_grad():
            self.learngene_layout.copy_(self.plan.layout())
        return self

    def is_new_param(self, name: str) -> bool:
        """The maps g of tied FFN runs too."""
        return '.mlp.expansion.map_' in name or super().is_new_param(name)

    def held_tensors(self) -> Holders:
        """The tensors of tied heads (``attn.shared_heads``) and tied FFN runs (the expansion)."""
        held: Holders = {}
        for index, block in enumerate(self.blocks):
            prefix = f'blocks.{index}'
            if heads_are_shared(block.attn):
                attn = block.attn
                sizes = {
                    'qkv.weight': attn.qkv.out_features * attn.qkv.in_features,
                    'qkv.bias': attn.qkv.out_features,
                    'proj.weight': attn.proj.out_features * attn.proj.in_features
                }
                for key, attr in SHARED_HEAD_PARAMS.items():
                    if getattr(attn.shared_heads, attr) is not None:
                        held[f'{prefix}.attn.{key}'] = (f'{prefix}.attn.shared_heads.{attr}',
                                                        sizes[key])
        for run in self.plan.runs:
            if self.plan.is_expanded(run):
                first = run.layers[0]
                held.update(
                    expanded_ffn_holders(self.blocks[first].mlp.expansion,
                                         f'blocks.{first}.mlp.expansion',
                                         [f'blocks.{index}.mlp' for index in run.layers]))
        return held

    def _on_load_state_dict(self, state_dict, prefix, *args, **kwargs):
        """Load-state-dict pre-hook: refuse another structure, rename tied heads saved before
        0.1.0; loaded tensors no longer count as inherited."""
        for key in [k for k in state_dict if k.startswith(prefix)]:
            renamed = OLD_TIED_HEAD.sub(r'attn.shared_heads.\1_\2', key)
            if renamed != key:
                state_dict[renamed] = state_dict.pop(key)
        saved = state_dict.get(prefix + 'learngene_layout')
        if saved is not None and not torch.equal(saved.cpu(), self.learngene_layout.cpu()):
            raise ValueError(
                'the checkpoint was trained as a different descendant than this '
                f'{type(self).__name__} builds from {self.learngene_path}. Layout rows are '
                '(learngene layer, heads, tied FFN run or -1, position, distinct head parameters):'
                f'\n  checkpoint: {saved.tolist()}\n  model:      '
                f'{self.learngene_layout.tolist()}\nUse the learngene (or arch / ffn_sharing / '
                'tie_heads) the checkpoint was trained with.')
        self.forget_loaded(state_dict, prefix)


@MODELS.register_module()
class DyTLearngeneViT(LearngeneViT, DyTViT):
    """A :class:`LearngeneViT` whose blocks are DyT blocks; arguments of both classes."""

    def inherit_from(self, learngene: AnyLearngene) -> None:
        """See :meth:`LearngeneViT.inherit_from`; the inherited parameters count as filled."""
        super().inherit_from(learngene)
        holders = self.deployed_parameters()
        self.filled_frozen.update(holders[name][0] for name in self.inherited)
