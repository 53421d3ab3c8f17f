"""Per-layer construction of the ViT (``block_fn``, ``layer_cfgs``) and the tuning
hierarchy built on it: ViT -> AdapterViT -> DyTViT / DynamicViT."""
import ast
from typing import List

import pytest
import torch

from helpers.models import TINY_ARCH, images, tiny
from helpers.tools import REPO
from mmvitdyn.checkpoint import load_pretrained, to_classifier
from mmvitdyn.models import AdapterViT, DynamicViT, DyTViT, DyTViTDet, ViT
from mmvitdyn.models.layers import (AdapterBlock, Attention, DyTBlock, Mlp, PolicyAttention,
                                    RelPosAttention)


def test_layer_cfgs_set_each_block():
    """One dict per block reaches that block's constructor, on top of the ViT's defaults."""
    layer_cfgs = [dict(num_heads=1), dict(num_heads=2, head_dim=4), dict(layer_scale_init=0.5)]
    model = tiny(ViT, layer_cfgs=layer_cfgs)
    assert [(b.attn.num_heads, b.attn.head_dim) for b in model.blocks] == [(1, 32), (2, 4), (4, 8)]
    assert model.blocks[1].attn.qkv.weight.shape == (3 * 2 * 4, 32)
    assert model.blocks[2].ls1.gamma.tolist() == [0.5] * 32
    assert isinstance(model.blocks[0].ls1, torch.nn.Identity)
    assert model(images(2))[0].shape == (2, 32)


def test_block_fn_and_layer_factories():
    """``block_fn`` builds every block; ``attn_layer`` / ``mlp_layer`` entries build its parts."""
    built = []

    def mlp_layer(dim, hidden_dim, drop, act_cfg):
        built.append((dim, hidden_dim, drop, act_cfg['type']))
        return Mlp(dim, hidden_dim, drop, act_cfg)

    model = tiny(
        ViT,
        block_fn=AdapterBlock,
        drop_rate=0.25,
        layer_cfgs=dict(
            adapter_cfg=dict(bottleneck=4), mlp_layer=mlp_layer, attn_layer=PolicyAttention))
    assert all(type(b) is AdapterBlock and type(b.attn) is PolicyAttention for b in model.blocks)
    assert built == [(32, 64, 0.25, 'GELU')] * 3


def test_layer_cfgs_of_the_wrong_length_or_clashing_keys_are_named():
    with pytest.raises(ValueError, match=r'layer_cfgs must be a dict or 3 dicts \(one per block\)'):
        tiny(ViT, layer_cfgs=[dict(), dict()])
    with pytest.raises(ValueError, match=r"layer_cfgs\[0\] sets \['dispatch'\], which DyTViT"):
        tiny(DyTViT, layer_cfgs=dict(dispatch='attn'))
    with pytest.raises(
            ValueError,
            match=r"layer_cfgs\[1\] sets \['attn_layer'\], which "
            r'DyTViTDet \(attention\) sets'):
        tiny(
            DyTViTDet,
            global_indices=(2, ),
            layer_cfgs=[dict(), dict(attn_layer=Attention),
                        dict()])


def test_the_hierarchy_adds_and_never_turns_off():
    """AdaptFormer is the common parent; DyT adds dispatch, DynamicViT adds predictors."""
    assert issubclass(DyTViT, AdapterViT) and issubclass(DynamicViT, AdapterViT)
    assert not issubclass(DynamicViT, DyTViT)
    adapter = tiny(AdapterViT, adapter_cfg=dict(bottleneck=4))
    assert all(type(b) is AdapterBlock for b in adapter.blocks)
    dyt = tiny(DyTViT, adapter_cfg=dict(bottleneck=4), keep_layers=1)
    assert all(type(b) is DyTBlock for b in dyt.blocks)
    assert [b.dispatch for b in dyt.blocks] == [None, 'mlp', 'mlp']
    dynamic = tiny(DynamicViT, adapter_cfg=dict(bottleneck=4), prune_loc=(1, ))
    assert all(type(b.attn) is PolicyAttention for b in dynamic.blocks)


@pytest.mark.parametrize('model_cls,extra', [(AdapterViT, dict()), (DyTViT, dict(dispatch=None))])
def test_adaptformer_equals_the_hand_written_block(model_cls, extra):
    """x + Attn(LN1 x) then h + MLP(LN2 h) + s * up(relu(down(h))), on identical weights."""
    model = tiny(model_cls, adapter_cfg=dict(bottleneck=4, scale=0.5, dropout=0.0), **extra)
    plain = tiny(ViT, out_type='raw')
    plain.load_state_dict(model.state_dict(), strict=False)
    for block in model.blocks:
        torch.nn.init.normal_(block.adapter.up.weight, std=0.2)
    x = images(2)
    tokens, _ = plain.embed(x)
    for block, plain_block in zip(model.blocks, plain.blocks):
        h = tokens + plain_block.attn(plain_block.norm1(tokens))
        a = block.adapter
        tokens = h + plain_block.mlp(plain_block.norm2(h)) + 0.5 * a.up(torch.relu(a.down(h)))
    expected = plain.norm(tokens)[:, 0]
    torch.testing.assert_close(model(x)[0], expected, atol=1e-5, rtol=1e-5)


def test_trainable_set_is_decided_once_after_construction():
    """Frozen: the pretrained ViT; trained: adapters, dispatchers, DynamicViT's predictors
    (added after construction), ViTDet's rel-pos tables and ``unfreeze`` entries."""

    def trainable(model):
        return {
            n.split('.')[0] if not n.startswith('blocks.') else n.split('.', 2)[2]
            for n, p in model.named_parameters() if p.requires_grad
        }

    adapter = tiny(AdapterViT, adapter_cfg=dict(bottleneck=4), unfreeze=['norm'])
    assert trainable(adapter) == {
        'adapter.down.weight', 'adapter.down.bias', 'adapter.up.weight', 'adapter.up.bias', 'norm'
    }
    dyt = tiny(DyTViT, adapter_cfg=dict(bottleneck=4))
    assert trainable(dyt) == trainable(tiny(AdapterViT, adapter_cfg=dict(
        bottleneck=4))) | {'dispatchers.mlp.gate.weight', 'dispatchers.mlp.gate.bias'}
    dynamic = tiny(DynamicViT, adapter_cfg=dict(bottleneck=4), prune_loc=(1, ))
    assert 'predictors' in trainable(dynamic)
    det = tiny(DyTViTDet, adapter_cfg=dict(bottleneck=4), global_indices=(2, ), window_size=2)
    assert {'attn.rel_pos_h', 'attn.rel_pos_w'} <= trainable(det)
    assert not {'attn.rel_pos_h', 'attn.rel_pos_w'} & trainable(
        tiny(
            DyTViTDet,
            adapter_cfg=dict(bottleneck=4),
            global_indices=(2, ),
            window_size=2,
            train_rel_pos=False))
    full = tiny(DyTViT, dispatch=None, adapter_cfg=None, freeze_pretrained=False)
    assert all(p.requires_grad for p in full.parameters())


def test_unfreeze_must_be_a_list():
    with pytest.raises(ValueError, match=r"unfreeze='norm' must be a list .* e.g. \['norm'\]"):
        tiny(AdapterViT, unfreeze='norm')
    with pytest.raises(ValueError, match="unfreeze entry 'nrm' matches no parameter"):
        tiny(AdapterViT, unfreeze=['nrm'])


def test_vitdet_blocks_get_their_windows_from_layer_cfgs():
    det = tiny(DyTViTDet, global_indices=(-1, ), window_size=2, adapter_cfg=dict(bottleneck=4))
    assert all(type(b.attn) is RelPosAttention for b in det.blocks)
    assert [b.attn.window_size for b in det.blocks] == [2, 2, 0]
    assert det.global_indices == (2, )


def test_forward_block_is_the_one_loop():
    """Overriding the per-block step changes the forward of every output type."""
    calls = []

    class Recording(ViT):

        def forward_block(self, index, x, block_kwargs):
            calls.append((index, tuple(x.shape)))
            return super().forward_block(index, x, block_kwargs)

    model = tiny(Recording, out_indices=(0, 2), out_type='featmap')
    outs = model(images(2))
    assert calls == [(i, (2, 17, 32)) for i in range(3)]
    assert [tuple(o.shape) for o in outs] == [(2, 32, 4, 4)] * 2


@pytest.mark.parametrize('model_cls,kwargs,new', [
    (DynamicViT, dict(prune_loc=(1, )), {'predictors', 'adapter'}),
    (DyTViT,
     dict(
         arch=dict(TINY_ARCH, num_layers=4),
         out_type='featmap',
         out_indices=(0, 1, 2, 3),
         pyramid=dict(type='RescalePyramid')), {'pyramid', 'adapter', 'dispatchers'}),
    (DyTViTDet, dict(global_indices=(2, ), window_size=2), {'attn', 'adapter', 'dispatchers'}),
])
def test_a_plain_vit_checkpoint_leaves_no_gap_in_the_parts_a_model_adds(
        tmp_path, model_cls, kwargs, new):
    """The model says which parts it creates on purpose, so loading a plain ViT
    reports them as new (info) and nothing as missing (a warning)."""
    torch.save(tiny(ViT, arch=kwargs.get('arch', TINY_ARCH)).state_dict(), tmp_path / 'vit.pth')
    model = tiny(model_cls, adapter_cfg=dict(bottleneck=4), **kwargs)
    report = load_pretrained(model, str(tmp_path / 'vit.pth'))
    assert len(model(images(1))) in (1, 4)  # it runs: one output, or one map per level
    assert report.missing == []
    assert {
        k.split('.')[0] if not k.startswith('blocks.') else k.split('.')[2]
        for k in report.missing_new
    } == new


def assigns_self_before_super_init(init: ast.FunctionDef) -> List[str]:
    """Attributes ``__init__`` sets on ``self`` in statements before ``super().__init__``."""
    found = []
    for statement in init.body:
        calls = [
            n for n in ast.walk(statement) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute) and n.func.attr == '__init__'
        ]
        if calls:
            return found
        found += [
            n.attr for n in ast.walk(statement)
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
            and isinstance(n.value, ast.Name) and n.value.id == 'self'
        ]
    return found


@pytest.mark.parametrize(
    'path', [
        *sorted((REPO / 'mmvitdyn/models/backbones').glob('*.py')),
        *sorted((REPO / 'mmvitdyn/learngene/descendants').glob('*.py')),
    ],
    ids=lambda p: p.name)
def test_no_backbone_sets_attributes_before_module_init(path):
    """Construction is by arguments: nothing must exist on a backbone before
    ``nn.Module.__init__`` (the seam a build hook reading attributes needed)."""
    inits = [
        node for cls in ast.walk(ast.parse(path.read_text())) if isinstance(cls, ast.ClassDef)
        for node in cls.body if isinstance(node, ast.FunctionDef) and node.name == '__init__'
    ]
    assert {
        init.lineno: assigns_self_before_super_init(init)
        for init in inits
    } == {
        init.lineno: []
        for init in inits
    }


def test_parameter_groups_are_one_matcher_for_depth_and_classifier_keys():
    """The stem (everything before the blocks, whatever the family), the blocks by
    index and the rest: layer decay and checkpoint conversion read the same groups."""
    model = tiny(ViT, dist_token=True, num_reg_tokens=2, pre_norm=True, layer_scale_init_value=0.1)
    names = [name for name, _ in model.named_parameters()]
    stem = {n for n in names if model.is_stem_param(n)}
    assert stem == {
        'cls_token', 'dist_token', 'reg_token', 'pos_embed', 'patch_embed.proj.weight',
        'norm_pre.weight', 'norm_pre.bias'
    }
    depths = {n: model.get_layer_depth('backbone.' + n, 'backbone.')[0] for n in names}
    assert {depths[n] for n in stem} == {0}
    assert depths['blocks.2.ls2.gamma'] == 3 and depths['norm.weight'] == 4
    assert model.get_layer_depth('head.fc.weight', 'backbone.') == (4, 5)
    state = {**model.state_dict(), 'head.weight': torch.zeros(1), 'pre_logits.fc.weight': 0}
    assert set(to_classifier(state)) == {f'backbone.{n}'
                                         for n in model.state_dict()} | {'head.fc.weight'}


def test_no_weight_decay_names_parameters():
    det = tiny(DyTViTDet, global_indices=(2, ), window_size=2)
    names = {name for name, _ in det.named_parameters()}
    assert det.no_weight_decay() == {'pos_embed'} | {
        f'blocks.{i}.attn.rel_pos_{a}'
        for i in range(3)
        for a in 'hw'
    }
    assert det.no_weight_decay() <= names
    vit = tiny(ViT)
    assert vit.no_weight_decay() & {n
                                    for n, _ in vit.named_parameters()} == {
                                        'cls_token', 'pos_embed'
                                    }


def test_dyt_blocks_keep_their_parameter_order():
    """Dispatchers before the adapter, as optimizer states of earlier versions (matched by
    position on resume) have them."""
    block = tiny(DyTViT, adapter_cfg=dict(bottleneck=4)).blocks[0]
    order = list(dict.fromkeys(name.split('.')[0] for name, _ in block.named_parameters()))
    assert order == ['norm1', 'attn', 'norm2', 'mlp', 'dispatchers', 'adapter']
    full = tiny(DyTViT, dispatch=None, adapter_cfg=None, freeze_pretrained=False).blocks[0]
    assert full.adapter is None


def test_dyt_takes_its_own_block_class():

    class Recorded(DyTBlock):
        pass

    model = tiny(DyTViT, block_fn=Recorded, adapter_cfg=dict(bottleneck=4))
    assert all(type(b) is Recorded and b.dispatch == 'mlp' for b in model.blocks)
