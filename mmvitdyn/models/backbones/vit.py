"""Plain Vision Transformer: the foundation DyT and Cluster-Learngene build on."""
import re
from functools import partial
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

import torch
from mmcv.cnn import build_norm_layer
from mmengine.logging import MMLogger
from mmengine.model import BaseModule
from mmengine.model.weight_init import trunc_normal_
from mmengine.registry import MODELS
from torch import nn

from ...checkpoint import PYRAMID_PREFIX, VIT_PARAM_GROUPS, load_pretrained, loads_checkpoint
from ...utils import check_act_cfg, check_bool, check_int, check_norm_cfg, check_rate
from ..layers import Block, PatchEmbed, heads_are_shared, resize_pos_embed, supplied
from .block_checkpoint import checkpoint_block

ARCH_KEYS = {'embed_dims', 'num_layers', 'num_heads', 'feedforward_channels'}
# The modes of torch.nn.functional.interpolate that resize a 2-d position grid.
INTERPOLATE_MODES = ('nearest', 'nearest-exact', 'bilinear', 'bicubic', 'area')


@MODELS.register_module()
class ViT(BaseModule):
    """Vision Transformer (ViT, DeiT, MAE, DINOv2, CLIP) with the mmpretrain backbone contract.

    Parameter names follow timm (``patch_embed.proj``, ``cls_token``, ``pos_embed``,
    ``blocks.{i}.{norm1,attn.qkv,attn.proj,norm2,mlp.fc1,mlp.fc2}``, ``norm``). Tokens are
    ``[class, distillation?, registers..., patches]``; registers have no position embedding.
    Each family's settings: docs/backbones.md.

    Args:
        arch (str | dict): A key of :attr:`arch_zoo` or a dict with ``embed_dims``,
            ``num_layers``, ``num_heads``, ``feedforward_channels`` (and ``head_dim``, default
            ``embed_dims // num_heads``). Defaults to 'base'.
        img_size (int): Input size of the position embedding; others interpolate it. Default 224.
        patch_size (int): Patch side. Defaults to 16.
        in_channels (int): Image channels. Defaults to 3.
        out_indices (int | Sequence[int]): Blocks whose outputs are returned (negative: from
            the end). Defaults to -1.
        drop_rate (float): Dropout after the position embedding and in blocks. Defaults to 0.
        drop_path_rate (float): Stochastic depth of the last block, linear from 0. Defaults to 0.
        qkv_bias (bool): Bias in the q/k/v projections. Defaults to True.
        norm_cfg (dict): Norm config. Defaults to ``dict(type='LN', eps=1e-6)``.
        final_norm (bool): Normalise the last block's tokens. Defaults to True.
        fc_norm (bool): Normalise the pooled 'avg_featmap' output (timm's ``fc_norm``).
            Defaults to False.
        out_type (str): 'raw' (B, 1+N, C), 'cls_token' (B, C), 'featmap' (B, C, h, w) or
            'avg_featmap' (B, C). Defaults to 'cls_token'.
        interpolate_mode (str): Mode resizing the position embedding. Defaults to 'bicubic'.
        pyramid (dict, optional): Module (built with ``in_channels=embed_dims``) turning the
            ``out_indices`` maps into a pyramid; needs ``out_type='featmap'``. Defaults to None.
        layer_scale_init_value (float, optional): LayerScale init of both residual branches.
        num_reg_tokens (int): Register tokens after the class token(s). Defaults to 0.
        dist_token (bool): A distillation token; 'cls_token' then returns the pair (B, C),
            (B, C) of mmpretrain's ``DeiTClsHead``. Defaults to False.
        class_token (bool, optional): A class token (None: the class's :attr:`class_token`).
        pre_norm (bool): A norm ``norm_pre`` before the blocks and no patch-projection bias.
            Defaults to False.
        act_cfg (dict): Activation of the MLPs. Defaults to ``dict(type='GELU')``.
        interpolate_antialias (bool): Anti-aliased position-embedding resizing. Default False.
        block_fn (callable): Builds each block from keyword arguments. Defaults to :class:`Block`.
        layer_cfgs (dict | Sequence[dict]): Per-block keyword arguments over the defaults
            derived from the ViT's arguments (e.g. ``attn_layer``, ``mlp_layer``); one dict
            for every block or one per block. Defaults to ``dict()``.
        with_cp (bool): Recompute the blocks' activations in the backward pass. Default False.
        init_cfg (dict | list, optional): Initialisation, e.g. ``dict(type='Pretrained',
            checkpoint=..., prefix='backbone.')``.
        pretrained (str, optional): mmseg's ``model.pretrained``: a checkpoint to load.
    """
    # yapf: disable
    arch_zoo: Dict[str, dict] = {
        **dict.fromkeys(['t', 'tiny', 'deit-t', 'deit-tiny'], dict(
            embed_dims=192, num_layers=12, num_heads=3, feedforward_channels=768)),
        **dict.fromkeys(['s', 'small', 'deit-s', 'deit-small'], dict(
            embed_dims=384, num_layers=12, num_heads=6, feedforward_channels=1536)),
        **dict.fromkeys(['b', 'base', 'deit-b', 'deit-base'], dict(
            embed_dims=768, num_layers=12, num_heads=12, feedforward_channels=3072)),
        **dict.fromkeys(['l', 'large'], dict(
            embed_dims=1024, num_layers=24, num_heads=16, feedforward_channels=4096)),
    }
    # yapf: enable
    OUT_TYPES = {'raw', 'cls_token', 'featmap', 'avg_featmap'}
    class_token = True  # class_token's default; False: the class has none (ViTDet's backbone)

    def __init__(self,
                 arch: Union[str, dict] = 'base',
                 img_size: int = 224,
                 patch_size: int = 16,
                 in_channels: int = 3,
                 out_indices: Union[int, Sequence[int]] = -1,
                 drop_rate: float = 0.,
                 drop_path_rate: float = 0.,
                 qkv_bias: bool = True,
                 norm_cfg: dict = dict(type='LN', eps=1e-6),
                 final_norm: bool = True,
                 fc_norm: bool = False,
                 out_type: str = 'cls_token',
                 interpolate_mode: str = 'bicubic',
                 pyramid: Optional[dict] = None,
                 layer_scale_init_value: Optional[float] = None,
                 num_reg_tokens: int = 0,
                 dist_token: bool = False,
                 class_token: Optional[bool] = None,
                 pre_norm: bool = False,
                 act_cfg: dict = dict(type='GELU'),
                 interpolate_antialias: bool = False,
                 block_fn: Callable[..., nn.Module] = Block,
                 layer_cfgs: Union[dict, Sequence[dict]] = dict(),
                 with_cp: bool = False,
                 init_cfg: Union[dict, list] = [
                     dict(type='TruncNormal', layer=['Linear', 'Conv2d'], std=.02, bias=0.),
                     dict(type='Constant', layer='LayerNorm', val=1., bias=0.)
                 ],
                 pretrained: Optional[str] = None):
        if pretrained is not None:
            init_cfg = self._pretrained_init_cfg(pretrained, init_cfg)
        super().__init__(init_cfg=init_cfg)
        self.arch_settings = self._parse_arch(arch)
        self.embed_dims = self.arch_settings['embed_dims']
        self.num_layers = self.arch_settings['num_layers']
        if out_type not in self.OUT_TYPES:
            raise ValueError(f'out_type={out_type!r} is not supported; choose one of '
                             f'{sorted(self.OUT_TYPES)}')
        if pyramid is not None and out_type != 'featmap':
            raise ValueError(f"pyramid={pyramid} turns maps into a pyramid and needs "
                             f"out_type='featmap', got out_type={out_type!r}")
        class_token = self._check_class_token(class_token, out_type)
        if check_bool(fc_norm, 'fc_norm') and out_type != 'avg_featmap':
            raise ValueError(f"fc_norm=True normalises the pooled output and needs "
                             f"out_type='avg_featmap', got out_type={out_type!r}")
        self.out_type = out_type
        self.out_indices = self._parse_out_indices(out_indices, self.num_layers)
        self.final_norm = check_bool(final_norm, 'final_norm')
        self.with_cp = check_bool(with_cp, 'with_cp')
        if interpolate_mode not in INTERPOLATE_MODES:
            raise ValueError(f'interpolate_mode={interpolate_mode!r} must be one of '
                             f'{INTERPOLATE_MODES}')
        self.interpolate_mode = interpolate_mode
        self.interpolate_antialias = check_bool(interpolate_antialias, 'interpolate_antialias')
        self.layer_scale_init_value = layer_scale_init_value
        check_bool(pre_norm, 'pre_norm')
        check_norm_cfg(norm_cfg)
        check_act_cfg(act_cfg)
        check_rate(drop_rate, 'drop_rate')
        check_rate(drop_path_rate, 'drop_path_rate')
        self.patch_embed = PatchEmbed(patch_size, in_channels, self.embed_dims, bias=not pre_norm)
        self.patch_size = patch_size
        check_int(img_size, 'img_size', minimum=patch_size)
        self.patch_resolution = (img_size // patch_size, img_size // patch_size)
        self.num_prefix_tokens = self.prefix_token_count(dist_token, num_reg_tokens, class_token)
        self.num_pos_prefix_tokens = self.num_prefix_tokens - num_reg_tokens

        num_patches = self.patch_resolution[0] * self.patch_resolution[1]
        self.class_token = class_token
        self.cls_token = nn.Parameter(torch.zeros(1, 1, self.embed_dims)) if class_token else None
        self.dist_token = nn.Parameter(torch.zeros(1, 1, self.embed_dims)) if dist_token else None
        self.reg_token = nn.Parameter(torch.zeros(1, num_reg_tokens, self.embed_dims)) \
            if num_reg_tokens else None
        self.pos_embed = nn.Parameter(
            torch.zeros(1, num_patches + self.num_pos_prefix_tokens, self.embed_dims))
        self.pos_drop = nn.Dropout(drop_rate)
        self.norm_pre = build_norm_layer(norm_cfg, self.embed_dims)[1] if pre_norm \
            else nn.Identity()
        self._register_load_state_dict_pre_hook(self._resize_pos_embed_on_load)

        block_defaults = dict(
            dim=self.embed_dims,
            num_heads=self.arch_settings['num_heads'],
            head_dim=self.arch_settings.get('head_dim'),
            mlp_hidden_dim=self.arch_settings['feedforward_channels'],
            qkv_bias=qkv_bias,
            drop=drop_rate,
            norm_cfg=norm_cfg,
            layer_scale_init=layer_scale_init_value,
            act_cfg=act_cfg)
        drop_path_rates = torch.linspace(0, drop_path_rate, self.num_layers).tolist()
        layer_cfgs = self.merge_layer_cfgs(layer_cfgs, [{}] * self.num_layers, type(self).__name__)
        self.blocks = nn.ModuleList(
            block_fn(**{
                **block_defaults, 'drop_path': drop_path_rates[i],
                **layer_cfgs[i]
            }) for i in range(self.num_layers))
        self.norm = build_norm_layer(norm_cfg, self.embed_dims)[1] if final_norm else nn.Identity()
        self.fc_norm = build_norm_layer(norm_cfg, self.embed_dims)[1] if fc_norm else nn.Identity()
        self.pyramid = MODELS.build(dict(in_channels=self.embed_dims, **pyramid)) \
            if pyramid is not None else None

    @classmethod
    def prefix_token_count(cls,
                           dist_token: bool = False,
                           num_reg_tokens: int = 0,
                           class_token: Optional[bool] = None) -> int:
        """Tokens before the patches: the class token (``class_token``; None:
        the class's, False for ViTDet), the distillation token and the registers."""
        class_token = cls.class_token if class_token is None else class_token
        if not class_token and (dist_token or num_reg_tokens):
            raise ValueError(f'{cls.__name__} has no class token: dist_token={dist_token} and '
                             f'num_reg_tokens={num_reg_tokens} must be False and 0')
        check_int(num_reg_tokens, 'num_reg_tokens', minimum=0)
        return int(class_token) + int(check_bool(dist_token, 'dist_token')) + num_reg_tokens

    @classmethod
    def _check_class_token(cls, class_token: Optional[bool], out_type: str) -> bool:
        """``class_token`` (None: the class's); True only where the class has one,
        and needed by ``out_type='cls_token'``."""
        if class_token is None:
            class_token = cls.class_token
        elif check_bool(class_token, 'class_token') and not cls.class_token:
            raise ValueError(f'class_token=True: {cls.__name__} has no class token')
        if out_type == 'cls_token' and not class_token:
            raise ValueError("out_type='cls_token' needs the class token (class_token=False); "
                             "use out_type='avg_featmap' (average pooling)")
        return class_token

    @staticmethod
    def merge_layer_cfgs(layer_cfgs: Union[dict, Sequence[dict]], entries: Sequence[dict],
                         owner: str) -> List[dict]:
        """``layer_cfgs`` (one dict, or one per block) with ``entries`` (one per block, set by
        ``owner``) added; ``ValueError`` on a wrong count or a key both set (named)."""
        if isinstance(layer_cfgs, dict):
            layer_cfgs = [layer_cfgs] * len(entries)
        if len(layer_cfgs) != len(entries) or not all(isinstance(c, dict) for c in layer_cfgs):
            raise ValueError(f'layer_cfgs must be a dict or {len(entries)} dicts (one per '
                             f'block), got {layer_cfgs!r}')
        merged = []
        for index, (cfg, entry) in enumerate(zip(layer_cfgs, entries)):
            clash = set(cfg) & set(entry)
            if clash:
                raise ValueError(f'layer_cfgs[{index}] sets {sorted(clash)}, which {owner} sets')
            merged.append({**cfg, **entry})
        return merged

    @classmethod
    def _parse_arch(cls, arch: Union[str, dict]) -> dict:
        if isinstance(arch, str):
            key = arch.lower()
            if key not in cls.arch_zoo:
                raise ValueError(f'arch={arch!r} is not one of {sorted(cls.arch_zoo)}; '
                                 f'or pass a dict with keys {sorted(ARCH_KEYS)}')
            return dict(cls.arch_zoo[key])
        if not isinstance(arch, dict) or not ARCH_KEYS <= set(arch):
            raise ValueError(f'arch dict must have keys {sorted(ARCH_KEYS)}, got {arch!r}')
        for key in sorted(ARCH_KEYS) + (['head_dim'] if arch.get('head_dim') is not None else []):
            check_int(arch[key], f'arch.{key}', minimum=1)
        return dict(arch)

    @staticmethod
    def _parse_out_indices(out_indices: Union[int, Sequence[int]],
                           num_layers: int) -> Tuple[int, ...]:
        """``out_indices`` as block indices in [0, num_layers); ``ValueError`` naming an entry
        that is not an int in [-num_layers, num_layers) (a bool is not an index)."""
        allowed = f'an int in [{-num_layers}, {num_layers})'
        if isinstance(out_indices, int) and not isinstance(out_indices, bool):
            out_indices = [out_indices]
        elif isinstance(out_indices, (str, bytes)) or not isinstance(out_indices, Sequence):
            raise ValueError(f'out_indices={out_indices!r} must be {allowed} or a sequence of '
                             'them (a block index, negative counting from the end)')
        parsed = []
        for position, index in enumerate(out_indices):
            if isinstance(index, bool) or not isinstance(index, int):
                raise ValueError(f'out_indices[{position}]={index!r} must be {allowed} (a block '
                                 'index, negative counting from the end)')
            if not -num_layers <= index < num_layers:
                raise ValueError(f'out_indices entry {index} is out of range for '
                                 f'{num_layers} layers (allowed: {-num_layers}..{num_layers - 1})')
            parsed.append(index % num_layers)
        return tuple(parsed)

    def init_weights(self):
        """Random init, or load the checkpoint of ``init_cfg=dict(type='Pretrained',
        checkpoint=..., prefix=...)`` in any supported format (:func:`load_pretrained`)."""
        if loads_checkpoint(self.init_cfg):
            if not self.init_cfg.get('checkpoint'):
                raise ValueError(f'init_cfg={self.init_cfg} of type Pretrained needs a checkpoint '
                                 '(a path or URL)')
            load_pretrained(
                self,
                self.init_cfg['checkpoint'],
                prefix=self.init_cfg.get('prefix'),
                map_location=self.init_cfg.get('map_location', 'cpu'))
            self._is_init = True
            return
        super().init_weights()
        trunc_normal_(self.pos_embed, std=.02)
        for token in (self.cls_token, self.dist_token, self.reg_token):
            if token is not None:
                trunc_normal_(token, std=.02)

    def _resize_pos_embed_on_load(self, state_dict, prefix, *args, **kwargs):
        """Load-state-dict pre-hook: interpolate a checkpoint's square pos_embed grid."""
        key = prefix + 'pos_embed'
        if key not in state_dict or state_dict[key].shape == self.pos_embed.shape:
            return
        ckpt_tokens = state_dict[key].shape[1] - self.num_pos_prefix_tokens
        side = int(ckpt_tokens**0.5)
        if side * side != ckpt_tokens:
            raise ValueError(f'checkpoint {key} has {ckpt_tokens} patch tokens, not a square grid')
        MMLogger.get_current_instance().info(
            f'Resize {key} from grid {(side, side)} to {self.patch_resolution}')
        state_dict[key] = resize_pos_embed(state_dict[key], (side, side), self.patch_resolution,
                                           self.num_pos_prefix_tokens, self.interpolate_mode,
                                           self.interpolate_antialias)

    def embed(self, x: torch.Tensor) -> Tuple[torch.Tensor, Tuple[int, int]]:
        """Images (B, 3, H, W) -> tokens (B, extra + h*w, C) with position (and
        ``norm_pre``), and the grid (h, w); registers are inserted after the
        position embedding, which they do not have."""
        x, grid = self.patch_embed(x)
        b = x.shape[0]
        prefix = [t.expand(b, -1, -1) for t in (self.cls_token, self.dist_token) if t is not None]
        x = torch.cat([*prefix, x], dim=1)
        x = x + resize_pos_embed(self.pos_embed, self.patch_resolution, grid,
                                 self.num_pos_prefix_tokens, self.interpolate_mode,
                                 self.interpolate_antialias)
        if self.reg_token is not None:
            n = self.num_pos_prefix_tokens
            x = torch.cat([x[:, :n], self.reg_token.expand(b, -1, -1), x[:, n:]], dim=1)
        return self.norm_pre(self.pos_drop(x)), grid

    def format_output(self, x: torch.Tensor, grid: Tuple[int, int]) -> torch.Tensor:
        """Tokens (B, extra + h*w, C) -> the output selected by ``out_type``
        (with a distillation token, 'cls_token' gives the pair (B, C), (B, C))."""
        if self.out_type == 'raw':
            return x
        if self.out_type == 'cls_token':
            return (x[:, 0], x[:, 1]) if self.dist_token is not None else x[:, 0]
        patches = x[:, self.num_prefix_tokens:]
        if self.out_type == 'featmap':
            return patches.transpose(1, 2).reshape(x.shape[0], -1, *grid)
        return self.fc_norm(self.average_patches(patches))

    def average_patches(self, patches: torch.Tensor) -> torch.Tensor:
        """Patch tokens (B, M, C) -> their mean (B, C), the 'avg_featmap'
        output; subclasses whose tokens stand for several patches weight them."""
        return patches.mean(dim=1)

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        """Images (B, 3, H, W) -> one output per ``out_indices`` entry (each
        rescaled by the ``pyramid`` when there is one)."""
        x, grid = self.embed(x)
        block_kwargs = self.block_kwargs(grid)
        outs = []
        for i in range(self.num_layers):
            x = self.forward_block(i, x, block_kwargs)
            if i == self.num_layers - 1:
                x = self.norm(x)
            if i in self.out_indices:
                outs.append(self.format_output(x, grid))
        return tuple(outs) if self.pyramid is None else self.pyramid(tuple(outs))

    def block_kwargs(self, grid: Tuple[int, int]) -> dict:
        """Keyword arguments of the blocks' forward besides the tokens, made afresh for
        each forward: none here."""
        return {}

    @staticmethod
    def _pretrained_init_cfg(pretrained, init_cfg) -> dict:
        """The init_cfg of mmseg's ``pretrained=`` argument; ``ValueError`` when it is no path
        or URL, or ``init_cfg`` loads a checkpoint too."""
        if not isinstance(pretrained, str) or not pretrained:
            raise ValueError(f'pretrained={pretrained!r} must be a checkpoint path or URL')
        if loads_checkpoint(init_cfg):
            raise ValueError(f'pretrained={pretrained!r} and init_cfg={init_cfg} both load a '
                             'checkpoint; give one of them (e.g. model.pretrained=None)')
        MMLogger.get_current_instance().info(
            f'pretrained={pretrained!r}: loading it as init_cfg=dict(type=\'Pretrained\', '
            f'checkpoint={pretrained!r})')
        return dict(type='Pretrained', checkpoint=pretrained)

    def forward_block(self, index: int, x: torch.Tensor, block_kwargs: dict) -> torch.Tensor:
        """Block ``index`` on tokens (B, N, C) -> (B, N', C), with the tensors
        :meth:`block_tensors` supplies and ``block_kwargs`` (checkpointed with
        ``with_cp`` in training): the step of the forward's loop, where subclasses act
        between blocks."""
        if self.with_cp and self.training and torch.is_grad_enabled():
            return checkpoint_block(self.blocks[index], partial(self._run_block, index), x,
                                    block_kwargs)
        return self._run_block(index, x, **block_kwargs)

    def _run_block(self, index: int, x: torch.Tensor, **block_kwargs) -> torch.Tensor:
        """Block ``index`` on tokens (B, N, C) with its supplied tensors."""
        with supplied(self.blocks[index], self.block_tensors(index)) as block:
            return block(x, **block_kwargs)

    def block_tensors(self, index: int) -> Dict[str, torch.Tensor]:
        """Tensors block ``index`` computes with but does not hold, by name in the block
        (``attn.qkv.weight`` ...), supplied in every forward: here the heads of an
        attention whose heads are tied (:func:`~mmvitdyn.models.layers.share_heads`)."""
        attn = getattr(self.blocks[index], 'attn', None)
        if not heads_are_shared(attn):
            return {}
        return {f'attn.{key}': value for key, value in attn.shared_heads().items()}

    def group_matcher(self) -> Dict[str, str]:
        """Regexes of the parameter groups: ``stem`` (everything before the
        blocks) and ``blocks`` (the block index captured)."""
        return dict(VIT_PARAM_GROUPS)

    def is_stem_param(self, name: str) -> bool:
        """Whether parameter ``name`` lies before the blocks (embeddings, prefix
        tokens, pre-norm)."""
        return re.match(self.group_matcher()['stem'], name) is not None

    def get_layer_depth(self, param_name: str, prefix: str = '') -> Tuple[int, int]:
        """(layer depth, num_layers + 2) of a parameter for layer-wise lr decay: the stem 0,
        block i i + 1, everything after the blocks the last."""
        num_depths = self.num_layers + 2
        if not param_name.startswith(prefix):
            return num_depths - 1, num_depths
        name = param_name[len(prefix):]
        if self.is_stem_param(name):
            return 0, num_depths
        block = re.match(self.group_matcher()['blocks'], name)
        if block is not None:
            return int(block.group(1)) + 1, num_depths
        return num_depths - 1, num_depths

    def is_new_param(self, name: str) -> bool:
        """Whether parameter (or state-dict key) ``name`` lies in a part this model
        creates on purpose and a pretrained ViT lacks (here the ``pyramid``): a
        checkpoint without it is no gap to warn about."""
        return name.startswith(PYRAMID_PREFIX)

    def no_weight_decay(self) -> set:
        """Names of the parameters an optimiser should not decay."""
        return {'pos_embed', 'cls_token', 'dist_token', 'reg_token'}
