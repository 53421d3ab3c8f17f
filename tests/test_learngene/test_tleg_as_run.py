"""TLEG as its public code runs it (github.com/AlphaXia/TLEG at 6e30a5c): the
Aux-Net and every TLEG descendant config hold the public code's settings, a
descendant without a class token computes what TLEG's descendant (timm's
VisionTransformer with ``class_token=False, global_pool='avg'``) computes on
the same weights, and the learngene of an Aux-Net without a class token
round-trips. The expected values are the public code's, written out here."""
from functools import partial

import pytest
import torch
from timm.models.vision_transformer import VisionTransformer
from torch import nn

from helpers.learngene_configs import read_config
from helpers.models import IMG_SIZE, PATCH_SIZE, TINY_ARCH, images, tiny
from helpers.tools import REPO
from mmvitdyn.learngene import LearngeneViT, LinearExpansionViT, TLEGLearngene, ViTAncestry

AUX = 'tleg-aux-vit-s-p16_levit-384-distill_8xb64-150e_in1k-224px'
# README.md:34-41, the Aux-S command: 4 processes (--nproc_per_node=4) of
# --batch-size 128, --drop-path 0.0, --epochs 150, --teacher-model levit_384,
# --distillation-type soft --distillation-alpha 1.0; main.py:152
# --distillation-tau defaults to 1.0; main.py:327-329 scales --lr (main.py:79,
# 5e-4) by the total batch / 512.
PUBLIC_AUX_BATCH, PUBLIC_AUX_DROP_PATH, PUBLIC_AUX_EPOCHS = 4 * 128, 0.0, 150
PUBLIC_DISTILLATION = ('soft', 1.0, 1.0)  # type, alpha, tau
PUBLIC_LR = 5e-4 * PUBLIC_AUX_BATCH / 512
# aux_models.py:21-25: aux_deit_small_patch16_224 has use_cls_token=False;
# TLEG_vit.py:259-265 then holds no class token and a position embedding of the
# patches only, and TLEG_vit.py:347 and 356-358 average the final-normed tokens.
# main.py:52: --drop-path defaults to 0.1, and no descendant command of
# README.md sets it. des_models.py:138: the descendant is timm's
# VisionTransformer with class_token=False, global_pool='avg'.
PUBLIC_DESCENDANT_DROP_PATH = 0.1
DATA_SETS = ('cifar10', 'cifar100', 'cub', 'dtd', 'eurosat', 'flowers102', 'food101', 'inat2019',
             'nabirds', 'resisc45', 'stanford-cars', 'stanford-dogs', 'svhn')
DESCENDANTS = [
    f'learngene-vit-s-p16-l{depth}-h6_tleg-aux-vit-s_8xb64-500e_{data}-224px' for depth in (12, 6)
    for data in DATA_SETS
]
C = TINY_ARCH['embed_dims']
GRID = (IMG_SIZE // PATCH_SIZE)**2


def test_the_aux_net_config_is_the_public_command():
    cfg = read_config(AUX)
    backbone = cfg.model.backbone
    assert backbone.type == 'LinearExpansionViT'
    assert backbone.class_token is False and backbone.out_type == 'avg_featmap'
    assert backbone.get('final_norm', True) is True and not backbone.get('fc_norm', False)
    assert backbone.drop_path_rate == PUBLIC_AUX_DROP_PATH
    assert cfg.train_cfg.max_epochs == PUBLIC_AUX_EPOCHS
    assert 8 * cfg.train_dataloader.batch_size == PUBLIC_AUX_BATCH
    assert cfg.optim_wrapper.optimizer.lr == pytest.approx(PUBLIC_LR)
    assert cfg.auto_scale_lr.base_batch_size == PUBLIC_AUX_BATCH
    model = cfg.model
    assert model.type == 'DistillationImageClassifier'
    assert (model.distillation_type, model.alpha, model.tau) == PUBLIC_DISTILLATION
    # timm's levit_384 (the distilled LeViT-384, evaluated as the mean of its two
    # heads) with the official LeViT-384 weights: mmpretrain's levit-384.
    teacher = model.teacher
    assert (teacher.backbone.type, teacher.backbone.arch) == ('LeViT', '384')
    assert (teacher.head.type, teacher.head.distillation) == ('LeViTClsHead', True)
    assert teacher.head.num_classes == model.head.num_classes == 1000
    assert teacher.init_cfg == dict(
        type='Pretrained', checkpoint='checkpoints/levit-384_3rdparty_in1k_20230117-f3539cce.pth')


def test_the_earlier_aux_net_name_is_the_public_command():
    earlier = read_config('tleg-aux-vit-s-p16_8xb128-100e_in1k-224px')
    assert earlier.to_dict() == read_config(AUX).to_dict()


@pytest.mark.parametrize('name', DESCENDANTS)
def test_every_descendant_config_is_the_public_descendant(name):
    backbone = read_config(name).model.backbone
    assert (backbone.type, backbone.init_mode) == ('LearngeneViT', 'tleg')
    # timm's class_token=False, global_pool='avg': no class token, the mean of
    # the patch tokens normalised after the pooling (fc_norm), no final norm.
    assert backbone.class_token is False and backbone.out_type == 'avg_featmap'
    assert backbone.final_norm is False and backbone.fc_norm is True
    assert backbone.drop_path_rate == PUBLIC_DESCENDANT_DROP_PATH


def trained_aux_net(num_layers: int = 3) -> LinearExpansionViT:
    """A tiny Aux-Net as TLEG's (no class token, the mean of the final-normed
    tokens), every tensor far from its start (as if trained)."""
    aux = tiny(
        LinearExpansionViT,
        arch=dict(TINY_ARCH, num_layers=num_layers),
        class_token=False,
        out_type='avg_featmap')
    with torch.no_grad():
        for param in aux.parameters():
            param.normal_(0, 0.2)
    return aux


def test_the_aux_net_has_no_class_token_and_averages_the_normed_tokens():
    aux = trained_aux_net()
    assert aux.cls_token is None and aux.pos_embed.shape == (1, GRID, C)
    raw = tiny(LinearExpansionViT, arch=dict(TINY_ARCH), class_token=False, out_type='raw')
    raw.load_state_dict(aux.state_dict())
    with torch.no_grad():
        tokens = raw(images())[0]  # (B, 16, C): the final norm's output, patches only
        assert tokens.shape == (4, GRID, C)
        torch.testing.assert_close(aux(images())[0], tokens.mean(1))


def descendant(path: str, num_layers: int, **kwargs) -> LearngeneViT:
    model = LearngeneViT(
        learngene=path,
        init_mode='tleg',
        img_size=IMG_SIZE,
        arch=dict(num_layers=num_layers),
        class_token=False,
        out_type='avg_featmap',
        final_norm=False,
        fc_norm=True,
        **kwargs)
    model.init_weights()
    return model.eval()


def test_the_learngene_round_trips_without_a_class_token(tmp_path):
    aux = trained_aux_net()
    path = str(tmp_path / 'tleg.pth')
    ViTAncestry(aux).extract_expansion().save(path)
    loaded = TLEGLearngene.load(path)
    assert loaded.ancestry['num_extra_tokens'] == 0
    assert 'cls_token' not in loaded.embeddings
    # Every tensor of the Aux-Net, in the field that holds it.
    fields = {'theta_a': loaded.theta_a, 'theta_b': loaded.theta_b, 'norm': loaded.final_norm}
    for key, value in aux.state_dict().items():
        group, _, name = key.partition('.')
        stored = fields[group][name] if group in fields else loaded.embeddings[key]
        assert torch.equal(stored, value), key
    model = descendant(path, 3)
    assert model.cls_token is None and model.num_prefix_tokens == 0
    # The Aux-Net's final norm becomes the descendant's pooled norm (fc_norm).
    assert torch.equal(model.fc_norm.weight, aux.norm.weight)
    assert torch.equal(model.fc_norm.bias, aux.norm.bias)
    assert isinstance(model.norm, nn.Identity)
    with pytest.raises(ValueError, match=r"class_token=True differs from the learngene's"):
        LearngeneViT(learngene=path, init_mode='tleg', img_size=IMG_SIZE, class_token=True)


def public_descendant(aux: LinearExpansionViT, num_layers: int, head: nn.Linear):
    """TLEG's descendant: timm's VisionTransformer as des_models.py:138 builds
    it, loaded as utils.py:239-261 (gene_tranfer) loads the Aux-Net: the stem,
    norm -> fc_norm, layer i = theta_A + i / L theta_B; and the head."""
    model = VisionTransformer(
        img_size=IMG_SIZE,
        patch_size=PATCH_SIZE,
        embed_dim=C,
        depth=num_layers,
        num_heads=TINY_ARCH['num_heads'],
        mlp_ratio=TINY_ARCH['feedforward_channels'] / C,
        qkv_bias=True,
        global_pool='avg',
        class_token=False,
        norm_layer=partial(nn.LayerNorm, eps=1e-6),
        num_classes=head.out_features)
    state = {
        'pos_embed': aux.pos_embed,
        'patch_embed.proj.weight': aux.patch_embed.proj.weight,
        'patch_embed.proj.bias': aux.patch_embed.proj.bias,
        'fc_norm.weight': aux.norm.weight,
        'fc_norm.bias': aux.norm.bias,
        'head.weight': head.weight,
        'head.bias': head.bias,
    }
    for i in range(num_layers):
        for name, theta_a in aux.theta_a.named_parameters():
            theta_b = aux.theta_b.get_parameter(name)
            state[f'blocks.{i}.{name}'] = theta_a + i / num_layers * theta_b
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert missing == [] and unexpected == []
    return model.eval()


@pytest.mark.parametrize('num_layers', [2, 5])
def test_a_descendant_computes_what_tlegs_descendant_computes(tmp_path, num_layers):
    aux = trained_aux_net()
    path = str(tmp_path / 'tleg.pth')
    ViTAncestry(aux).extract_expansion().save(path)
    model = descendant(path, num_layers)
    head = nn.Linear(C, 7)
    x = images()
    with torch.no_grad():
        ours = head(model(x)[0])
        torch.testing.assert_close(ours, public_descendant(aux, num_layers, head)(x))
        # The pooling by hand: the mean of the last block's patch tokens, then
        # the inherited norm (the Aux-Net's final norm), then the head.
        raw = descendant(path, num_layers)
        raw.out_type = 'raw'
        tokens = raw(x)[0]
        pooled = nn.functional.layer_norm(
            tokens.mean(1), (C, ), aux.norm.weight, aux.norm.bias, eps=1e-6)
        torch.testing.assert_close(ours, head(pooled))


def test_the_extract_tool_reads_an_aux_net_without_a_class_token(tmp_path, capsys):
    from mmengine.config import Config
    from mmengine.registry import MODELS, init_default_scope

    from helpers.tools import load_tool
    config = REPO / 'configs/vit/vit-mini-p4_1xb32-20e_digits-32px.py'
    options = {
        'model.backbone.type': 'LinearExpansionViT',
        'model.backbone.class_token': False,
        'model.backbone.out_type': 'avg_featmap'
    }
    init_default_scope('mmpretrain')
    cfg = Config.fromfile(config)
    cfg.merge_from_dict(options)
    model = MODELS.build(cfg.model)
    model.init_weights()
    torch.save(dict(state_dict=model.state_dict()), tmp_path / 'aux.pth')
    out = tmp_path / 'tleg.pth'
    load_tool('learngene/extract_baseline_learngene.py').main([
        'tleg',
        str(config),
        str(tmp_path / 'aux.pth'), '--out',
        str(out), '--cfg-options', *[f'{k}={v}' for k, v in options.items()]
    ])
    assert f'wrote {out}' in capsys.readouterr().out
    learngene = TLEGLearngene.load(str(out))
    assert learngene.ancestry['num_extra_tokens'] == 0
    assert torch.equal(learngene.embeddings['pos_embed'], model.backbone.pos_embed)
