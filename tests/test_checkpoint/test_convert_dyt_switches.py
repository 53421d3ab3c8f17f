"""Official DyT checkpoints with each switch its scripts leave off convert, load
strictly into DyTViT, and compute what the official model computes.

The checkpoints are written by hand in the layout of the official code
(github.com/NUS-HPC-AI-Lab/Dynamic-Tuning, ``models/vision_transformer_IN21K.py``,
``models/dynamic_adapter.py`` and the segmentation backbone, which alone honours
``keep_layers``), and the reference is that model's evaluation forward written
here in plain torch.
"""
import pytest
import torch
import torch.nn.functional as F

from helpers.models import IMG_SIZE, PATCH_SIZE, TINY_ARCH, images, tiny
from helpers.tools import load_tool
from mmvitdyn.checkpoint import convert_dyt, describe_checkpoint
from mmvitdyn.models import DyTViT

C, H, MLP, DEPTH = (
    TINY_ARCH[k] for k in ('embed_dims', 'num_heads', 'feedforward_channels', 'num_layers'))
D, N, BOTTLENECK = C // H, (IMG_SIZE // PATCH_SIZE)**2 + 1, 4
FIXED_SCALE = 0.7


def official_checkpoint(layer_norm=None, learnable=False, keep_layers=0, seed=0):
    """Random tensors under the official names; ``layer_norm`` 'in'/'out' adds the
    adapter LayerNorm, ``learnable`` the adapter scale, and blocks < ``keep_layers``
    get no ``mlp_token_select`` (the official ``select_config.keep_layers``)."""
    gen = torch.Generator().manual_seed(seed)

    def r(*shape, offset=0.):
        return offset + 0.3 * torch.randn(shape, generator=gen)

    state = {
        'patch_embed.proj.weight': r(C, 3, PATCH_SIZE, PATCH_SIZE),
        'patch_embed.proj.bias': r(C),
        'cls_token': r(1, 1, C),
        'pos_embed': r(1, N, C),
        'norm.weight': r(C, offset=1.),
        'norm.bias': r(C),
        'head.weight': r(5, C),
        'head.bias': r(5),
    }
    for i in range(DEPTH):
        b = f'blocks.{i}.'
        shapes = {
            'norm1': (C, ),
            'attn.qkv': (3 * C, C),
            'attn.proj': (C, C),
            'norm2': (C, ),
            'mlp.fc1': (MLP, C),
            'mlp.fc2': (C, MLP),
            'adaptmlp.down_proj': (BOTTLENECK, C),
            'adaptmlp.up_proj': (C, BOTTLENECK),
        }
        if layer_norm is not None:
            shapes['adaptmlp.adapter_layer_norm_before'] = (C, )
        if i >= keep_layers:
            shapes['mlp_token_select.mlp_head'] = (1, C)
        for name, shape in shapes.items():
            state[f'{b}{name}.weight'] = r(*shape, offset=1. if 'norm' in name else 0.)
            state[f'{b}{name}.bias'] = r(shape[0])
        if learnable:
            state[f'{b}adaptmlp.scale'] = r(1, offset=1.)
    return state


def official_blocks(state, img, layer_norm=None, keep_layers=0):
    """The official model's block outputs (B, N, C) in evaluation."""
    t = state.__getitem__

    def linear(x, name):
        return F.linear(x, t(name + '.weight'), t(name + '.bias'))

    def norm(x, name, eps=1e-6):  # the ViT's LayerNorms: eps 1e-6; the adapter's: 1e-5
        return F.layer_norm(x, (C, ), t(name + '.weight'), t(name + '.bias'), eps)

    x = F.conv2d(img, t('patch_embed.proj.weight'), t('patch_embed.proj.bias'), stride=PATCH_SIZE)
    x = torch.cat([t('cls_token').expand(len(img), -1, -1), x.flatten(2).transpose(1, 2)], 1)
    x = x + t('pos_embed')
    outs = []
    for i in range(DEPTH):
        b = f'blocks.{i}.'
        qkv = linear(norm(x, b + 'norm1'), b + 'attn.qkv').reshape(len(img), N, 3, H, D)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)
        heads = (q @ k.transpose(-2, -1) * D**-0.5).softmax(-1) @ v
        x = x + linear(heads.transpose(1, 2).reshape(len(img), N, C), b + 'attn.proj')
        mlp = linear(F.gelu(linear(norm(x, b + 'norm2'), b + 'mlp.fc1')), b + 'mlp.fc2')
        if i >= keep_layers:  # sigmoid(logit) > 0.5 for patch tokens, class token kept
            mask = (linear(x, b + 'mlp_token_select.mlp_head') > 0).float()
            mask[:, 0] = 1.
            mlp = mlp * mask
        ln = b + 'adaptmlp.adapter_layer_norm_before'
        h = norm(x, ln, eps=1e-5) if layer_norm == 'in' else x
        scale = state.get(b + 'adaptmlp.scale', FIXED_SCALE)
        up = linear(F.relu(linear(h, b + 'adaptmlp.down_proj')), b + 'adaptmlp.up_proj') * scale
        if layer_norm == 'out':
            up = norm(up, ln, eps=1e-5)
        x = x + mlp + up
        outs.append(x)
    return outs


def official_forward(state, img, layer_norm=None, keep_layers=0):
    """The official classification model's class-token feature (no head)."""
    x = official_blocks(state, img, layer_norm, keep_layers)[-1]
    return F.layer_norm(x, (C, ), state['norm.weight'], state['norm.bias'], 1e-6)[:, 0]


SWITCHES = [
    dict(),
    dict(layer_norm='in'),
    dict(layer_norm='out'),
    dict(learnable=True),
    dict(keep_layers=1),
    dict(layer_norm='out', learnable=True, keep_layers=2),
]


@pytest.mark.parametrize('switches', SWITCHES)
def test_official_checkpoint_with_each_switch_loads_strictly_and_computes_the_same(switches):
    state = official_checkpoint(**switches)
    converted = convert_dyt(state)
    layer_norm, keep_layers = switches.get('layer_norm'), switches.get('keep_layers', 0)
    scale = 'learnable' if switches.get('learnable') else FIXED_SCALE
    model = tiny(
        DyTViT,
        keep_layers=keep_layers,
        adapter_cfg=dict(bottleneck=BOTTLENECK, scale=scale, dropout=0.1, layer_norm=layer_norm))
    backbone = {k: v for k, v in converted.items() if not k.startswith('head.')}
    model.load_state_dict(backbone, strict=True)
    info = describe_checkpoint(converted)
    assert (info['keep_layers'], info['adapter_scale'],
            info['adapter_layer_norm']) == (keep_layers,
                                            'learnable' if switches.get('learnable') else None,
                                            layer_norm is not None)
    img = images(3)
    expected = official_forward(state, img, layer_norm, keep_layers)
    actual = model.eval()(img)[0]
    torch.testing.assert_close(actual, expected, atol=1e-5, rtol=1e-5)
    masks = model.dispatch_masks()
    assert all(not masks[i] for i in range(keep_layers))
    rates = torch.stack([masks[i]['mlp'].mean() for i in range(keep_layers, DEPTH)])
    assert ((rates > 0) & (rates < 1)).all()  # the masks really select: the test can see them


def test_official_segmentation_backbone_loads_with_its_pyramid():
    """The segmentation backbone: ``keep_layers`` honoured, no final norm, maps of
    blocks rescaled x4 (fpn1: transposed conv, GELU, transposed conv), x2 (fpn2),
    x1 (fpn3, no weights)."""
    state = {
        k: v
        for k, v in official_checkpoint(keep_layers=1).items()
        if not k.startswith(('norm.', 'head.'))
    }
    gen = torch.Generator().manual_seed(2)
    for name in ('fpn1.0', 'fpn1.2', 'fpn2.0'):
        state[name + '.weight'] = 0.2 * torch.randn(C, C, 2, 2, generator=gen)
        state[name + '.bias'] = 0.2 * torch.randn(C, generator=gen)
    model = tiny(
        DyTViT,
        keep_layers=1,
        adapter_cfg=dict(bottleneck=BOTTLENECK, scale=FIXED_SCALE),
        out_type='featmap',
        out_indices=(0, 1, 2),
        final_norm=False,
        pyramid=dict(type='RescalePyramid', rescales=(4, 2, 1)))
    model.load_state_dict(convert_dyt(state), strict=True)
    img = images(2)
    grid = IMG_SIZE // PATCH_SIZE
    maps = [
        x[:, 1:].transpose(1, 2).reshape(2, C, grid, grid)
        for x in official_blocks(state, img, keep_layers=1)
    ]

    def up(x, name):
        return F.conv_transpose2d(x, state[name + '.weight'], state[name + '.bias'], stride=2)

    expected = (up(F.gelu(up(maps[0], 'fpn1.0')), 'fpn1.2'), up(maps[1], 'fpn2.0'), maps[2])
    for actual, reference in zip(model.eval()(img), expected):
        torch.testing.assert_close(actual, reference, atol=1e-5, rtol=1e-5)


def test_in_and_out_layer_norms_differ_on_the_same_checkpoint():
    """The key ``adapter_layer_norm_before`` serves both options: the config chooses."""
    state = official_checkpoint(layer_norm='in')
    img = images(2)
    assert not torch.allclose(
        official_forward(state, img, 'in'), official_forward(state, img, 'out'), atol=1e-3)


@pytest.mark.parametrize('edit,message', [
    (lambda s: s.update({'blocks.0.attn.relative_position_bias_table': torch.zeros(9, H)}),
     r"'blocks.0.attn.relative_position_bias_table'.*use_rel_pos_bias"),
    (lambda s: s.update({'blocks.1.adaptmlp.gate.weight': torch.zeros(C)}),
     r"\['blocks.1.adaptmlp.gate.weight'\] are not parts mmvitdyn maps"),
    (lambda s: s.update({'blocks.1.mlp_token_select.mlp_head.weight': torch.zeros(2, C)}),
     r"\['blocks.1.dispatchers.mlp.gate.weight'\].*num_sub_layer > 1"),
    (lambda s: [s.pop(f'blocks.1.mlp_token_select.mlp_head.{n}') for n in ('weight', 'bias')],
     r'dispatchers \(blocks.\*.mlp_token_select\) in blocks \[0, 2\] of 3: keep_layers=k'),
    (lambda s: s.update({'blocks.1.adaptmlp.scale': torch.ones(1)}),
     r"adapter.scale in blocks \[1\] but adapters in blocks \[0, 1, 2\]: "
     r"adapter_cfg.scale='learnable'"),
    (lambda s: s.update({
        f'blocks.2.adaptmlp.adapter_layer_norm_before.{n}': torch.ones(C)
        for n in ('weight', 'bias')
    }), r"adapter.norm.weight in blocks \[2\].*adapter_cfg.layer_norm='in' or 'out'"),
])
def test_what_no_switch_gives_is_refused_by_key(edit, message):
    state = official_checkpoint()
    edit(state)
    with pytest.raises(ValueError, match=message):
        convert_dyt(state)


def test_converter_tool_names_the_switches_a_checkpoint_needs(tmp_path, capsys):
    state = official_checkpoint(layer_norm='out', learnable=True, keep_layers=1)
    torch.save(dict(model=state), tmp_path / 'dyt.pth')
    load_tool('model_converters/dyt2mmvitdyn.py').main(
        [str(tmp_path / 'dyt.pth'), str(tmp_path / 'out.pth')])
    out = capsys.readouterr().out
    assert ("DyTViT needs: keep_layers=1, adapter_cfg.scale='learnable', "
            "adapter_cfg.layer_norm='in' or 'out'") in out
    torch.save(dict(model=official_checkpoint()), tmp_path / 'plain.pth')
    load_tool('model_converters/dyt2mmvitdyn.py').main(
        [str(tmp_path / 'plain.pth'), str(tmp_path / 'out.pth')])
    assert ('DyTViT needs: keep_layers=0, adapter_cfg.scale=<the value it was trained with: '
            'not stored>, adapter_cfg.layer_norm=None') in capsys.readouterr().out
