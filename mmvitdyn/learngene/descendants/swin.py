"""The Swin descendant of Cluster-Learngene: ``LearngeneSwin``."""
from typing import Dict, List, Sequence, Tuple

import torch
from mmengine.logging import MMLogger
from mmengine.registry import MODELS
from mmpretrain.models import SwinTransformer

from ...checkpoint import loads_checkpoint
from ...models.layers import FFNExpansion, hold, release, supplied
from ...models.layers.window_msa import HeadWidthWindowMSA
from ..ancestries.swin import SWIN_FFN
from ..artefacts.swin import SwinLearngene, SwinStage, head_dims
from ..inheritance import (FFN_SHARING, check_built_from, copy_into, copy_state, head_assignment,
                           heads_from_omega, inherit_attention, inherit_ffn)
from .inheritance_record import Holders, InheritanceRecord, expanded_ffn_holders

# A tied FFN group: (stage, its blocks in order).
TiedGroup = Tuple[int, Tuple[int, ...]]


def tied_groups(stages: Sequence[SwinStage], ffn_sharing: str) -> List[TiedGroup]:
    """The FFN groups of more than one block, when ``ffn_sharing`` is 'tied'."""
    if ffn_sharing not in FFN_SHARING:
        raise ValueError(f'ffn_sharing={ffn_sharing!r} is not one of {FFN_SHARING}')
    if ffn_sharing != 'tied':
        return []
    return [(s, tuple(group.layers)) for s, stage in enumerate(stages) for group in stage.ffn_groups
            if len(group.layers) > 1]


@MODELS.register_module()
class LearngeneSwin(InheritanceRecord, SwinTransformer):
    """A Swin descendant of Cluster-Learngene, built from a Swin learngene.

    Widths, depths, windows, head width and patch size are the ancestry's; heads per stage are
    the descendant's. :meth:`init_weights` inherits the learngene unless ``init_cfg`` loads a
    checkpoint (one of the other ``ffn_sharing`` is refused).

    Args:
        learngene (str): Path of the Swin learngene file.
        arch (dict): ``num_heads`` (one per stage) or ``omega`` (H_a / H_d, one value or one per
            stage); default: the ancestry's heads.
        ffn_sharing (str): 'tied' (one W and the map g, W_t = g_t(W)) or 'independent' (every
            block's FFN starts as W). Defaults to 'independent'.
        **kwargs: Other arguments of ``SwinTransformer`` (``img_size``, ``out_indices``,
            ``drop_path_rate``, ``init_cfg`` ...); ``with_cp`` only without tied groups.
    """

    HOLDER_PARTS = ('.ffn.expansion.', )

    def __init__(self,
                 learngene: str,
                 arch: dict = dict(),
                 ffn_sharing: str = 'independent',
                 **kwargs):
        meta = SwinLearngene.load(learngene, mmap=True)
        a = meta.ancestry
        groups = tied_groups(meta.stages, ffn_sharing)
        if groups and kwargs.get('with_cp', False):
            raise ValueError("with_cp=True recomputes blocks in the backward pass, where the "
                             "tied FFNs' W_t are not supplied; use ffn_sharing='independent' "
                             'or with_cp=False')
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
        self.ffn_sharing = ffn_sharing
        self.tied_groups = groups
        for s, blocks in groups:
            ffns = [self.stages[s].blocks[b].ffn for b in blocks]
            fc1 = ffns[0].layers[0][0]
            expansion = FFNExpansion(fc1.in_features, fc1.out_features, len(blocks))
            for ffn in ffns:
                release(ffn, SWIN_FFN.values())
            ffns[0].expansion = expansion
        # Centroid (priority rank) of every head, per stage and block.
        self.assignments = [[head_assignment(c, h) for c in counts]
                            for counts, h in zip(meta.num_centroids, heads)]
        # Deployed tensor name -> size, for what the learngene initialised.
        self.inherited: Dict[str, int] = {}
        self._register_load_state_dict_pre_hook(self._on_load_state_dict)

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

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        """As ``SwinTransformer.forward``, the tied FFNs computing with :meth:`ffn_tensors`."""
        with supplied(self, self.ffn_tensors()):
            return super().forward(x)

    def _expansion(self, group: TiedGroup) -> FFNExpansion:
        s, blocks = group
        return self.stages[s].blocks[blocks[0]].ffn.expansion

    def ffn_tensors(self) -> Dict[str, torch.Tensor]:
        """W_t = g_t(W) of every block of a tied group by deployed name
        (``stages.{s}.blocks.{b}.ffn.layers.0.0.weight`` ...); empty without tied groups."""
        tensors = {}
        for group in self.tied_groups:
            expansion = self._expansion(group)
            s, blocks = group
            for position, b in enumerate(blocks):
                for key, value in expansion.weights(position).items():
                    tensors[f'stages.{s}.blocks.{b}.ffn.{SWIN_FFN[key]}'] = value
        return tensors

    def init_weights(self):
        """Default init (or the ``init_cfg`` checkpoint), then inherit unless a checkpoint was
        loaded; logs T-/I-Params."""
        super().init_weights()
        if not loads_checkpoint(self.init_cfg):
            self.inherit_from(SwinLearngene.load(self.learngene_path))
        counts = self.parameter_counts()
        MMLogger.get_current_instance().info(
            f'{type(self).__name__} from {self.learngene_path}: heads per stage {self.heads}, '
            f'FFN sharing {self.ffn_sharing}; T-Params {counts["t_params"] / 1e6:.3f}M, '
            f'I-Params {counts["i_params"] / 1e6:.3f}M, trainable '
            f'{counts["trainable"] / 1e6:.3f}M')

    @torch.no_grad()
    def inherit_from(self, learngene: SwinLearngene) -> None:
        """Copy the learngene in; record in :attr:`inherited` every deployed tensor it set.

        Raises:
            ValueError: The learngene lacks or mis-shapes something (named), or has other centroid
                counts or tied FFN groups than the one it was built from.
        """
        learngene.validate()
        assignments = [[head_assignment(c, h) for c in counts]
                       for counts, h in zip(learngene.num_centroids, self.heads)]
        check_built_from(self, self.learngene_path, {
            'heads from centroids': self.assignments,
            'tied FFN groups': self.tied_groups
        }, {
            'heads from centroids': assignments,
            'tied FFN groups': tied_groups(learngene.stages, self.ffn_sharing)
        })
        inherited: Dict[str, int] = {}
        copy_state(self.patch_embed, learngene.embeddings, 'patch_embed', 'embeddings', inherited)
        for index in self.out_indices:
            if f'norm{index}' in learngene.final_norms:
                copy_state(
                    getattr(self, f'norm{index}'), learngene.final_norms[f'norm{index}'],
                    f'norm{index}', f'final_norms.norm{index}', inherited)
        tied = {(s, b) for s, blocks in self.tied_groups for b in blocks}
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
                inherit_ffn(block.ffn, group.weights, (s, b) in tied, f'{prefix}.ffn',
                            f'stages[{s}].ffn_groups', inherited, SWIN_FFN)
            if stage.downsample is not None:
                copy_state(stage.downsample, condensed.downsample, f'stages.{s}.downsample',
                           f'stages[{s}].downsample', inherited)
        self.inherited = inherited

    def materialize(self) -> 'LearngeneSwin':
        """Make every tied FFN a plain FFN holding its current W_t (outputs unchanged); the result
        loads into a descendant with ``ffn_sharing='independent'``."""
        hold(self, self.ffn_tensors())
        for group in self.tied_groups:
            s, blocks = group
            del self.stages[s].blocks[blocks[0]].ffn.expansion
        self.tied_groups, self.ffn_sharing = [], 'independent'
        return self

    def held_tensors(self) -> Holders:
        """The FFN tensors of every tied group, held by its expansion."""
        held: Holders = {}
        for group in self.tied_groups:
            s, blocks = group
            held.update(
                expanded_ffn_holders(
                    self._expansion(group), f'stages.{s}.blocks.{blocks[0]}.ffn.expansion',
                    [f'stages.{s}.blocks.{b}.ffn' for b in blocks], SWIN_FFN))
        return held

    def _on_load_state_dict(self, state_dict, prefix, *args, **kwargs):
        """Load-state-dict pre-hook: refuse other tied FFN groups; loaded tensors no longer count
        as inherited."""
        saved = sorted({
            key[len(prefix):].partition('.ffn.expansion.')[0]
            for key in state_dict if key.startswith(prefix) and '.ffn.expansion.' in key
        })
        ours = sorted(f'stages.{s}.blocks.{blocks[0]}' for s, blocks in self.tied_groups)
        if saved != ours:
            raise ValueError(
                f'the checkpoint holds tied FFN groups (ffn.expansion) in blocks {saved}, this '
                f'{type(self).__name__} (ffn_sharing={self.ffn_sharing!r}) in {ours}; build it '
                'with the ffn_sharing the checkpoint was trained with')
        self.forget_loaded(state_dict, prefix)
