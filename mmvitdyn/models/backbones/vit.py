"""Plain Vision Transformer: the foundation DyT and Cluster-Learngene build on."""
from typing import Dict, Sequence, Tuple, Union

import torch
from mmcv.cnn import build_norm_layer
from mmengine.logging import MMLogger
from mmengine.model import BaseModule
from mmengine.model.weight_init import trunc_normal_
from mmengine.registry import MODELS
from torch import nn

from ..layers import Block, PatchEmbed, resize_pos_embed
from ..utils import load_pretrained

ARCH_KEYS = {'embed_dims', 'num_layers', 'num_heads', 'feedforward_channels'}


@MODELS.register_module()
class ViT(BaseModule):
    """Vision Transformer (ViT / DeiT) with the mmpretrain backbone contract.

    Parameter names follow timm (``patch_embed.proj``, ``cls_token``,
    ``pos_embed``, ``blocks.{i}.{norm1,attn.qkv,attn.proj,norm2,mlp.fc1,mlp.fc2}``,
    ``norm``), so timm/DeiT checkpoints load with few key changes.

    Args:
        arch (str | dict): A key of :attr:`arch_zoo` ('tiny', 'small', 'base',
            'large' and their aliases; 'small' is the DeiT/timm ViT-S, 384 wide)
            or a dict with ``embed_dims``, ``num_layers``, ``num_heads`` and
            ``feedforward_channels``, and optionally ``head_dim`` (default
            ``embed_dims // num_heads``; e.g. 6 heads of 64 in a 768-wide
            ViT, the shape of a Cluster-Learngene descendant). Defaults to 'base'.
        img_size (int): Input size the position embedding is learned for.
            Other sizes are handled by interpolation. Defaults to 224.
        patch_size (int): Patch side. Defaults to 16.
        in_channels (int): Image channels. Defaults to 3.
        out_indices (int | Sequence[int]): Blocks whose outputs are returned;
            negative values count from the end. Defaults to -1.
        drop_rate (float): Dropout after the position embedding and in blocks.
        drop_path_rate (float): Stochastic depth rate of the last block
            (linearly increasing from 0). Defaults to 0.
        qkv_bias (bool): Bias in q/k/v projections. Defaults to True.
        norm_cfg (dict): Norm config. Defaults to ``dict(type='LN', eps=1e-6)``.
        final_norm (bool): Normalise the last block's tokens. Defaults to True.
        out_type (str): 'raw' (B, 1+N, C), 'cls_token' (B, C), 'featmap'
            (B, C, h, w) or 'avg_featmap' (B, C). Defaults to 'cls_token'.
        interpolate_mode (str): Mode for resizing the position embedding.
        init_cfg (dict | list, optional): Initialisation config; use
            ``dict(type='Pretrained', checkpoint=..., prefix='backbone.')``
            to load weights.
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
    num_extra_tokens = 1  # the class token

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
                 out_type: str = 'cls_token',
                 interpolate_mode: str = 'bicubic',
                 init_cfg: Union[dict, list] = [
                     dict(type='TruncNormal', layer=['Linear', 'Conv2d'], std=.02, bias=0.),
                     dict(type='Constant', layer='LayerNorm', val=1., bias=0.)
                 ]):
        super().__init__(init_cfg=init_cfg)
        self.arch_settings = self._parse_arch(arch)
        self.embed_dims = self.arch_settings['embed_dims']
        self.num_layers = self.arch_settings['num_layers']
        if out_type not in self.OUT_TYPES:
            raise ValueError(f'out_type={out_type!r} is not supported; choose one of '
                             f'{sorted(self.OUT_TYPES)}')
        self.out_type = out_type
        self.out_indices = self._parse_out_indices(out_indices, self.num_layers)
        self.final_norm = final_norm
        self.interpolate_mode = interpolate_mode
        self.patch_size = patch_size
        self.patch_resolution = (img_size // patch_size, img_size // patch_size)

        self.patch_embed = PatchEmbed(patch_size, in_channels, self.embed_dims)
        num_patches = self.patch_resolution[0] * self.patch_resolution[1]
        # Backbones without extra tokens (num_extra_tokens = 0) have no class token.
        self.cls_token = nn.Parameter(torch.zeros(1, 1, self.embed_dims)) \
            if self.num_extra_tokens else None
        self.pos_embed = nn.Parameter(
            torch.zeros(1, num_patches + self.num_extra_tokens, self.embed_dims))
        self.pos_drop = nn.Dropout(drop_rate)
        self._register_load_state_dict_pre_hook(self._resize_pos_embed_on_load)

        drop_path_rates = torch.linspace(0, drop_path_rate, self.num_layers).tolist()
        self.blocks = nn.ModuleList([
            self.build_block(
                i,
                dim=self.embed_dims,
                num_heads=self.arch_settings['num_heads'],
                head_dim=self.arch_settings.get('head_dim'),
                mlp_hidden_dim=self.arch_settings['feedforward_channels'],
                qkv_bias=qkv_bias,
                drop=drop_rate,
                drop_path=drop_path_rates[i],
                norm_cfg=norm_cfg) for i in range(self.num_layers)
        ])
        self.norm = build_norm_layer(norm_cfg, self.embed_dims)[1] if final_norm else nn.Identity()

    def build_block(self, index: int, **kwargs) -> nn.Module:
        """Block ``index`` of the encoder; subclasses return their own block."""
        return Block(**kwargs)

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
        return dict(arch)

    @staticmethod
    def _parse_out_indices(out_indices: Union[int, Sequence[int]],
                           num_layers: int) -> Tuple[int, ...]:
        if isinstance(out_indices, int):
            out_indices = [out_indices]
        parsed = []
        for index in out_indices:
            if not -num_layers <= index < num_layers:
                raise ValueError(f'out_indices entry {index} is out of range for '
                                 f'{num_layers} layers (allowed: {-num_layers}..{num_layers - 1})')
            parsed.append(index % num_layers)
        return tuple(parsed)

    def init_weights(self):
        """Random init, or with ``init_cfg=dict(type='Pretrained', checkpoint=...,
        prefix=...)`` load a checkpoint of any supported format (timm, JAX
        ``.npz``, mmpretrain, official DyT, mmvitdyn): shape mismatches raise,
        missing and ignored keys are logged (see ``load_pretrained``)."""
        if isinstance(self.init_cfg, dict) and self.init_cfg.get('type') == 'Pretrained':
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
        if self.cls_token is not None:
            trunc_normal_(self.cls_token, std=.02)

    def _resize_pos_embed_on_load(self, state_dict, prefix, *args, **kwargs):
        """Load-state-dict pre-hook: interpolate a checkpoint's square pos_embed grid."""
        key = prefix + 'pos_embed'
        if key not in state_dict or state_dict[key].shape == self.pos_embed.shape:
            return
        ckpt_tokens = state_dict[key].shape[1] - self.num_extra_tokens
        side = int(ckpt_tokens**0.5)
        if side * side != ckpt_tokens:
            raise ValueError(f'checkpoint {key} has {ckpt_tokens} patch tokens, not a square grid')
        MMLogger.get_current_instance().info(
            f'Resize {key} from grid {(side, side)} to {self.patch_resolution}')
        state_dict[key] = resize_pos_embed(state_dict[key], (side, side), self.patch_resolution,
                                           self.num_extra_tokens, self.interpolate_mode)

    def embed(self, x: torch.Tensor) -> Tuple[torch.Tensor, Tuple[int, int]]:
        """Images (B, 3, H, W) -> tokens (B, extra + h*w, C) with position, and grid (h, w)."""
        x, grid = self.patch_embed(x)
        if self.cls_token is not None:
            x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1)
        x = x + resize_pos_embed(self.pos_embed, self.patch_resolution, grid, self.num_extra_tokens,
                                 self.interpolate_mode)
        return self.pos_drop(x), grid

    def format_output(self, x: torch.Tensor, grid: Tuple[int, int]) -> torch.Tensor:
        """Tokens (B, 1 + h*w, C) -> the output selected by ``out_type``."""
        if self.out_type == 'raw':
            return x
        if self.out_type == 'cls_token':
            return x[:, 0]
        patches = x[:, self.num_extra_tokens:]
        if self.out_type == 'featmap':
            return patches.transpose(1, 2).reshape(x.shape[0], -1, *grid)
        return patches.mean(dim=1)

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        """Images (B, 3, H, W) -> one output per ``out_indices`` entry."""
        x, grid = self.embed(x)
        block_kwargs = self.block_kwargs(grid)
        outs = []
        for i, block in enumerate(self.blocks):
            x = block(x, **block_kwargs)
            if i == self.num_layers - 1:
                x = self.norm(x)
            if i in self.out_indices:
                outs.append(self.format_output(x, grid))
        return tuple(outs)

    def block_kwargs(self, grid: Tuple[int, int]) -> dict:
        """Keyword arguments of every block's forward besides the tokens (none here;
        subclasses whose attention needs the patch grid pass it)."""
        return {}

    def get_layer_depth(self, param_name: str, prefix: str = '') -> Tuple[int, int]:
        """Layer depth of a parameter for layer-wise learning-rate decay.

        Embeddings are depth 0, block i is depth i + 1, everything after the
        blocks (final norm, heads) is the last depth.

        Returns:
            tuple[int, int]: (layer_depth, num_depths) with num_depths = layers + 2.
        """
        num_depths = self.num_layers + 2
        if not param_name.startswith(prefix):
            return num_depths - 1, num_depths
        name = param_name[len(prefix):]
        if name in ('cls_token', 'pos_embed') or name.startswith('patch_embed'):
            return 0, num_depths
        if name.startswith('blocks.'):
            return int(name.split('.')[1]) + 1, num_depths
        return num_depths - 1, num_depths

    def no_weight_decay(self) -> set:
        """Parameter names an optimiser should not decay."""
        return {'pos_embed', 'cls_token'}
