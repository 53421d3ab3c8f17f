"""DyT in tests: token dispatchers set to known states, and the parameters DyT trains."""
import torch


def spread_gates(model, std=1.0, bias=0.0):
    """Dispatcher weights that give each image its own activation rate."""
    torch.manual_seed(1)
    for block in model.dyt_blocks():
        for dispatcher in block.dispatchers.values():
            torch.nn.init.normal_(dispatcher.gate.weight, std=std)
            torch.nn.init.constant_(dispatcher.gate.bias, bias)


def trainable_names(model) -> set:
    """Names of the parameters of ``model`` that require gradients."""
    return {name for name, param in model.named_parameters() if param.requires_grad}


def dyt_param_names(num_layers: int, dispatched=('mlp', ), prefix: str = '') -> set:
    """The parameters DyT adds to a ViT, written out: in each block an adapter's
    down and up linears and one gate per dispatched part (``dispatched``, e.g.
    ('attn', 'mlp')), under ``prefix`` (e.g. 'backbone.')."""
    linears = [f'adapter.{name}' for name in ('down', 'up')]
    linears += [f'dispatchers.{part}.gate' for part in dispatched]
    return {
        f'{prefix}blocks.{i}.{linear}.{tensor}'
        for i in range(num_layers)
        for linear in linears
        for tensor in ('weight', 'bias')
    }


def rel_pos_names(num_layers: int, prefix: str = '') -> set:
    """The relative-position tables of a ViTDet's blocks (DyTViTDet trains them too)."""
    return {f'{prefix}blocks.{i}.attn.rel_pos_{hw}' for i in range(num_layers) for hw in 'hw'}


def assert_dyt_settings(backbone, dispatch, adapter, frozen: bool) -> None:
    """A backbone config dispatches ``dispatch`` (DyT), or is the baseline class
    without DyT's settings (None: AdaptFormer's ``AdapterViT*``, a full
    fine-tuning ``ViT*``), freezes the ViT or not, and has no adapter (``adapter``
    None) or one with the ``adapter`` entries."""
    assert backbone.get('dispatch') == dispatch
    assert backbone.get('freeze_pretrained', False) == frozen
    if dispatch is None:
        assert backbone.type.startswith('AdapterViT' if adapter is not None else 'ViT')
        assert not {'target_rate', 'dispatcher_cfg', 'keep_layers'} & set(backbone)
    if adapter is None:
        assert backbone.get('adapter_cfg') is None
    else:
        assert {k: backbone.adapter_cfg[k] for k in adapter} == adapter
