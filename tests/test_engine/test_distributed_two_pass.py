"""Two gloo processes train DyT's two-pass step as one process does on the whole batch.

Each rank takes its half of a global batch of 8. The dispatchers run without
Gumbel noise (``gumbel=False``): noise drawn per rank for 4 images cannot be
the noise one process draws for 8. The classification and distillation
losses are batch means, so the all-reduced mean of the two ranks' gradients is
the gradient of the global batch; the rate loss is the square of a batch mean,
a per-rank statistic (as in any data-parallel DyT run), so with it on the
ranks' step is the mean of single-process steps on each half. SGD with lr 1:
a step moves each weight by minus its gradient. The single-process reference
is the one-graph ``loss()`` with ``update_params``, not the two-pass step.
"""
import socket

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from mmengine.config import Config
from mmengine.registry import MODEL_WRAPPERS, DefaultScope

import mmvitdyn  # noqa: F401
from helpers.classifiers import dyt_classifier, labelled_batch, sgd
from helpers.dyt import spread_gates
from helpers.models import tiny_backbone_cfg
from mmvitdyn.engine import SetupError
from mmvitdyn.engine.runner_setup import choose_model_wrapper

WORLD, GLOBAL_BATCH = 2, 8

# name -> (classifier arguments, backbone arguments, wrapper arguments,
#          accumulative_counts, iterations)
CASES = {
    'global batch': (dict(rate_loss_weight=0.0), dict(), dict(), 1, 1),
    # The head reads block 1 of 3: block 2's adapter is in no graph (unused), its
    # dispatcher in the rate loss's only.
    'rate loss, unused-parameter search':
    (dict(), dict(out_indices=1), dict(find_unused_parameters=True), 1, 1),
    'accumulate 2 iterations': (dict(rate_loss_weight=0.0), dict(), dict(), 2, 2),
}
UNUSED = {
    'backbone.blocks.2.adapter.down.weight', 'backbone.blocks.2.adapter.down.bias',
    'backbone.blocks.2.adapter.up.weight', 'backbone.blocks.2.adapter.up.bias'
}


def build(classifier_args, backbone_args):
    model = dyt_classifier(
        backbone=tiny_backbone_cfg(
            'DyTViT',
            adapter_cfg=dict(bottleneck=8, scale=1.0, dropout=0.0),
            dispatcher_cfg=dict(tau=5.0, gumbel=False),
            **backbone_args),
        **classifier_args)
    spread_gates(model.backbone)  # each image its own activation rate, about half
    return model.train()


def iteration_batch(iteration, part=slice(None)):
    """The global batch of ``iteration`` (seeded by it), or its ``part``."""
    data = labelled_batch(GLOBAL_BATCH, seed=10 + iteration)
    return {key: value[part] for key, value in data.items()}


def trainable(model):
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def counting_allreduce(calls, bucket):
    """DDP's all-reduce (mean over ranks) of a gradient bucket, recorded in ``calls``."""
    calls.append(bucket.index())
    reduced = dist.all_reduce(bucket.buffer().div_(WORLD), async_op=True)
    return reduced.get_future().then(lambda fut: fut.value()[0])


def worker(rank, port, out_dir):
    """Every case on this rank's half of each global batch; trainable weights after
    the last iteration and the all-reduce calls of each iteration go to a file."""
    dist.init_process_group(
        'gloo', init_method=f'tcp://127.0.0.1:{port}', rank=rank, world_size=WORLD)
    torch.set_num_threads(1)
    half = slice(rank * GLOBAL_BATCH // WORLD, (rank + 1) * GLOBAL_BATCH // WORLD)
    out = {}
    for name, (classifier_args, backbone_args, wrapper_args, accumulate,
               iterations) in CASES.items():
        ddp = MODEL_WRAPPERS.build(
            dict(type='CPUTwoPassDistributedDataParallel', **wrapper_args),
            default_args=dict(module=build(classifier_args, backbone_args)))
        calls = []
        ddp.register_comm_hook(calls, counting_allreduce)
        optim_wrapper = sgd(ddp.module, accumulative_counts=accumulate)
        reductions = []
        for iteration in range(iterations):
            before = len(calls)
            ddp.train_step(iteration_batch(iteration, half), optim_wrapper)
            reductions.append(len(calls) - before)
        out[name] = dict(params=trainable(ddp.module), reductions=reductions)
    torch.save(out, f'{out_dir}/rank{rank}.pt')
    dist.destroy_process_group()


def free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


@pytest.fixture(scope='module')
def ranks(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp('ddp')
    mp.spawn(worker, args=(free_port(), str(out_dir)), nprocs=WORLD, join=True)
    return [torch.load(out_dir / f'rank{rank}.pt') for rank in range(WORLD)]


def single_process(name, part=slice(None)):
    """Trainable weights after the case's iterations in this process, on the global
    batches (or their ``part``), each a ``loss()`` (both passes in one graph) given to
    ``update_params``."""
    classifier_args, backbone_args, _, accumulate, iterations = CASES[name]
    model = build(classifier_args, backbone_args)
    optim_wrapper = sgd(model, accumulative_counts=accumulate)
    for iteration in range(iterations):
        data = model.data_preprocessor(iteration_batch(iteration, part), True)
        losses = model.loss(data['inputs'], data['data_samples'])
        optim_wrapper.update_params(model.parse_losses(losses)[0])
    return trainable(model)


def assert_same_weights(actual, expected):
    assert actual.keys() == expected.keys()
    for name in expected:
        torch.testing.assert_close(actual[name], expected[name], rtol=0, atol=1e-6, msg=name)


@pytest.mark.parametrize('name', list(CASES))
def test_ranks_end_identical_after_one_all_reduce_per_update(ranks, name):
    first, second = (rank[name] for rank in ranks)
    assert all(torch.equal(first['params'][k], second['params'][k]) for k in first['params'])
    # The tiny model's trainable weights fit in one bucket: one all-reduce per
    # update, none on an iteration that only accumulates.
    updates = [0] * (CASES[name][3] - 1) + [1]
    assert first['reductions'] == second['reductions'] == updates


@pytest.mark.parametrize('name', ['global batch', 'accumulate 2 iterations'])
def test_step_equals_one_process_on_the_global_batch(ranks, name):
    start = trainable(build(*CASES[name][:2]))
    expected = single_process(name)
    assert_same_weights(ranks[0][name]['params'], expected)
    # Not a trivial equality: the step moves the weights, and one rank's half alone
    # would move them elsewhere.
    assert max(float((expected[k] - start[k]).abs().max()) for k in start) > 1e-2
    alone = single_process(name, slice(0, GLOBAL_BATCH // WORLD))
    assert max(float((expected[k] - alone[k]).abs().max()) for k in start) > 1e-3


def test_with_the_rate_loss_the_step_is_the_mean_of_the_halves_steps(ranks):
    name = 'rate loss, unused-parameter search'
    halves = [
        single_process(name, slice(r * GLOBAL_BATCH // WORLD, (r + 1) * GLOBAL_BATCH // WORLD))
        for r in range(WORLD)
    ]
    expected = {k: sum(h[k] for h in halves) / WORLD for k in halves[0]}
    assert_same_weights(ranks[0][name]['params'], expected)
    # The case has parameters that no loss reaches (DDP must search for them), and they
    # stay; every other trainable weight moves.
    model = build(*CASES[name][:2])
    start = trainable(model)
    data = model.data_preprocessor(iteration_batch(0), True)
    model.parse_losses(model.loss(data['inputs'], data['data_samples']))[0].backward()
    assert {n for n, p in model.named_parameters() if p.requires_grad and p.grad is None} == UNUSED
    moved = {k for k in start if not torch.equal(expected[k], start[k])}
    assert moved == set(start) - UNUSED


@pytest.mark.parametrize('model_type,on_cpu,wrapper', [
    ('DyTImageClassifier', True, 'CPUTwoPassDistributedDataParallel'),
    ('DyTImageClassifier', False, 'TwoPassDistributedDataParallel'),
    ('ImageClassifier', True, 'CPUDistributedDataParallel'),
    ('ImageClassifier', False, 'MMDistributedDataParallel'),
])
def test_distributed_runs_choose_the_two_pass_wrapper_for_two_pass_models(
        model_type, on_cpu, wrapper):
    cfg = Config(
        dict(default_scope='mmpretrain', model=dict(type=model_type), find_unused_parameters=True))
    choose_model_wrapper(cfg, on_cpu)
    assert cfg.model_wrapper_cfg == dict(
        type=wrapper, broadcast_buffers=False, find_unused_parameters=True)


def test_a_wrapper_named_in_the_config_is_kept():
    named = dict(type='MMDistributedDataParallel', find_unused_parameters=False)
    cfg = Config(
        dict(
            default_scope='mmpretrain',
            model=dict(type='DyTImageClassifier'),
            model_wrapper_cfg=named))
    choose_model_wrapper(cfg, on_cpu=False)
    assert cfg.model_wrapper_cfg == named


@pytest.mark.parametrize('current_scope', [None, 'mmpretrain', 'mmdet'])
@pytest.mark.parametrize('on_cpu,wrapper', [(True, 'CPUTwoPassDistributedDataParallel'),
                                            (False, 'TwoPassDistributedDataParallel')])
def test_a_wrapper_config_without_type_gets_the_two_pass_wrapper(on_cpu, wrapper, current_scope):
    # A scoped model type means the same whatever scope an earlier Runner
    # left current in the process.
    cfg = Config(
        dict(
            model=dict(type='mmpretrain.DyTImageClassifier'),
            model_wrapper_cfg=dict(find_unused_parameters=True)))
    with DefaultScope.overwrite_default_scope(current_scope):
        choose_model_wrapper(cfg, on_cpu)
    assert cfg.model_wrapper_cfg == dict(type=wrapper, find_unused_parameters=True)


def test_an_unregistered_model_type_is_named():
    cfg = Config(dict(default_scope='mmpretrain', model=dict(type='DyTImageClassifer')))
    with pytest.raises(SetupError, match="model.type='DyTImageClassifer' is not a registered"):
        choose_model_wrapper(cfg, on_cpu=True)


@pytest.mark.parametrize('module,kwargs,error,message', [
    (torch.nn.Linear(2, 2), dict(), TypeError, 'Linear has none'),
    (None, dict(static_graph=True), ValueError, 'static_graph=True'),
    (None, dict(detect_anomalous_params=True), ValueError, 'detect_anomalous_params=True'),
])
def test_two_pass_wrapper_refuses_what_it_cannot_run(module, kwargs, error, message):
    module = build({}, {}) if module is None else module
    with pytest.raises(error, match=message):
        MODEL_WRAPPERS.build(
            dict(type='CPUTwoPassDistributedDataParallel', **kwargs),
            default_args=dict(module=module))
