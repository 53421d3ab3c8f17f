"""The Kinetics-400 and Something-Something v2 configs of configs/dyt_video: each
variant's settings, its model built at a reduced size (trainable set, a training
step of DyT's losses), and the data pipelines run on real .mp4 clips through
mmaction2's own transforms into the views the public test takes."""
import copy
import re

import cv2
import numpy as np
import pytest
import torch
import yaml
from mmaction.structures import ActionDataSample
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper
from mmengine.registry import DATASETS, MODELS, DefaultScope, init_default_scope

import mmvitdyn.sweeps as sweeps
from helpers.guides import command
from helpers.models import IMG_SIZE, PATCH_SIZE, TINY_ARCH
from helpers.tools import REPO, load_tool
from mmvitdyn.datasets.generators import generate_video_shapes
from mmvitdyn.sweeps import CellState, load_sweep
from mmvitdyn.sweeps.sweep_file import parse_options

VIDEO_DIR = REPO / 'configs/dyt_video'
DATA_SETS = {'12e_k400-8x16x1': 400, '50e_ssv2-u8': 174}
# variant (name prefix, adapter width) -> (vit type, dispatch, adapter_cfg, freeze, AdaMix)
VARIANTS = {
    ('vit-b-p16-dyt', '_d64'): ('DyTViT', 'mlp', dict(bottleneck=64, num_experts=1), True, False),
    ('vit-b-p16-dyt-moe4', '_d64'): ('DyTViT', 'mlp', dict(bottleneck=64,
                                                           num_experts=4), True, False),
    ('vit-b-p16-dyt-adamix4', '_d64'):
    ('DyTViT', 'mlp', dict(bottleneck=64, num_experts=4, mixing='adamix'), True, True),
    ('vit-b-p16-adaptformer', '_d64'): ('AdapterViT', None, dict(bottleneck=64,
                                                                 num_experts=1), True, False),
    ('vit-b-p16-full-ft', ''): ('ViT', None, None, False, False),
}
CONFIGS = {
    f'{model}{width}_8xb16-{data}-224px.py': (data, variant)
    for data in DATA_SETS
    for (model, width), variant in VARIANTS.items()
}


def load(name: str) -> Config:
    return Config.fromfile(str(VIDEO_DIR / name))


def test_the_folder_holds_the_configs():
    names = {p.name for p in VIDEO_DIR.glob('vit-b-p16-*.py')}
    assert names == set(CONFIGS)


@pytest.mark.parametrize('name', sorted(CONFIGS))
def test_each_variant_has_its_settings(name):
    data, (vit_type, dispatch, adapter, freeze, adamix) = CONFIGS[name]
    cfg = load(name)
    assert cfg.default_scope == 'mmaction' and cfg.randomness.seed == 0
    model = cfg.model
    assert model.type == 'DyTRecognizer3D'
    assert (model.complete_loss, model.distill_loss, model.rate_loss_weight) == (True, True, 2.0)
    assert model.get('consistency_loss_weight', 0.0) == (1.0 if adamix else 0.0)
    assert model.backbone.type == 'DyTVideoViT'
    vit = model.backbone.vit
    assert (vit.type, vit.arch, vit.img_size, vit.patch_size) == (vit_type, 'base', 224, 16)
    assert vit.drop_path_rate == 0.0 and vit.get('freeze_pretrained', False) == freeze
    assert vit.get('dispatch') == dispatch
    assert vit.get('target_rate') == (0.5 if dispatch else vit.get('target_rate'))
    if adapter is None:
        assert 'adapter_cfg' not in vit
    else:
        assert {k: vit.adapter_cfg[k] for k in adapter} == adapter
        assert (vit.adapter_cfg.scale, vit.adapter_cfg.dropout) == (0.1, 0.1)
    assert vit.init_cfg.checkpoint == 'checkpoints/vit-base-p16_in21k.pth'
    head = model.cls_head
    assert (head.type, head.num_classes, head.in_channels, head.num_heads,
            head.average_clips) == ('AttentivePoolingHead', DATA_SETS[data], 768, 12, 'score')
    assert model.data_preprocessor.mean == model.data_preprocessor.std == [127.5] * 3


def tiny(cfg: Config) -> dict:
    """``cfg.model`` with a tiny random ViT (no checkpoint) and a matching head."""
    model = copy.deepcopy(cfg.model.to_dict())
    vit = model['backbone']['vit']
    vit.update(arch=TINY_ARCH, img_size=IMG_SIZE, patch_size=PATCH_SIZE, init_cfg=None)
    if vit['type'] != 'ViT':  # a frozen base without its checkpoint
        vit.update(allow_random_frozen=True)
    model['cls_head'].update(in_channels=TINY_ARCH['embed_dims'], num_heads=TINY_ARCH['num_heads'])
    return model


# What trains: the adapters (experts and router included) and dispatchers of every
# block, the pooling and the classifier; full fine-tuning trains everything.
TUNED = re.compile(r'backbone\.vit\.blocks\.\d+\.(adapter|dispatchers)\.|cls_head\.')


@pytest.mark.parametrize('name', sorted(CONFIGS))
def test_the_model_builds_and_trains_with_its_losses(name):
    _, (_, dispatch, adapter, freeze, adamix) = CONFIGS[name]
    torch.manual_seed(0)
    with DefaultScope.overwrite_default_scope('mmaction'):
        model = MODELS.build(tiny(load(name)))
    model.init_weights()
    names = [n for n, _ in model.named_parameters()]
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    if freeze:
        assert trainable == {n for n in names if TUNED.match(n)}
        layers = TINY_ARCH['num_layers']
        adapters = {n.split('.')[3] for n in trainable if '.adapter.' in n}
        assert len(adapters) == layers
        dispatchers = {n.split('.')[3] for n in trainable if '.dispatchers.' in n}
        assert len(dispatchers) == (layers if dispatch else 0)
    else:
        assert trainable == set(names)
    classes = model.cls_head.num_classes
    clips = torch.randn(2, 1, 3, 2, IMG_SIZE, IMG_SIZE)
    samples = [ActionDataSample().set_gt_label(label) for label in (0, classes - 1)]
    losses = model.train().loss(clips, samples)
    expected = {'loss_cls'}
    if dispatch:
        expected |= {'loss_cls_complete', 'loss_distill', 'loss_rate'}
    if adamix:
        expected |= {'loss_consistency'}
    assert set(losses) >= expected
    assert all(torch.isfinite(v) for v in losses.values())


@pytest.fixture(scope='module')
def clips(tmp_path_factory):
    """Real .mp4 clips of 24 frames in mmaction2's VideoDataset layout: 32 x 32 px
    (train_list_videos.txt) and one 64 px wide, 40 px high (wide_list_videos.txt)."""
    root = tmp_path_factory.mktemp('video') / 'clips'
    generate_video_shapes(str(root), frame_size=32, num_frames=24, num_train=2, num_val=2)
    writer = cv2.VideoWriter(
        str(root / 'videos/train/wide.mp4'), cv2.VideoWriter_fourcc(*'mp4v'), 8, (64, 40))
    for value in range(0, 240, 10):
        writer.write(np.full((40, 64, 3), value, dtype=np.uint8))
    writer.release()
    (root / 'wide_list_videos.txt').write_text('train/wide.mp4 0\n')
    return root


@pytest.mark.parametrize('ann_file', ['train_list_videos.txt', 'wide_list_videos.txt'])
@pytest.mark.parametrize(
    'name,loader,views',
    [
        ('vit-b-p16-dyt_d64_8xb16-12e_k400-8x16x1-224px.py', 'train_dataloader', 1),
        ('vit-b-p16-dyt_d64_8xb16-12e_k400-8x16x1-224px.py', 'test_dataloader', 3),  # 3 clips
        ('vit-b-p16-dyt_d64_8xb16-50e_ssv2-u8-224px.py', 'train_dataloader', 1),
        ('vit-b-p16-dyt_d64_8xb16-50e_ssv2-u8-224px.py', 'test_dataloader', 3),  # 3 crops
    ])
def test_the_pipeline_reads_real_clips_into_its_views(clips, name, loader, views, ann_file):
    """The config's own data set and pipeline (decord for K400, PyAV and
    RandAugment for SSv2) on a real .mp4: (views, C, T, H, W) uint8 inputs."""
    cfg = load(name)
    init_default_scope('mmaction')
    dataset_cfg = copy.deepcopy(cfg[loader].dataset.to_dict())
    dataset_cfg.update(data_root=str(clips), ann_file=ann_file, data_prefix=dict(video='videos'))
    torch.manual_seed(0)
    dataset = DATASETS.build(dataset_cfg)
    item = dataset[0]
    assert tuple(item['inputs'].shape) == (views, 3, 8, 224, 224)
    assert item['inputs'].dtype == torch.uint8
    assert int(item['data_samples'].gt_label) == 0


@pytest.mark.parametrize('name', [
    'vit-b-p16-dyt_d64_8xb16-12e_k400-8x16x1-224px.py',
    'vit-b-p16-dyt-moe4_d64_8xb16-50e_ssv2-u8-224px.py'
])
def test_the_optimiser_decays_every_trainable_parameter_at_the_recipe_s_rate(name):
    """The config's optimiser (fp32 here: AmpOptimWrapper needs a GPU) on the tiny
    model: lr 1e-3 x 128 / 256, and weight decay 0.01 on each trainable tensor."""
    cfg = load(name)
    with DefaultScope.overwrite_default_scope('mmaction'):
        model = MODELS.build(tiny(cfg))
    wrapper_cfg = copy.deepcopy(cfg.optim_wrapper)
    assert wrapper_cfg.pop('type') == 'AmpOptimWrapper' and wrapper_cfg.pop('loss_scale')
    wrapper = build_optim_wrapper(model, dict(wrapper_cfg, type='OptimWrapper'))
    trainable = {id(p) for p in model.parameters() if p.requires_grad}
    seen = set()
    for group in wrapper.optimizer.param_groups:
        assert group['lr'] == 1e-3 * 128 / 256
        for param in group['params']:
            if id(param) in trainable:
                assert group['weight_decay'] == 0.01
                seen.add(id(param))
    assert seen == trainable


ADAPTER_SWEEP = 'configs/sweeps/dyt_adapters_image-video.py'
IMAGE_DATA = ('cifar100', 'svhn', 'food101')


def test_the_adapter_sweep_is_the_review_table():
    """DyT, DyT N=4 and DyT-AdaMix x CIFAR-100, SVHN, Food-101, K400, SSv2: each
    cell's config with its options builds what the named configs build (the
    video leaf configs of this folder, the CIFAR-100 DyT-AdaMix config)."""
    sweep = load_sweep(str(REPO / ADAPTER_SWEEP), str(REPO))
    cells = {(c.coords['config'], c.coords['method']): c for c in sweep.cells}
    methods = ('dyt', 'dyt-moe4', 'dyt-adamix4')
    assert set(cells) == {(d, m) for d in IMAGE_DATA + ('k400', 'ssv2') for m in methods}
    assert (sweep.table.rows, sweep.table.columns) == (('method', ), 'config')
    named = {
        ('cifar100', 'dyt-adamix4'):
        'configs/dyt/vit-b-p16-dyt-adamix4_d64_8xb128-100e_'
        'cifar100-224px.py'
    }
    for data, video in (('k400', '12e_k400-8x16x1'), ('ssv2', '50e_ssv2-u8')):
        for method in methods:
            named[data, method] = f'configs/dyt_video/vit-b-p16-{method}_d64_8xb16-{video}-224px.py'
    for key, path in named.items():
        cfg = Config.fromfile(str(REPO / cells[key].config))
        cfg.merge_from_dict(parse_options(cells[key].options))
        assert cfg.model == Config.fromfile(str(REPO / path)).model, key
    for data in IMAGE_DATA:
        assert cells[data, 'dyt'].config.endswith(f'_8xb128-100e_{data}-224px.py')
        cfg = Config.fromfile(str(REPO / cells[data, 'dyt-moe4'].config))
        cfg.merge_from_dict(parse_options(cells[data, 'dyt-moe4'].options))
        assert cfg.model.backbone.adapter_cfg.num_experts == 4


def test_the_guide_lists_the_configs_and_its_sweep_command_runs_as_typed(capsys, monkeypatch):
    """docs/video.md's "Configs" section names every config of the folder, and
    its sweep command, run as typed, lists the table's 15 runs."""
    guide = REPO / 'docs/video.md'
    section = guide.read_text().split('## Configs:', 1)[1].split('\n## ', 1)[0]
    assert set(re.findall(r'`(vit-b-p16-[\w.-]+\.py)`', section)) == set(CONFIGS)
    tokens = command(guide, f'python tools/sweep.py {ADAPTER_SWEEP}')
    assert tokens[:2] == ['python', 'tools/sweep.py']
    monkeypatch.chdir(REPO)
    monkeypatch.setattr(sweeps, 'cell_state', lambda work_dir: CellState('pending', ''))
    capsys.readouterr()
    load_tool('sweep.py').main(tokens[2:])
    runs = [line for line in capsys.readouterr().out.splitlines() if not line.startswith('#')]
    assert len(runs) == 15
    assert all(line.startswith('bash tools/dist_train.sh configs/dyt') for line in runs)


def test_the_metafile_figures_are_the_frames_and_the_pooling_by_hand():
    """GFLOPs per clip = 8 frames x the image model without its head (the image
    metafile's DyT d = 64 CIFAR-100 entry, its 768 x 100 head taken off) + the
    attentive pooling over 8 x 197 tokens; parameters by hand."""
    video = {
        m['Name']: m['Metadata']
        for m in yaml.safe_load((VIDEO_DIR / 'metafile.yml').read_text())['Models']
    }
    image = {
        m['Name']: m['Metadata']
        for m in yaml.safe_load((REPO / 'configs/dyt/metafile.yml').read_text())['Models']
    }
    c, tokens = 768, 8 * 197
    frame = image['vit-b-p16-dyt_d64_8xb128-100e_cifar100-224px']['FLOPs'] - c * 100
    # k, v of every token, q and the output projection of the query, its
    # attention over the tokens, LayerNorms (5 an element) of tokens (k, v) and query
    pooling = 2 * tokens * c * c + 2 * c * c + 2 * tokens * c + 5 * (2 * tokens * c + c)
    for data, classes in (('12e_k400-8x16x1', 400), ('50e_ssv2-u8', 174)):
        dyt = video[f'vit-b-p16-dyt_d64_8xb16-{data}-224px']
        assert dyt['FLOPs'] == 8 * frame + pooling + c * classes
        # the frozen ViT-B/16 (no head), adapters d = 64 and a dispatcher per block
        f = 4 * c
        block = 4 * c + (3 * c * c + 3 * c) + (c * c + c) + (c * f + f + f * c + c)
        vit = (3 * 16 * 16 * c + c) + c + 197 * c + 12 * block + 2 * c
        tuned = 12 * ((c * 64 + 64 + 64 * c + c) + (c + 1))
        pool = c + 3 * 2 * c + (c * c + c) + c * c + (c * c + c) + (c * c + c)
        head = pool + c * classes + classes
        assert (dyt['Parameters'], dyt['Trainable Parameters']) == (vit + tuned + head,
                                                                    tuned + head)
        full = video[f'vit-b-p16-full-ft_8xb16-{data}-224px']
        assert full['Parameters'] == full['Trainable Parameters'] == vit + head
