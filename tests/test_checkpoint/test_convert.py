"""Foreign checkpoints convert to mmvitdyn keys, and load with a plain report.

Fake checkpoints are built from tiny random models in each foreign layout:
mmpretrain's own VisionTransformer, timm names (which our ViT shares), the
Google Flax ``.npz`` layout written by hand, and the official DyT names.
"""
import logging

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from mmengine.registry import DefaultScope
from mmpretrain.models import VisionTransformer
from mmpretrain.registry import MODELS

from helpers.checkpoint_formats import ADAPTER, fake_jax, official_dyt, tiny_dyt
from helpers.dyt import dyt_param_names, trainable_names
from helpers.models import IMG_SIZE, PATCH_SIZE, TINY_ARCH, images, tiny, tiny_backbone_cfg
from helpers.tools import load_tool
from mmvitdyn.checkpoint import (convert_dyt, convert_jax, convert_mmpretrain, convert_timm,
                                 describe_checkpoint, detect_format, jax_num_heads, load_pretrained,
                                 load_state_dict_file, to_classifier)
from mmvitdyn.models import resize_pos_embed

C, H, MLP, DEPTH = (
    TINY_ARCH[k] for k in ('embed_dims', 'num_heads', 'feedforward_channels', 'num_layers'))
D, PATCH, GRID = C // H, PATCH_SIZE, IMG_SIZE // PATCH_SIZE


def randomize(model, seed=0):
    """Perturb every parameter (norms and biases too), so misplaced tensors show."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for param in model.parameters():
            param.add_(torch.randn(param.shape, generator=gen) * 0.1)
    model.eval()
    return model


def jax_reference(arrays, img):
    """The Flax ViT's class-token feature, computed from the arrays directly."""
    t = lambda name: torch.from_numpy(arrays[name])  # noqa: E731

    def norm(x, name):
        return F.layer_norm(x, (C, ), t(f'{name}/scale'), t(f'{name}/bias'), eps=1e-6)

    patches = img.unfold(2, PATCH, PATCH).unfold(3, PATCH, PATCH)  # B, 3, gh, gw, p, p
    x = torch.einsum('bcyxhw,hwco->byxo', patches, t('embedding/kernel')).flatten(1, 2)
    x = x + t('embedding/bias')
    x = torch.cat([t('cls').expand(len(img), -1, -1), x], 1)
    x = x + t('Transformer/posembed_input/pos_embedding')
    for i in range(DEPTH):
        block = f'Transformer/encoderblock_{i}/'
        mha = block + 'MultiHeadDotProductAttention_1/'
        h = norm(x, block + 'LayerNorm_0')
        q, k, v = (
            torch.einsum('bnc,chd->bhnd', h, t(f'{mha}{n}/kernel')) + t(f'{mha}{n}/bias')[:, None]
            for n in ('query', 'key', 'value'))
        heads = (q @ k.transpose(-2, -1) / D**0.5).softmax(-1) @ v
        x = x + torch.einsum('bhnd,hdc->bnc', heads, t(mha + 'out/kernel')) + t(mha + 'out/bias')
        h = norm(x, block + 'LayerNorm_2')
        h = F.gelu(h @ t(block + 'MlpBlock_3/Dense_0/kernel') +
                   t(block + 'MlpBlock_3/Dense_0/bias'))
        x = x + h @ t(block + 'MlpBlock_3/Dense_1/kernel') + t(block + 'MlpBlock_3/Dense_1/bias')
    return norm(x, 'Transformer/encoder_norm')[:, 0]


def test_detect_format():
    mmpre = VisionTransformer(arch=TINY_ARCH, img_size=IMG_SIZE, patch_size=PATCH).state_dict()
    assert detect_format(fake_jax()) == 'jax'
    assert detect_format(fake_jax('opt/target/')) == 'jax'
    assert detect_format(mmpre) == 'mmpretrain'
    assert detect_format({f'backbone.{k}': v for k, v in mmpre.items()}) == 'mmpretrain'
    assert detect_format({**tiny().state_dict(), 'head.weight': torch.zeros(1)}) == 'timm'
    assert detect_format(tiny_dyt().state_dict()) == 'mmvitdyn'
    assert detect_format(official_dyt(tiny_dyt())) == 'dyt'
    with pytest.raises(ValueError, match="prefix='backbone.'"):
        detect_format({f'backbone.{k}': v for k, v in tiny().state_dict().items()})


@pytest.mark.parametrize('prefix', [None, 'backbone.'])
def test_mmpretrain_vit_gives_the_same_outputs(tmp_path, prefix):
    torch.manual_seed(0)
    src = randomize(
        VisionTransformer(
            arch=TINY_ARCH,
            img_size=IMG_SIZE,
            patch_size=PATCH,
            out_type='cls_token',
            final_norm=True))
    state = {f'backbone.{k}': v for k, v in src.state_dict().items()}
    state['head.layers.head.weight'] = torch.zeros(5, C)
    torch.save(dict(meta=dict(), state_dict=state), tmp_path / 'mmpretrain.pth')

    dst = tiny(out_type='cls_token', final_norm=True)
    report = load_pretrained(dst, str(tmp_path / 'mmpretrain.pth'), prefix=prefix)
    assert report.format == 'mmpretrain' and not report.missing
    assert len(report.loaded) == len(dst.state_dict())
    assert report.unexpected == ([] if prefix else ['head.layers.head.weight'])
    img = images(2)
    torch.testing.assert_close(dst(img)[0], src(img)[0])


def test_mmpretrain_layer_scale_is_refused():
    src = VisionTransformer(
        arch=TINY_ARCH, img_size=IMG_SIZE, patch_size=PATCH, layer_scale_init_value=0.1)
    with pytest.raises(ValueError, match=r"'layers.0.attn.gamma1.weight'.*layer scale"):
        convert_mmpretrain(src.state_dict())


def test_timm_deit_checkpoint_loads_every_tensor(tmp_path):
    src = randomize(tiny())
    state = {**src.state_dict(), 'head.weight': torch.zeros(5, C), 'head.bias': torch.zeros(5)}
    torch.save(dict(model=state, epoch=3), tmp_path / 'deit.pth')  # DeiT's wrapper
    dst = tiny()
    report = load_pretrained(dst, str(tmp_path / 'deit.pth'))
    assert report.format == 'timm' and report.unexpected == ['head.weight', 'head.bias']
    for key, value in src.state_dict().items():
        assert torch.equal(dst.state_dict()[key], value), key


def test_distilled_deit_keeps_or_drops_its_token():
    state = dict(tiny().state_dict())
    pos = torch.randn(1, 2 + GRID * GRID, C)
    state['dist_token'], state['pos_embed'] = torch.randn(1, 1, C), pos
    state['head_dist.weight'] = torch.zeros(5, C)
    kept = convert_timm(state)  # for ViT(dist_token=True)
    assert torch.equal(kept['dist_token'], state['dist_token'])
    assert torch.equal(kept['pos_embed'], pos)
    tiny(dist_token=True).load_state_dict(kept, strict=False)
    out = convert_timm(state, drop_dist_token=True)
    assert 'dist_token' not in out and 'head_dist.weight' in out
    torch.testing.assert_close(out['pos_embed'], torch.cat([pos[:, :1], pos[:, 2:]], 1))
    tiny().load_state_dict(out, strict=False)


@pytest.mark.parametrize('key,feature', [('blocks.0.attn.q_norm.weight', 'query/key norm'),
                                         ('blocks.0.attn.k_norm.weight', 'query/key norm')])
def test_timm_variants_our_vit_lacks_are_refused(key, feature):
    with pytest.raises(ValueError, match=f'{key!r}.*{feature}'):
        convert_timm({**tiny().state_dict(), key: torch.zeros(C)})


def test_jax_npz_gives_the_flax_model_outputs(tmp_path):
    arrays = fake_jax()
    np.savez(tmp_path / 'ViT-tiny.npz', **arrays)
    dst = tiny()
    report = load_pretrained(dst, str(tmp_path / 'ViT-tiny.npz'))
    assert report.format == 'jax' and not report.missing
    assert sorted(report.unexpected) == ['head.bias', 'head.weight']
    # HWIO -> OIHW patch kernel.
    torch.testing.assert_close(dst.patch_embed.proj.weight.detach(),
                               torch.from_numpy(arrays['embedding/kernel']).permute(3, 2, 0, 1))
    img = images(2)
    torch.testing.assert_close(dst(img)[0], jax_reference(arrays, img), atol=1e-5, rtol=1e-5)


def test_jax_prefixes_heads_and_layouts():
    plain, prefixed = convert_jax(fake_jax()), convert_jax(fake_jax('opt/target/'))
    assert plain.keys() == prefixed.keys()
    assert all(torch.equal(plain[k], prefixed[k]) for k in plain)
    assert jax_num_heads(fake_jax('opt/target/')) == H
    torch.testing.assert_close(plain['head.weight'], torch.from_numpy(fake_jax()['head/kernel']).T)
    assert 'extra/array' in convert_jax({**fake_jax(), 'extra/array': np.zeros(3)})
    scanned = {
        'embedding/kernel': np.zeros((PATCH, PATCH, 3, C)),
        'Transformer/encoderblock/LayerNorm_0/scale': np.zeros((DEPTH, C))
    }
    with pytest.raises(ValueError, match='scanned'):
        convert_jax(scanned)
    with pytest.raises(ValueError, match="'cls'"):
        convert_jax({k: v for k, v in fake_jax().items() if k != 'cls'})


def test_official_dyt_checkpoint_places_adapters_and_dispatchers(tmp_path):
    torch.manual_seed(0)
    src = randomize(tiny_dyt())
    converted = convert_dyt(official_dyt(src))
    assert converted.keys() - src.state_dict().keys() == {'head.weight', 'head.bias'}
    for key, value in src.state_dict().items():
        assert torch.equal(converted[key], value), key

    torch.save(dict(model=official_dyt(src), args=None), tmp_path / 'dyt.pth')
    dst = tiny_dyt()
    report = load_pretrained(dst, str(tmp_path / 'dyt.pth'))
    assert report.format == 'dyt' and not report.missing and not report.missing_new
    img = images(2)
    torch.testing.assert_close(dst(img)[0], src(img)[0])


def test_dyt_init_cfg_loads_the_vit_and_reinitialises_dyt_parts(tmp_path):
    src = randomize(tiny_dyt())
    torch.save(dict(model=official_dyt(src)), tmp_path / 'dyt.pth')
    # tiny() runs init_weights: it loads the checkpoint, then initialises the DyT parts.
    dst = tiny_dyt(init_cfg=dict(type='Pretrained', checkpoint=str(tmp_path / 'dyt.pth')))
    state = dst.state_dict()
    loaded = {key for key, value in src.state_dict().items() if torch.equal(state[key], value)}
    assert loaded == src.state_dict().keys() - dyt_param_names(DEPTH)
    assert all(not b.adapter.up.weight.any() for b in dst.blocks)  # zero-initialised again


def test_shape_mismatches_are_listed(tmp_path):
    torch.save(tiny().state_dict(), tmp_path / 'vit.pth')
    wide = tiny(arch=dict(TINY_ARCH, feedforward_channels=2 * MLP))
    # fc1 weight and bias and fc2 weight of each block
    with pytest.raises(ValueError, match=f'{3 * DEPTH} shape mismatch') as error:
        load_pretrained(wide, str(tmp_path / 'vit.pth'))
    line = f'blocks.0.mlp.fc1.weight: checkpoint ({MLP}, {C}) vs model ({2 * MLP}, {C})'
    assert line in str(error.value)
    assert 'blocks.1.mlp.fc2.weight' in str(error.value)


def test_pos_embed_is_resized(tmp_path):
    src = randomize(tiny())
    torch.save(src.state_dict(), tmp_path / 'vit.pth')
    dst = tiny(img_size=64)
    load_pretrained(dst, str(tmp_path / 'vit.pth'))
    torch.testing.assert_close(dst.pos_embed.detach(),
                               resize_pos_embed(src.pos_embed.detach(), (GRID, GRID), (8, 8)))


def test_missing_and_ignored_keys_are_reported(tmp_path, log):
    state = {k: v for k, v in tiny().state_dict().items() if not k.startswith('norm.')}
    state['head.weight'] = torch.zeros(5, C)
    torch.save(state, tmp_path / 'vit.pth')
    report = load_pretrained(tiny_dyt(), str(tmp_path / 'vit.pth'))
    assert report.missing == ['norm.weight', 'norm.bias'] and report.unexpected == ['head.weight']
    assert set(report.missing_new) == dyt_param_names(DEPTH)
    warnings = [r.getMessage() for r in log if r.levelno == logging.WARNING]
    infos = [r.getMessage() for r in log if r.levelno == logging.INFO]
    assert any('norm.weight' in m and 'missing' in m for m in warnings)
    assert any(f'blocks.*.adapter.down.weight (x{DEPTH})' in m for m in infos)
    assert any('head.weight' in m and 'ignored' in m for m in infos)
    assert not any('adapter' in m for m in warnings)


def test_prefix_and_runner_checkpoints(tmp_path):
    src = randomize(tiny())
    state = {f'backbone.{k}': v for k, v in src.state_dict().items()}
    state['head.fc.weight'] = torch.zeros(5, C)
    torch.save(dict(meta=dict(epoch=1), state_dict=state), tmp_path / 'epoch_1.pth')
    dst = tiny(
        init_cfg=dict(
            type='Pretrained', checkpoint=str(tmp_path / 'epoch_1.pth'),
            prefix='backbone.'))  # loaded by init_weights
    assert torch.equal(dst.pos_embed, src.pos_embed)
    with pytest.raises(ValueError, match="prefix='model.'"):
        load_pretrained(tiny(), str(tmp_path / 'epoch_1.pth'), prefix='model.')
    with pytest.raises(ValueError, match='needs a checkpoint'):
        tiny(init_cfg=dict(type='Pretrained', checkpoint=None))


def test_a_runner_checkpoint_of_our_vit_is_logged_as_our_layout(tmp_path, log):
    """A classifier checkpoint of mmvitdyn's own ViT has timm's keys: the log says
    the layout is shared, rather than naming the file a timm checkpoint."""
    state = {f'backbone.{k}': v for k, v in randomize(tiny()).state_dict().items()}
    torch.save(dict(meta=dict(epoch=1), state_dict=state), tmp_path / 'epoch_1.pth')
    load_pretrained(tiny(), str(tmp_path / 'epoch_1.pth'), prefix='backbone.')
    loaded = [r.getMessage() for r in log if r.getMessage().startswith('Loaded ')]
    assert loaded == [
        f"Loaded {len(state)} tensors into ViT from {tmp_path / 'epoch_1.pth'} "
        "(keys of timm's ViT, which mmvitdyn's ViT uses as they are)"
    ]


def test_describe_checkpoint():
    state = tiny_dyt(dispatch='attn_mlp').state_dict()
    assert describe_checkpoint(
        state, num_heads=H) == dict(
            num_tensors=len(state),
            embed_dims=C,
            num_layers=DEPTH,
            num_heads=H,
            feedforward_channels=MLP,
            patch_size=PATCH,
            in_channels=3,
            grid=(GRID, GRID),
            adapter_bottleneck=4,
            dispatch_parts={
                'attn': DEPTH,
                'mlp': DEPTH
            },
            keep_layers=0,
            adapter_scale=None,
            adapter_layer_norm=False,
            num_predictors=0)


@pytest.mark.parametrize('dispatch,parts', [('mlp', ('mlp', )), ('attn_mlp', ('attn', 'mlp'))])
def test_loader_and_converters_set_apart_what_dyt_trains(tmp_path, dispatch, parts):
    model = tiny_dyt(dispatch=dispatch)
    dyt = dyt_param_names(DEPTH, parts)
    assert trainable_names(model) == dyt
    state = model.state_dict()
    vit = {k: v for k, v in state.items() if k not in dyt}
    assert detect_format(state) == 'mmvitdyn' and detect_format(vit) == 'timm'
    if dispatch == 'mlp':  # the only dispatch of the official code
        converted = convert_dyt(official_dyt(model))
        assert converted.keys() - vit.keys() == dyt | {'head.weight', 'head.bias'}
    torch.save(vit, tmp_path / 'vit.pth')
    report = load_pretrained(tiny_dyt(dispatch=dispatch), str(tmp_path / 'vit.pth'))
    assert set(report.missing_new) == dyt and not report.missing


def test_converter_cli_writes_atomically(tmp_path, capsys):
    np.savez(tmp_path / 'vit.npz', **fake_jax())
    timm2mmvitdyn = load_tool('model_converters/timm2mmvitdyn.py')
    text = timm2mmvitdyn.main([str(tmp_path / 'vit.npz'), str(tmp_path / 'out/vit.pth')])
    assert f'embed_dims={C} depth={DEPTH} heads={H} mlp={MLP}' in text
    assert f'patch_size={PATCH} in_channels=3 grid={GRID}x{GRID}' in text
    assert text in capsys.readouterr().out
    assert [p.name for p in (tmp_path / 'out').iterdir()] == ['vit.pth']
    written = load_state_dict_file(str(tmp_path / 'out/vit.pth'))
    expected = convert_jax(fake_jax())
    assert written.keys() == expected.keys()
    assert all(torch.equal(written[k], expected[k]) for k in expected)
    mmpretrain2mmvitdyn = load_tool('model_converters/mmpretrain2mmvitdyn.py')
    with pytest.raises(SystemExit) as exit_info:
        mmpretrain2mmvitdyn.main([str(tmp_path / 'vit.npz'), str(tmp_path / 'x.pth')])
    assert exit_info.value.code == 2 and not (tmp_path / 'x.pth').exists()
    assert (f'{tmp_path / "vit.npz"} is a jax checkpoint, not mmpretrain; use '
            'tools/model_converters/timm2mmvitdyn.py') in capsys.readouterr().err


def test_dyt_cli_classifier_checkpoint_loads_with_load_from(tmp_path, capsys):
    src = randomize(tiny_dyt())
    official = official_dyt(src)
    torch.save(dict(model=official), tmp_path / 'dyt.pth')
    load_tool('model_converters/dyt2mmvitdyn.py').main(
        [str(tmp_path / 'dyt.pth'),
         str(tmp_path / 'cls.pth'), '--classifier'])
    out = capsys.readouterr().out
    assert f"DyT: adapter bottleneck={ADAPTER['bottleneck']} dispatchers={{'mlp': {DEPTH}}}" in out
    backbone = tiny_backbone_cfg('DyTViT', adapter_cfg=ADAPTER)
    head = dict(type='LinearClsHead', num_classes=5, in_channels=C)
    with DefaultScope.overwrite_default_scope('mmpretrain'):  # other tests may leave another scope
        classifier = MODELS.build(dict(type='ImageClassifier', backbone=backbone, head=head)).eval()
    classifier.load_state_dict(load_state_dict_file(str(tmp_path / 'cls.pth')), strict=True)
    img = images(2)
    expected = src(img)[0] @ official['head.weight'].T + official['head.bias']
    torch.testing.assert_close(classifier(img, mode='tensor'), expected)
    assert to_classifier(convert_dyt(official)).keys() == classifier.state_dict().keys()
