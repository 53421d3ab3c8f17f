"""The Swin descendant of Cluster-Learngene: ``LearngeneSwin``.

It keeps the ancestry's depths, windows and head width and has
H_a,s / omega_s heads in stage s; head k of a block takes centroid
``k mod c`` (priority weight-sharing, see :mod:`..inheritance`) with its
relative-position-bias column. FFN groups are inherited as independent
copies. At omega = 1 with every head its own cluster the descendant
computes what the ancestry computes.
"""
from typing import Dict, List

import torch
from mmengine.logging import MMLogger
from mmengine.registry import MODELS
from mmpretrain.models import SwinTransformer

from ...models.layers.window_msa import HeadWidthWindowMSA
from ...models.utils import loads_checkpoint
from ..ancestries.swin import SWIN_FFN
from ..artefacts.swin import SwinLearngene, head_dims
from ..inheritance import (check_built_from, copy_into, copy_state, head_assignment,
                           heads_from_omega, inherit_attention)


@MODELS.register_module()
class LearngeneSwin(SwinTransformer):
    """A Swin descendant of Cluster-Learngene, built from a Swin learngene.

    The widths, depths, windows, head width and patch size are the
    ancestry's (read from the learngene); the heads per stage are the
    descendant's. In :meth:`init_weights` it inherits the learngene (see the
    module docstring) unless ``init_cfg`` loads a checkpoint.

    Args:
        learngene (str): Path of the Swin learngene file.
        arch (dict): ``num_heads`` (one per stage) or ``omega`` (H_a / H_d,
            one value or one per stage); default: the ancestry's heads.
        **kwargs: Other arguments of ``SwinTransformer`` (``img_size``,
            ``out_indices``, ``drop_path_rate``, ``init_cfg`` ...).
    """

    def __init__(self, learngene: str, arch: dict = dict(), **kwargs):
        meta = SwinLearngene.load(learngene, mmap=True)
        a = meta.ancestry
        for key in ('patch_size', 'window_size'):
            value = kwargs.pop(key, a[key])
            if value != a[key]:
                raise ValueError(f"{key}={value} differs from the learngene's {a[key]} "
                                 f'({learngene})')
        heads = self._stage_heads(arch, a['num_heads'])
        stage_cfgs = [
            dict(
                block_cfgs=dict(
                    attn_cfgs=dict(
                        window_msa=HeadWidthWindowMSA, head_dim=d, qkv_bias=a['qkv_bias']),
                    ffn_cfgs=dict(feedforward_channels=f)))
            for d, f in zip(head_dims(a), a['feedforward_channels'])
        ]
        kwargs.setdefault('out_indices', tuple(a['out_indices']))
        super().__init__(
            arch=dict(embed_dims=a['embed_dims'], depths=list(a['depths']), num_heads=heads),
            patch_size=a['patch_size'],
            window_size=a['window_size'],
            stage_cfgs=stage_cfgs,
            **kwargs)
        self.learngene_path = learngene
        self.heads = heads
        # Centroid (priority rank) of every head, per stage and block.
        self.assignments = [[head_assignment(c, h) for c in counts]
                            for counts, h in zip(meta.num_centroids, heads)]
        # Parameter name -> size, for what the learngene initialised.
        self.inherited: Dict[str, int] = {}
        self._register_load_state_dict_pre_hook(self._forget_loaded)

    @staticmethod
    def _stage_heads(arch: dict, ancestry_heads: List[int]) -> List[int]:
        if not isinstance(arch, dict) or set(arch) - {'num_heads', 'omega'}:
            raise ValueError(f"arch must be a dict with 'num_heads' or 'omega', got {arch!r}")
        if 'num_heads' in arch and 'omega' in arch:
            raise ValueError(f'give num_heads ({arch["num_heads"]}) or omega ({arch["omega"]}), '
                             'not both')
        stages = len(ancestry_heads)
        if 'num_heads' in arch:
            heads = list(arch['num_heads'])
        else:
            omega = arch.get('omega', 1)
            omegas = [omega] * stages if isinstance(omega, (int, float)) else list(omega)
            if len(omegas) != stages:
                raise ValueError(f'omega={omega!r} must be one value or one per stage ({stages})')
            heads = [heads_from_omega(h, o) for h, o in zip(ancestry_heads, omegas)]
        if len(heads) != stages or not all(isinstance(h, int) and h >= 1 for h in heads):
            raise ValueError(f'num_heads={heads} must be one int >= 1 per stage ({stages})')
        return heads

    def init_weights(self):
        """Default init (or the ``init_cfg`` checkpoint), then, unless a
        checkpoint was loaded, inherit the learngene. Logs T-/I-Params."""
        super().init_weights()
        if not loads_checkpoint(self.init_cfg):
            self.inherit_from(SwinLearngene.load(self.learngene_path))
        counts = self.parameter_counts()
        MMLogger.get_current_instance().info(
            f'{type(self).__name__} from {self.learngene_path}: heads per stage {self.heads}; '
            f"T-Params {counts['t_params'] / 1e6:.3f}M, I-Params {counts['i_params'] / 1e6:.3f}M")

    @torch.no_grad()
    def inherit_from(self, learngene: SwinLearngene) -> None:
        """Copy the learngene into this descendant and record in
        :attr:`inherited` every tensor it set.

        Raises:
            ValueError: The learngene lacks or mis-shapes something (named),
                or has other centroid counts than the one it was built from.
        """
        learngene.validate()
        assignments = [[head_assignment(c, h) for c in counts]
                       for counts, h in zip(learngene.num_centroids, self.heads)]
        check_built_from(self, self.learngene_path, {'heads from centroids': self.assignments},
                         {'heads from centroids': assignments})
        inherited: Dict[str, int] = {}
        copy_state(self.patch_embed, learngene.embeddings, 'patch_embed', 'embeddings', inherited)
        for index in self.out_indices:
            if f'norm{index}' in learngene.final_norms:
                copy_state(
                    getattr(self, f'norm{index}'), learngene.final_norms[f'norm{index}'],
                    f'norm{index}', f'final_norms.norm{index}', inherited)
        for s, (stage, condensed) in enumerate(zip(self.stages, learngene.stages)):
            for b, (block, layer) in enumerate(zip(stage.blocks, condensed.layers)):
                prefix = f'stages.{s}.blocks.{b}'
                assignment = self.assignments[s][b]
                msa = block.attn.w_msa
                written = inherit_attention(msa, layer, assignment, f'{prefix}.attn.w_msa')
                inherited.update({f'{prefix}.attn.w_msa.{k}': v for k, v in written.items()})
                index = torch.as_tensor(assignment, dtype=torch.long)
                table = f'{prefix}.attn.w_msa.relative_position_bias_table'
                copy_into(msa, 'relative_position_bias_table', layer.rel_pos_bias[index].t(), table)
                inherited[table] = msa.relative_position_bias_table.numel()
                where = f'stages[{s}].layers[{b}]'
                copy_state(block.norm1, layer.norm1, f'{prefix}.norm1', f'{where}.norm1', inherited)
                copy_state(block.norm2, layer.norm2, f'{prefix}.norm2', f'{where}.norm2', inherited)
                group = next(g for g in condensed.ffn_groups if b in g.layers)
                ffn = {name: group.weights[key] for key, name in SWIN_FFN.items()}
                copy_state(block.ffn, ffn, f'{prefix}.ffn', f'stages[{s}].ffn_groups', inherited)
            if stage.downsample is not None:
                copy_state(stage.downsample, condensed.downsample, f'stages.{s}.downsample',
                           f'stages[{s}].downsample', inherited)
        self.inherited = inherited

    def parameter_counts(self) -> Dict[str, int]:
        """``t_params``: the descendant's parameters; ``i_params``: those set
        from the learngene (0 after loading its own checkpoint)."""
        return dict(
            t_params=sum(p.numel() for p in self.parameters()),
            i_params=sum(self.inherited.values()))

    def _forget_loaded(self, state_dict, prefix, *args, **kwargs):
        """Load-state-dict pre-hook: loaded tensors no longer count as inherited."""
        self.inherited = {
            name: size
            for name, size in self.inherited.items() if prefix + name not in state_dict
        }
