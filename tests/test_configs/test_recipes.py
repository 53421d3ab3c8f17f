"""docs/recipes.md and the configs it names agree, setting by setting.

The document holds one table per recipe (setting, value, source) and one
table of experiments (data set, method, recipe, config, options). Every
experiment's config, with its options merged as ``--cfg-options`` would, is
read back here into the document's words by the small functions below; any
difference between the two fails.
"""
import ast
import copy
import functools
import re

import pytest
import torch
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper
from mmengine.registry import init_default_scope
from mmengine.runner import Runner
from mmpretrain.registry import MODELS

from helpers.configs import DYT_CONFIG_DIR, dyt_config
from helpers.models import IMG_SIZE, PATCH_SIZE, TINY_ARCH
from helpers.tools import REPO
from mmvitdyn.apis import init_model

DOC = REPO / 'docs/recipes.md'
# The folders a row's config name is looked up in: images, then video.
CONFIG_DIRS = (DYT_CONFIG_DIR, REPO / 'configs/dyt_video')
IN21K = 'checkpoints/vit-base-p16_in21k.pth'


def table_rows(lines):
    """The cells of a markdown table's body rows (header and rule skipped)."""
    rows = [[cell.strip() for cell in line.strip().strip('|').split('|')] for line in lines]
    return rows[2:]


def parse_doc():
    """({recipe: {setting: value}}, [experiment rows]) from docs/recipes.md: the
    table under '## Experiments' and the one under each '### Recipe: <name>'."""
    recipes, experiments, section, block = {}, [], None, []
    for line in DOC.read_text().splitlines() + ['']:
        if line.startswith('|'):
            block.append(line)
            continue
        if block and section == 'Experiments':
            experiments.extend(table_rows(block))
        elif block and section is not None:
            recipes[section] = {row[0]: row[1].strip('`') for row in table_rows(block)}
        block = []
        if line.startswith('#'):
            heading = re.fullmatch(r'## (Experiments)|### Recipe: (.+)', line)
            section = heading and (heading.group(1) or heading.group(2))
    return recipes, experiments


RECIPES, EXPERIMENTS = parse_doc()


def options(text):
    """``a.b=1 c=None`` (the options cell, in backticks) -> {'a.b': 1, 'c': None}."""
    pairs = [item.split('=', 1) for item in text.strip('`').split()]
    return {key: ast.literal_eval(value) for key, value in pairs}


def configs(pattern):
    """The configs a row gives (a glob over configs/dyt/ for the VTAB tasks), as
    paths, from the first folder of ``CONFIG_DIRS`` that holds them."""
    for folder in CONFIG_DIRS:
        paths = sorted(folder.glob(pattern.strip('`')))
        if paths:
            return paths
    raise AssertionError(f'{pattern} names no config in {[str(d) for d in CONFIG_DIRS]}')


@functools.lru_cache(maxsize=None)
def load_config(path) -> Config:
    """A row's config, parsed once (configs/dyt/ through the shared cache)."""
    return dyt_config(path.name) if path.parent == DYT_CONFIG_DIR else Config.fromfile(str(path))


def experiment_configs(row):
    """(name, config with the row's options merged) for each config of ``row``."""
    _, _, _, pattern, extra = row
    for path in configs(pattern):
        name, cfg = path.name, load_config(path)
        if extra:
            cfg = copy.deepcopy(cfg)
            cfg.merge_from_dict(options(extra))
        yield name, cfg


# The config, in the document's words ----------------------------------------------


def number(value) -> str:
    return f'{value:g}'


def same_for_all(values) -> str:
    return number(values[0]) if len(set(values)) == 1 else str(list(values))


def transform(step) -> str:
    keys = ('scale', 'crop_size', 'size', 'ratio_range', 'edge', 'backend', 'interpolation', 'prob',
            'clip_len', 'frame_interval', 'num_clips', 'out_of_bound_opt', 'scale_range',
            'area_range', 'flip_ratio', 'op', 'num_ops', 'magnitude', 'num_magnitude_bins')
    args = [f'{key}={step[key]}' for key in keys if key in step]
    return f"{step['type']}({', '.join(args)})"


def pipeline(steps) -> str:
    """The transforms, without loading, decoding (a video reader's ``*Init`` is
    kept), formatting and packing."""
    kept = [
        s for s in steps if not re.match('(Load|Pack|Filter|FormatShape)', s['type'])
        and not s['type'].endswith('Decode')
    ]
    return ' > '.join(transform(s) for s in kept)


def frame_backbone(cfg):
    """The image backbone: a video backbone's per-frame ViT (``vit``), else the backbone."""
    backbone = cfg.model.backbone
    return backbone.vit if 'vit' in backbone else backbone


def optimizer_type(cfg) -> str:
    optimizer = cfg.optim_wrapper.optimizer
    return f"{optimizer.type}, betas {tuple(optimizer.betas)}"


def exemptions(cfg) -> str:
    wrapper = cfg.optim_wrapper
    if wrapper.get('constructor') == 'LayerDecayOptimWrapperConstructor':
        return 'norms, biases, position embeddings and tables'
    assert wrapper.get('constructor') in (None, 'DefaultOptimWrapperConstructor')
    return 'none' if not wrapper.get('paramwise_cfg') else str(wrapper.paramwise_cfg)


def layer_decay(cfg) -> str:
    rate = (cfg.optim_wrapper.get('paramwise_cfg') or {}).get('layer_decay_rate', 1.0)
    return 'none' if rate == 1.0 else number(rate)


def warm_up(cfg) -> str:
    first, second = cfg.param_scheduler[:2]
    assert first.type == 'LinearLR'
    if first.get('convert_to_iter_based'):
        return f'linear from {number(first.start_factor)} x lr, {first.end} epochs, per iteration'
    # by iteration, both from iteration 0: a warm-up factor times the decay, as mmcv's
    assert not first.by_epoch and second.get('begin', 0) == 0
    return (f'linear factor from {number(first.start_factor)}, 1 at iteration '
            f'{first.end - 1}, times the decay')


def decay(cfg) -> str:
    last = cfg.param_scheduler[-1]
    if last.type == 'CosineAnnealingLR':
        return f'half-cosine to {number(last.eta_min)}, per iteration'
    if last.type == 'PolyLR':
        return f'poly (power {number(last.power)}) to {number(last.eta_min)}'
    assert last.type == 'MultiStepLR'
    return f'x {number(last.gamma)} at epochs {list(last.milestones)}'


def length(cfg) -> str:
    train = cfg.train_cfg
    if 'max_epochs' in train:
        return f'{train.max_epochs} epochs'
    return f'{train.max_iters} iterations'


def batch(cfg) -> str:
    total, per_gpu = cfg.auto_scale_lr.base_batch_size, cfg.train_dataloader.batch_size
    gpus = total // per_gpu
    return f"{total} ({gpus} GPU{'s' * (gpus > 1)} x {per_gpu})"


def precision(cfg) -> str:
    return 'mixed (AMP)' if cfg.optim_wrapper.get('type') == 'AmpOptimWrapper' else 'fp32'


def clipping(cfg) -> str:
    clip = cfg.optim_wrapper.get('clip_grad')
    return 'none' if clip is None else f'max norm {number(clip.max_norm)}'


def head_init(cfg) -> str:
    init = cfg.model.head.init_cfg
    return f'{init.type} std {number(init.std)}'


def batch_mixing(cfg) -> str:
    return str((cfg.model.get('train_cfg') or {}).get('augments', 'none'))


def label_smoothing(cfg) -> str:
    loss = cfg.model.head.loss
    smooth = loss.get('label_smooth_val', 0) if loss.type == 'LabelSmoothLoss' else 0
    return 'none' if smooth == 0 else number(smooth)


def losses(cfg) -> str:
    """The loss terms; the library's own model (full fine-tuning) has no DyT terms."""
    model = cfg.model
    if model.type in ('DyTImageClassifier', 'DyTRecognizer3D'):
        terms = ['CE'] + ['CE(complete)'] * model.complete_loss + ['KL'] * model.distill_loss
    elif model.type == 'ImageClassifier':
        terms = ['CE']
    else:
        aux = model.auxiliary_head.loss_decode.loss_weight if 'auxiliary_head' in model else None
        terms = ['task losses'] if aux is None else ['decode CE', f'{number(aux)} x aux CE']
    rate = [f'{number(model.rate_loss_weight)} x rate'] if 'rate_loss_weight' in model else []
    return ' + '.join(terms + rate)


def evaluation(cfg) -> str:
    interval = cfg.train_cfg.val_interval
    unit = 'epochs' if 'max_epochs' in cfg.train_cfg else 'iterations'
    best = [h for h in cfg.custom_hooks if h.type == 'BestOverEpochsHook']
    text = f'every {interval} {unit}' if interval > 1 else f'every {unit[:-1]}'
    if best:
        text += f", {best[0].key} and {best[0].key}_best_epoch"
    return text


def mean_std(cfg) -> str:
    preprocessor = cfg.model.data_preprocessor
    return ' / '.join(same_for_all(preprocessor[key]) for key in ('mean', 'std'))


def drop_path(cfg) -> str:
    return number(frame_backbone(cfg).drop_path_rate)


def learning_rate(cfg) -> str:
    return number(cfg.optim_wrapper.optimizer.lr)


def weight_decay(cfg) -> str:
    return number(cfg.optim_wrapper.optimizer.weight_decay)


def training_transforms(cfg) -> str:
    return pipeline(cfg.train_dataloader.dataset.pipeline)


def evaluation_transforms(cfg) -> str:
    return pipeline(cfg.test_dataloader.dataset.pipeline)


def inference_mode(cfg) -> str:
    return 'slide {crop_size}, stride {stride}'.format(**cfg.model.test_cfg)


def evaluation_views(cfg) -> str:
    """Clips x crops of the test pipeline and how the head joins their scores."""
    steps = {s['type']: s for s in cfg.test_dataloader.dataset.pipeline}
    sampler = steps.get('SampleFrames') or steps['UniformSample']
    crops = 3 if 'ThreeCrop' in steps else 10 if 'TenCrop' in steps else 1
    clips = sampler.num_clips
    return (f"{clips} clip{'s' * (clips > 1)} x {crops} crop{'s' * (crops > 1)}, "
            f'{cfg.model.cls_head.average_clips} averaged')


SETTINGS = {
    'input mean / std': mean_std,
    'stochastic depth': drop_path,
    'optimizer': optimizer_type,
    'lr': learning_rate,
    'weight decay': weight_decay,
    'weight decay exemptions': exemptions,
    'layer-wise lr decay': layer_decay,
    'gradient clipping': clipping,
    'precision': precision,
    'warm-up': warm_up,
    'decay': decay,
    'length': length,
    'total batch': batch,
    'train transforms': training_transforms,
    'test transforms': evaluation_transforms,
    'test mode': inference_mode,
    'test views': evaluation_views,
    'head init': head_init,
    'mixup / cutmix': batch_mixing,
    'label smoothing': label_smoothing,
    'losses': losses,
    'evaluation': evaluation,
}


def method(cfg) -> str:
    backbone = frame_backbone(cfg)
    adapter = backbone.get('adapter_cfg')
    if adapter is None:  # a ViT, or options that turn a DyTViT's parts off
        assert backbone.get('dispatch') is None and not backbone.get('freeze_pretrained')
        return 'full fine-tuning'
    assert backbone.freeze_pretrained
    sizes = f"d {adapter.bottleneck}, s {number(adapter.scale)}"
    if backbone.get('dispatch') is None:  # an AdapterViT*, or a DyTViT with dispatch=None
        return f'AdaptFormer ({sizes})'
    if adapter.num_experts == 1:
        name = 'DyT'
    elif adapter.get('mixing', 'router') == 'adamix':
        name = f'DyT-AdaMix ({adapter.num_experts} experts)'
    else:
        name = f'DyT+MoE ({adapter.num_experts} experts)'
    return f'{name}: {backbone.dispatch} dispatch, r {number(backbone.target_rate)}, {sizes}'


# The tests ------------------------------------------------------------------------


def test_the_document_has_every_paper_experiment():
    data_sets = {row[0] for row in EXPERIMENTS}
    assert data_sets >= {
        'VTAB-1K (19 tasks)', 'CIFAR-100', 'SVHN', 'Food-101', 'ImageNet-1k', 'ADE20K', 'COCO',
        'Kinetics-400', 'Something-Something v2'
    }
    methods = {row[1].split(':')[0].split(' (')[0] for row in EXPERIMENTS}
    assert methods == {'DyT', 'DyT+MoE', 'DyT-AdaMix', 'AdaptFormer', 'full fine-tuning'}
    assert len(configs(EXPERIMENTS[0][3])) == 19  # the VTAB-1K task configs
    for recipe in {row[2] for row in EXPERIMENTS}:
        assert recipe in RECIPES, f'{recipe} has no "### Recipe: {recipe}" table'


@pytest.mark.parametrize('row', EXPERIMENTS, ids=lambda row: f'{row[0]}|{row[1]}')
def test_each_experiment_config_has_its_recipe(row):
    data_set, expected_method, recipe, _, _ = row
    for name, cfg in experiment_configs(row):
        assert method(cfg) == expected_method, name
        for setting, value in RECIPES[recipe].items():
            assert SETTINGS[setting](cfg) == value, f'{name}: {setting}'


@pytest.mark.parametrize('row', EXPERIMENTS, ids=lambda row: f'{row[0]}|{row[1]}')
def test_the_in21k_checkpoint_brings_its_normalisation(row):
    """The model's own data_preprocessor: the Runner and init_model use a top-level
    one only for a model without one, so the data set base cannot replace it. The
    channel swap still follows the data set (its base's to_rgb / bgr_to_rgb)."""
    for name, cfg in experiment_configs(row):
        assert frame_backbone(cfg).init_cfg.checkpoint == IN21K
        own = cfg.model.data_preprocessor
        assert list(own.mean) == list(own.std) == [127.5] * 3, name
        top_level = cfg.get('data_preprocessor')
        if top_level is not None:  # mmpretrain's data set bases keep one
            swap = 'to_rgb' if 'to_rgb' in own else 'bgr_to_rgb'
            assert own[swap] == top_level[swap], name


@pytest.mark.parametrize('name', [
    'vit-b-p16-dyt_d16_1xb64-100e_vtab1k-dtd-224px.py',
    'vit-b-p16-dyt_d64_8xb128-100e_food101-224px.py'
])
def test_weight_decay_reaches_every_trainable_parameter(name):
    """The recipe's optimiser on the real model class (a tiny ViT): one AdamW group
    per decay value, every trainable parameter (adapters, dispatchers, head) decayed."""
    cfg = copy.deepcopy(dyt_config(name))
    cfg.model.backbone.update(
        arch=TINY_ARCH, img_size=IMG_SIZE, patch_size=PATCH_SIZE, init_cfg=None)
    cfg.model.head.in_channels = TINY_ARCH['embed_dims']
    init_default_scope('mmpretrain')
    model = MODELS.build(cfg.model)
    wrapper = build_optim_wrapper(model, cfg.optim_wrapper)
    decay = cfg.optim_wrapper.optimizer.weight_decay
    trainable = {id(p) for p in model.parameters() if p.requires_grad}
    names = {id(p): n for n, p in model.named_parameters()}
    assert {'head.fc.weight', 'head.fc.bias'} <= {names[i] for i in trainable}
    for group in wrapper.optimizer.param_groups:
        for param in group['params']:
            if id(param) in trainable:
                assert group['weight_decay'] == decay, names[id(param)]
                trainable.discard(id(param))
    assert not trainable  # every trainable parameter reached the optimiser


def test_the_models_own_normalisation_wins_in_init_model_and_the_runner(tmp_path):
    """A VTAB-1K config's data set base carries ImageNet statistics at the top
    level; the model that the tools (init_model) and the Runner build normalises
    with the checkpoint's mean = std = 127.5 and swaps BGR to RGB."""
    cfg = copy.deepcopy(dyt_config('vit-b-p16-dyt_d16_1xb64-100e_vtab1k-dtd-224px.py'))
    assert cfg.data_preprocessor.mean == [123.675, 116.28, 103.53]  # the data set base's
    cfg.model.backbone.update(
        arch=TINY_ARCH, img_size=IMG_SIZE, patch_size=PATCH_SIZE, init_cfg=None)
    cfg.model.head.in_channels = TINY_ARCH['embed_dims']
    cfg.work_dir = str(tmp_path)
    for model in (init_model(cfg), Runner.from_cfg(cfg).model):
        preprocessor = model.data_preprocessor
        assert torch.equal(preprocessor.mean.flatten(), torch.full((3, ), 127.5))
        assert torch.equal(preprocessor.std.flatten(), torch.full((3, ), 127.5))
        bgr = torch.tensor([0, 255, 51], dtype=torch.uint8).view(3, 1, 1).expand(3, 2, 2)
        out = preprocessor(dict(inputs=[bgr], data_samples=None), False)['inputs']
        rgb = [(51 - 127.5) / 127.5, (255 - 127.5) / 127.5, (0 - 127.5) / 127.5]
        assert out[0, :, 0, 0].tolist() == pytest.approx(rgb, abs=1e-6)
