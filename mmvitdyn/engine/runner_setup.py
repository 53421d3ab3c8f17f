"""What ``tools/train.py`` and ``tools/test.py`` share: command-line overrides
of a loaded config (:mod:`.config_loading`) and Runner construction for
mmpretrain, mmdet, mmseg and mmaction configs alike (by ``default_scope``)."""
import os
import os.path as osp
from contextlib import contextmanager
from typing import Iterator, List, Optional, Tuple

from mmengine.config import Config
from mmengine.device import get_device
from mmengine.registry import MODELS, RUNNERS, Registry
from mmengine.runner import Runner

from ..checkpoint import is_local_path
from ..datasets import check_data_roots
from ..settings import launcher_rank
from ..utils import OutputIsInputError, WorkDirLock, check_int, refuse_overwriting_inputs
from .class_counts import check_class_counts
from .config_keys import misspelt_top_level_keys, unknown_argument_message
from .config_loading import SCOPES, config_inputs
from .distributed import default_model_wrapper, init_cpu_distributed
from .hooks import ClassCountCheckHook
from .setup_error import SetupError


def set_work_dir(cfg: Config, work_dir: Optional[str], config_path: str) -> None:
    """Command line > config > ``./work_dirs/<config name>``."""
    if work_dir is not None:
        cfg.work_dir = work_dir
    elif cfg.get('work_dir') is None:
        cfg.work_dir = osp.join('./work_dirs', osp.splitext(osp.basename(config_path))[0])


@contextmanager
def hold_work_dir(work_dir: str) -> Iterator[None]:
    """Hold ``work_dir`` (on rank 0) for the block.

    Raises:
        WorkDirLockedError: Another live run holds it (named in the message).
    """
    lock = WorkDirLock(work_dir)
    if launcher_rank() == 0:
        lock.acquire()
    try:
        yield
    finally:
        lock.release()


def _has_accelerator() -> bool:
    return get_device() != 'cpu'


def enable_amp(cfg: Config) -> None:
    """Switch the optimiser wrapper to mixed precision (``--amp``)."""
    if not _has_accelerator():
        raise SetupError('--amp needs a GPU (mmengine AmpOptimWrapper asserts one) and none is '
                         'visible; on the CPU train without --amp')
    if cfg.optim_wrapper.get('type') != 'AmpOptimWrapper':
        cfg.optim_wrapper.type = 'AmpOptimWrapper'
        cfg.optim_wrapper.setdefault('loss_scale', 'dynamic')


def set_resume(cfg: Config, resume: Optional[str]) -> None:
    """``--resume`` alone resumes from the latest checkpoint of the work dir."""
    if resume == 'auto':
        cfg.resume, cfg.load_from = True, None
    elif resume is not None:
        cfg.resume, cfg.load_from = True, resume


def make_resumable(cfg: Config) -> None:
    """Checkpoints that survive a crash, and a resume that repeats the
    uninterrupted run: the config's ``CheckpointHook`` becomes an
    ``AtomicCheckpointHook`` (same arguments) and an ``EpochSeedHook`` is added."""
    checkpoint = cfg.get('default_hooks', {}).get('checkpoint')
    if checkpoint is not None and checkpoint.get('type') == 'CheckpointHook':
        checkpoint.type = 'AtomicCheckpointHook'
    hooks = list(cfg.get('custom_hooks', []))
    if not any(hook.get('type') == 'EpochSeedHook' for hook in hooks):
        cfg.custom_hooks = hooks + [dict(type='EpochSeedHook')]


def enable_visualization(cfg: Config, show_dir: str, interval: int = 1) -> None:
    """Draw predictions of the test set into ``show_dir``: every ``interval``-th
    batch (1: every image; the hooks' own defaults draw one batch in 50 or more)."""
    scope = SCOPES[cfg.default_scope]
    hook = cfg.default_hooks.get('visualization')
    if hook is None:
        raise SetupError('--show-dir needs default_hooks.visualization in the config')
    try:
        check_int(interval, '--show-interval', minimum=1)
    except ValueError as err:
        raise SetupError(str(err)) from err
    hook.update(scope['vis_on'], interval=interval)
    if scope['vis_dir_key']:
        hook[scope['vis_dir_key']] = show_dir
    else:
        cfg.visualizer['save_dir'] = show_dir


def add_dump_results(cfg: Config, out_file: str) -> None:
    """Also dump the raw predictions of the test set to ``out_file`` (.pkl),
    which must not be a file the test reads (:func:`config_inputs`, the
    checkpoint ``load_from``)."""
    if not out_file.endswith(('.pkl', '.pickle')):
        raise SetupError(f'--out {out_file!r}: the file must end with .pkl or .pickle')
    try:
        refuse_overwriting_inputs(out_file, config_inputs(cfg) + [cfg.get('load_from')])
    except OutputIsInputError as err:
        raise SetupError(f'--out: {err}') from None
    dump = dict(type=SCOPES[cfg.default_scope]['dump'], out_file_path=out_file)
    evaluators = cfg.test_evaluator
    cfg.test_evaluator = (list(evaluators) if isinstance(evaluators,
                                                         (list, tuple)) else [evaluators]) + [dump]


def choose_model_wrapper(cfg: Config, on_cpu: bool) -> None:
    """Set the wrapper of a distributed run whose config names none: for a model
    with a two-pass step the wrapper that runs that step (not ``loss()``), on
    the CPU one without device ids (:mod:`mmvitdyn.engine.distributed`); with
    the arguments mmengine's default wrapper gets. A ``model_wrapper_cfg``
    without a ``type`` gets that type; one that names a type is kept."""
    wrapper = cfg.get('model_wrapper_cfg')
    if wrapper is not None and 'type' in wrapper:
        return
    if Registry.split_scope_key(cfg.model.type)[0] is not None:
        # A scoped type ('mmpretrain.X') means the same whatever scope is
        # current in this process: look it up from the root.
        model_class = MODELS.get(cfg.model.type)
    else:
        with MODELS.switch_scope_and_registry(cfg.get('default_scope')) as registry:
            model_class = registry.get(cfg.model.type)
    if model_class is None:
        raise SetupError(f'model.type={cfg.model.type!r} is not a registered model: check its '
                         "spelling and the config's default_scope")
    wrapper_type = default_model_wrapper(model_class, on_cpu)
    if wrapper is not None:
        wrapper['type'] = wrapper_type
        return
    cfg.model_wrapper_cfg = dict(
        type=wrapper_type,
        broadcast_buffers=False,
        find_unused_parameters=cfg.get('find_unused_parameters', False))


def check_schedule(cfg: Config) -> None:
    """Refuse a parameter scheduler that ends before it begins (e.g. an ``end``
    defaulting to ``train_cfg.max_epochs=1`` under a 1-epoch warm-up).

    Raises:
        SetupError: Naming the scheduler, its begin and end and what to change.
    """
    train_cfg = cfg.get('train_cfg') or {}
    schedulers = cfg.get('param_scheduler') or []
    for index, scheduler in enumerate([schedulers] if isinstance(schedulers, dict) else schedulers):
        by_epoch = scheduler.get('by_epoch', True)
        field = 'max_epochs' if by_epoch else 'max_iters'
        begin, end = scheduler.get('begin', 0), scheduler.get('end', train_cfg.get(field))
        if end is not None and begin >= end:
            unit = 'epoch' if by_epoch else 'iteration'
            source = (f'{end}, from train_cfg.{field}' if 'end' not in scheduler else f'{end}')
            raise SetupError(
                f"param_scheduler[{index}] ({scheduler.get('type')}) begins at {unit} {begin} "
                f'and ends at {source}: it must end after it begins. Train longer '
                f'(train_cfg.{field} > {begin}) or move the schedule (param_scheduler.{index}.begin'
                f'{"" if "end" not in scheduler else f", param_scheduler.{index}.end"}, and the '
                'warm-up before it)')


# The pretrained weights the configs name -> (what and where the source file
# is, the command that makes the configs' file from it; None: the source
# file loads as it is). {out}: the configs' path.
DEIT = 'https://dl.fbaipublicfiles.com/deit/'
KNOWN_CHECKPOINTS = {
    'vit-base-p16_in21k.pth':
    ("the ImageNet-21k ViT-B/16 of the DyT configs: timm's jx_vit_base_patch16_224_in21k-e5005f0a"
     '.pth (https://github.com/rwightman/pytorch-image-models/releases/download/v0.1-vitjx/'
     "jx_vit_base_patch16_224_in21k-e5005f0a.pth) or Google's ViT-B_16.npz (https://storage."
     'googleapis.com/vit_models/imagenet21k/ViT-B_16.npz, the DyT code\'s)',
     'python tools/model_converters/timm2mmvitdyn.py jx_vit_base_patch16_224_in21k-e5005f0a.pth '
     '{out}'),
    'vit-tiny-p16_in21k.pth':
    ("the ImageNet-21k ViT-Ti/16 of the CPU configs (AugReg): timm's "
     'vit_tiny_patch16_224.augreg_in21k, its pytorch_model.bin (https://huggingface.co/timm/'
     'vit_tiny_patch16_224.augreg_in21k) saved as vit_tiny_patch16_224.augreg_in21k.bin, or '
     "Google's Ti_16-i21k-300ep-lr_0.001-aug_none-wd_0.03-do_0.0-sd_0.0.npz (https://storage."
     'googleapis.com/vit_models/augreg/)',
     'python tools/model_converters/timm2mmvitdyn.py vit_tiny_patch16_224.augreg_in21k.bin '
     '{out}'),
    'deit_base_patch16_224-b5f2ef4d.pth':
    (f'the DeiT-B/16 of the DeiT repository ({DEIT}deit_base_patch16_224-b5f2ef4d.pth)', None),
    'deit_small_patch16_224-cd65a155.pth':
    (f'the DeiT-S/16 of the DeiT repository ({DEIT}deit_small_patch16_224-cd65a155.pth)', None),
    'deit_tiny_patch16_224-a1311bcf.pth':
    (f'the DeiT-Ti/16 of the DeiT repository ({DEIT}deit_tiny_patch16_224-a1311bcf.pth)', None),
    'levit-192_3rdparty_in1k_20230117-8217a0f9.pth':
    ('the LeViT-192 of mmpretrain (https://download.openmmlab.com/mmclassification/v0/levit/'
     'levit-192_3rdparty_in1k_20230117-8217a0f9.pth), the ancestry of the LeViT learngenes and '
     'the Pretraining-Finetuning row of their table', None),
    'levit-384_3rdparty_in1k_20230117-f3539cce.pth':
    ('the LeViT-384 of mmpretrain (https://download.openmmlab.com/mmclassification/v0/levit/'
     'levit-384_3rdparty_in1k_20230117-f3539cce.pth), the teacher TLEG distils its Aux-Net '
     'from', None),
    'deit-base-distilled-p16.pth':
    (f'the distilled DeiT-B/16 of the DeiT repository '
     f'({DEIT}deit_base_distilled_patch16_224-df68dfff.pth)',
     'python tools/model_converters/timm2mmvitdyn.py deit_base_distilled_patch16_224-df68dfff.pth '
     '{out}'),
    'mae-vit-base-p16.pth':
    ('the MAE ViT-B/16 of the MAE repository '
     '(https://dl.fbaipublicfiles.com/mae/pretrain/mae_pretrain_vit_base.pth)',
     'python tools/model_converters/timm2mmvitdyn.py mae_pretrain_vit_base.pth {out}'),
    'dinov2-vit-base-p14.pth':
    ('the DINOv2 ViT-B/14 of the DINOv2 repository (https://dl.fbaipublicfiles.com/dinov2/'
     "dinov2_vitb14/dinov2_vitb14_pretrain.pth), or timm's vit_base_patch14_dinov2.lvd142m",
     'python tools/model_converters/timm2mmvitdyn.py dinov2_vitb14_pretrain.pth {out}'),
    'clip-vit-base-p16.pth':
    ("the OpenAI CLIP ViT-B/16 image tower: timm's vit_base_patch16_clip_quickgelu_224.openai, or "
     "OpenAI's ViT-B-16.pt, a TorchScript archive whose state_dict() is saved with torch.save "
     'first (configs/_base_/models/vit-families.py)',
     'python tools/model_converters/timm2mmvitdyn.py clip_vit_b16_state_dict.pth {out}'),
}

# The learngene files the configs read -> the config whose header shows the
# command that writes it (build_learngene.py, extract_baseline_learngene.py).
LEARNGENE_CONFIGS = 'configs/cluster_learngene/'
# yapf: disable
KNOWN_LEARNGENES = {
    'learngene_deit-b-p16_eps10_in1k.pth': 'deit-b-p16_ancestry_in1k-224px.py',
    'learngene_deit-s-p16_eps10_in1k.pth': 'deit-s-p16_ancestry_in1k-224px.py',
    'heuristic-learngene_deit-s-p16_in1k.pth': 'deit-s-p16_ancestry_in1k-224px.py',
    'auto-learngene_deit-s-p16_in1k.pth': 'deit-s-p16_ancestry_in1k-224px.py',
    'learngene_deit-ti-p16_eps10_in1k.pth': 'deit-ti-p16_ancestry_in1k-224px.py',
    'learngene_levit-192_eps10_in1k.pth': 'levit-192_ancestry_in1k-224px.py',
    'heuristic-learngene_levit-192_in1k.pth': 'levit-192_ancestry_in1k-224px.py',
    'auto-learngene_levit-192_in1k.pth': 'levit-192_ancestry_in1k-224px.py',
    'learngene_swin-b-p4-w7_eps10_in1k.pth': 'swin-b-p4-w7_ancestry_in1k-224px.py',
    'learngene_swin-t-p4-w7_eps10_in1k.pth': 'swin-t-p4-w7_ancestry_in1k-224px.py',
    'tleg-learngene_vit-s-p16_in1k.pth':
        'tleg-aux-vit-s-p16_levit-384-distill_8xb64-150e_in1k-224px.py',
}
# yapf: enable


def learngene_files(node, field: str = 'model') -> Iterator[Tuple[str, str]]:
    """(field, file) of every ``learngene='FILE'`` under ``node``."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == 'learngene' and isinstance(value, str):
                yield f'{field}.{key}', value
            else:
                yield from learngene_files(value, f'{field}.{key}')
    elif isinstance(node, (list, tuple)):
        for index, value in enumerate(node):
            yield from learngene_files(value, f'{field}[{index}]')


def check_learngene_files(cfg: Config) -> None:
    """Refuse a local learngene file that does not exist, before training builds
    the model.

    Raises:
        SetupError: Naming the field, the file and the command that writes it.
    """
    for field, path in learngene_files(cfg.get('model')):
        if not is_local_path(path) or osp.isfile(path):
            continue
        maker = KNOWN_LEARNGENES.get(osp.basename(path))
        raise SetupError(f'{field}={path!r} does not exist (relative to {os.getcwd()}). ' + (
            f'It is written by the command at the top of {LEARNGENE_CONFIGS}{maker} (from the '
            'ancestry\'s checkpoint)' if maker else
            'Write it with tools/learngene/build_learngene.py (a Cluster-Learngene learngene) '
            'or tools/learngene/extract_baseline_learngene.py (heuristic, auto, tleg)') +
                         f', or set {field} to the file you have')


def pretrained_checkpoints(node, field: str = 'model') -> Iterator[Tuple[str, str]]:
    """(field, checkpoint) of every ``init_cfg`` of type Pretrained under ``node``."""
    if isinstance(node, dict):
        init_cfg = node.get('init_cfg')
        for cfg in init_cfg if isinstance(init_cfg, list) else [init_cfg]:
            if isinstance(cfg, dict) and cfg.get('type') == 'Pretrained' and cfg.get('checkpoint'):
                yield f'{field}.init_cfg.checkpoint', cfg['checkpoint']
        for key, value in node.items():
            if key != 'init_cfg':
                yield from pretrained_checkpoints(value, f'{field}.{key}')
    elif isinstance(node, (list, tuple)):
        for index, value in enumerate(node):
            yield from pretrained_checkpoints(value, f'{field}[{index}]')


def check_pretrained_checkpoints(cfg: Config) -> None:
    """Refuse a local pretrained checkpoint that does not exist, before training
    builds the model (testing a trained checkpoint does not read it).

    Raises:
        SetupError: Naming the field, the file and how to make it.
    """
    for field, checkpoint in pretrained_checkpoints(cfg.get('model')):
        if not is_local_path(checkpoint) or osp.isfile(checkpoint):
            continue
        missing = f'{field}={checkpoint!r} does not exist (relative to {os.getcwd()})'
        source, command = KNOWN_CHECKPOINTS.get(osp.basename(checkpoint), (None, None))
        if source and not command:
            raise SetupError(f'{missing}. It is {source}, which loads as it is: download it to '
                             f'{checkpoint}, or set {field} to the file you have')
        raise SetupError(
            f'{missing}. Convert the weights once to that path with tools/model_converters/ '
            '(timm2mmvitdyn.py for timm .pth and Google .npz files, mmpretrain2mmvitdyn.py, '
            'dyt2mmvitdyn.py)' +
            (f', e.g. {command.format(out=checkpoint)} (the source: {source})' if command else '') +
            f', or set {field} to the file you have')


def build_runner(cfg: Config) -> Runner:
    """Check what would only fail later (data, schedule, AMP, CPU distribution),
    choose the model wrapper of a distributed run, then build."""
    misspelt = misspelt_top_level_keys(cfg)
    if misspelt:
        raise SetupError('; '.join(f'{key}: nothing reads this key; did you mean {known!r}? '
                                   '(a variable of your own: give it a name further from '
                                   f'{known!r})' for key, known in misspelt))
    check_schedule(cfg)
    try:
        check_data_roots(cfg)
    except FileNotFoundError as err:
        raise SetupError(str(err)) from err
    check_class_counts(cfg)
    if cfg.get('optim_wrapper', {}).get('type') == 'AmpOptimWrapper' and not _has_accelerator():
        raise SetupError('optim_wrapper type AmpOptimWrapper needs a GPU and none is visible; '
                         "on the CPU use --cfg-options optim_wrapper.type=OptimWrapper")
    if cfg.get('launcher', 'none') != 'none' and not _has_accelerator():
        if cfg.launcher != 'pytorch':
            raise SetupError(f'--launcher {cfg.launcher} on the CPU is not supported; '
                             'use tools/dist_train.sh (--launcher pytorch) with the gloo backend')
        try:
            init_cpu_distributed(cfg)
        except RuntimeError as err:
            raise SetupError(str(err)) from err
    if cfg.get('launcher', 'none') != 'none':
        choose_model_wrapper(cfg, on_cpu=not _has_accelerator())
    try:
        runner = RUNNERS.build(cfg) if 'runner_type' in cfg else Runner.from_cfg(cfg)
    except TypeError as err:
        message = unknown_argument_message(cfg, err, scoped_registries(cfg.default_scope))
        if message is None:
            raise
        raise SetupError(message) from err
    runner.register_hook(ClassCountCheckHook())
    return runner


def scoped_registries(scope: str) -> List[Registry]:
    """The registries a config's types are looked up in, as ``scope`` sees them."""
    from mmengine import registry
    found = []
    for root in (registry.MODELS, registry.DATASETS, registry.TRANSFORMS, registry.HOOKS,
                 registry.METRICS, registry.OPTIM_WRAPPERS, registry.PARAM_SCHEDULERS,
                 registry.VISUALIZERS):
        with root.switch_scope_and_registry(scope) as scoped:
            found.append(scoped)
    return found
