"""Transformer block with DyT adapter and token dispatch."""
from typing import Dict, Optional

import torch
from torch import nn

from .adapter_block import AdapterBlock
from .attention import Attention
from .dispatch_ops import add_packed_rows, masked_attention, masked_rows, packed_attention
from .token_dispatcher import TokenDispatcher

# The token dispatchers of each dispatch variant (paper Sec. 3.3), by the part they gate.
DISPATCH_PARTS = {
    'mlp': ('mlp', ),
    'attn': ('attn', ),
    'attn_mlp': ('attn', 'mlp'),
    'layer': ('layer', ),
}
# The sub-layers of a block each dispatcher's mask gates (layer dispatch: both with one mask).
GATED_SUBLAYERS = {'mlp': ('mlp', ), 'attn': ('attn', ), 'layer': ('attn', 'mlp')}


class DyTBlock(AdapterBlock):
    """``X' = Block(TD(X)) + Adapter(X)``: a block whose tokens may skip parts
    (docs/design_notes.md).

    Args:
        dispatch (str, optional): 'mlp', 'attn', 'attn_mlp', 'layer', or None
            (no dispatch: every token through every part).
        dispatcher_cfg (dict): Arguments of :class:`TokenDispatcher` except ``dim``.
        num_prefix_tokens (int): Leading tokens that are never dispatched.
        **kwargs: Arguments of :class:`AdapterBlock` (``adapter_cfg``) and
            :class:`Block`.

    Attributes:
        complete (bool): Every token runs every part; no dispatcher runs.
        packed (bool): In evaluation, compute active tokens only.
        masks (dict): Part name -> (B, N) mask of the last forward.
    """

    def __init__(self,
                 dispatch: Optional[str] = 'mlp',
                 dispatcher_cfg: dict = dict(),
                 num_prefix_tokens: int = 1,
                 **kwargs):
        super().__init__(**kwargs)
        if dispatch is not None and dispatch not in DISPATCH_PARTS:
            raise ValueError(
                f'dispatch={dispatch!r} is not one of {sorted(DISPATCH_PARTS)} or None')
        dim = kwargs['dim']
        gates_attention = any('attn' in GATED_SUBLAYERS[part]
                              for part in DISPATCH_PARTS.get(dispatch, ()))
        if gates_attention and type(self.attn) is not Attention:
            raise ValueError(
                f'dispatch={dispatch!r} gates the attention, which then runs plain global '
                f'attention among the active tokens; {type(self.attn).__name__} (windowed / '
                "relative-position attention) runs on every token: use dispatch='mlp' or None")
        self.dispatch = dispatch
        self.dispatchers = nn.ModuleDict({
            part: TokenDispatcher(dim, **dispatcher_cfg)
            for part in DISPATCH_PARTS.get(dispatch, ())
        })
        if self.adapter is not None:
            # Parameter order dispatchers, then adapter, as optimizer states saved by
            # earlier versions (matched by position on resume) have it.
            self._modules['adapter'] = self._modules.pop('adapter')
        self.num_prefix_tokens = num_prefix_tokens
        self.complete = False
        self.packed = True
        self.masks: Dict[str, torch.Tensor] = {}

    def reset_tuning_parts(self) -> None:
        """Initialise the adapter and the dispatchers afresh."""
        super().reset_tuning_parts()
        for dispatcher in self.dispatchers.values():
            dispatcher.reset_parameters()

    def _mask(self, part: str, x: torch.Tensor) -> Optional[torch.Tensor]:
        if self.complete or part not in self.dispatchers:
            return None
        mask = self.dispatchers[part](x, self.num_prefix_tokens)
        self.masks[part] = mask
        return mask

    def _runs_packed(self) -> bool:
        return not self.training and self.packed

    def forward(self, x: torch.Tensor, reduction=None, **attn_kwargs) -> torch.Tensor:
        """(B, N, C) -> (B, N', C); ``attn_kwargs`` go to an undispatched attention,
        a ``reduction`` (ToMe, EViT pass) shrinks N to N' after the attention."""
        self.masks = {}
        layer_active = self._mask('layer', x)
        attn_active = layer_active if layer_active is not None else self._mask('attn', x)
        h = self.norm1(x)
        if reduction is not None:
            attn_out = reduction.attend(self.attn, h)
        elif attn_active is None:
            attn_out = self.attn(h, **attn_kwargs)
        elif self._runs_packed():
            attn_out = packed_attention(self.attn, h, attn_active)
        else:
            attn_out = masked_attention(self.attn, h, attn_active)
        x = x + self.drop_path(self.ls1(attn_out))
        if reduction is not None:
            x = reduction.reduce(x)

        mlp_active = layer_active if layer_active is not None else self._mask('mlp', x)
        mlp = lambda t: self.ls2(self.mlp(self.norm2(t)))  # noqa: E731
        if mlp_active is not None and self._runs_packed():
            # The residual sum first, then the active rows added into it in place (x is
            # this block's own sum, read before the addition; docs/benchmarks.md).
            out = x + self.adapter(x) if self.adapter is not None else x
            return add_packed_rows(out, mlp, x, mlp_active)
        mlp_out = mlp(x) if mlp_active is None else masked_rows(mlp, x, mlp_active)
        out = x + self.drop_path(mlp_out)
        return out + self.adapter(x) if self.adapter is not None else out
