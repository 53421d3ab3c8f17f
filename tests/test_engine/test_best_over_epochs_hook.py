"""BestOverEpochsHook: the best validation metric over epochs, next to the current one."""
from types import SimpleNamespace

import pytest
import torch
from mmengine.evaluator import BaseMetric
from mmengine.logging import MessageHub
from mmengine.model import BaseModel
from mmengine.runner import Runner
from torch.utils.data import DataLoader, TensorDataset

from mmvitdyn.engine import BestOverEpochsHook

# top-1 of epochs 1..5 (not monotone: the best is epoch 2, the last is lower)
SCORES = [40.0, 75.0, 60.0, 75.0, 70.0]
# the Runner test's epochs 1..5: the best is epoch 1, before the run is resumed
RUN_SCORES = [80.0, 50.0, 60.0, 75.0, 70.0]


def fake_runner(name):
    return SimpleNamespace(message_hub=MessageHub.get_instance(name))


@pytest.mark.parametrize('rule,pick', [('greater', max), ('less', min)])
def test_best_value_after_each_epoch(rule, pick):
    runner = fake_runner(f'best-{rule}')
    hook = BestOverEpochsHook(rule=rule)
    for epoch, score in enumerate(SCORES, 1):
        metrics = {'accuracy/top1': score, 'accuracy/top5': 99.0}
        hook.after_val_epoch(runner, metrics)
        expected = pick(SCORES[:epoch])
        assert metrics == {
            'accuracy/top1': score,
            'accuracy/top5': 99.0,
            'accuracy/top1_best_epoch': expected
        }
        logged = runner.message_hub.get_scalar('val/accuracy/top1_best_epoch')
        assert logged.current() == expected


def test_best_value_survives_a_resume():
    """The best lives in the message hub's runtime info, which checkpoints keep."""
    before = fake_runner('best-before')
    hook = BestOverEpochsHook(key='mIoU', suffix='_best')
    for score in SCORES[:2]:
        hook.after_val_epoch(before, {'mIoU': score})
    after = fake_runner('best-after')
    after.message_hub.load_state_dict(before.message_hub.state_dict())
    metrics = {'mIoU': SCORES[2]}
    BestOverEpochsHook(key='mIoU', suffix='_best').after_val_epoch(after, metrics)
    assert metrics['mIoU_best'] == 75.0


def test_bad_settings_name_the_field():
    with pytest.raises(ValueError, match=r"rule='max'.*allowed: \('greater', 'less'\)"):
        BestOverEpochsHook(rule='max')
    with pytest.raises(ValueError, match='suffix'):
        BestOverEpochsHook(suffix='')
    with pytest.raises(KeyError, match=r"key='accuracy/top1'.*\['mIoU'\]"):
        BestOverEpochsHook().after_val_epoch(fake_runner('best-missing'), {'mIoU': 1.0})


class EpochScore(BaseMetric):
    """A metric 'accuracy/top1' that gives RUN_SCORES[e - 1] after epoch e."""
    default_prefix = 'accuracy'

    def process(self, data_batch, data_samples):
        self.results.append(len(data_samples))

    def compute_metrics(self, results):
        # RuntimeInfoHook's 'epoch' is the 0-based index of the epoch just trained
        return {'top1': RUN_SCORES[MessageHub.get_current_instance().get_info('epoch')]}


class Linear(BaseModel):

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(2, 1)

    def forward(self, inputs, labels, mode='tensor'):
        out = self.fc(inputs)
        if mode == 'loss':
            return {'loss': ((out - labels)**2).mean()}
        return list(out)


def run(work_dir, max_epochs, resume=False):
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(8, 2), torch.randn(8, 1))
    loader = dict(
        dataset=data,
        sampler=dict(type='DefaultSampler', shuffle=False),
        collate_fn=dict(type='default_collate'),
        batch_size=4)
    runner = Runner(
        model=Linear(),
        work_dir=str(work_dir),
        train_dataloader=DataLoader(data, batch_size=4),
        val_dataloader=loader,
        optim_wrapper=dict(optimizer=dict(type='SGD', lr=0.01)),
        train_cfg=dict(by_epoch=True, max_epochs=max_epochs, val_interval=1),
        val_cfg=dict(),
        val_evaluator=[EpochScore()],
        custom_hooks=[dict(type='BestOverEpochsHook')],
        default_hooks=dict(checkpoint=dict(type='CheckpointHook', interval=1)),
        resume=resume,
        experiment_name=f'best-{max_epochs}-{resume}')
    runner.train()
    return runner


def test_a_training_run_logs_the_best_and_the_last_epoch(tmp_path):
    """In a Runner: the hook runs after the metrics reach the message hub and
    before the logger prints them, and a resumed run keeps the best."""
    run(tmp_path, max_epochs=2)
    runner = run(tmp_path, max_epochs=5, resume=True)
    hub = runner.message_hub
    assert hub.get_scalar('val/accuracy/top1').current() == RUN_SCORES[-1] == 70.0
    # mmengine writes epoch 2's checkpoint before validating epoch 2, so the
    # resumed run knows the validations of epoch 1 and then runs epochs 3..5
    seen = RUN_SCORES[:1] + RUN_SCORES[2:]
    best = hub.get_scalar('val/accuracy/top1_best_epoch').data[0].tolist()
    assert best == [max(seen[:i]) for i in range(1, 5)] == [80.0] * 4
    log = ''.join(p.read_text() for p in tmp_path.glob('*/*.log'))
    assert 'accuracy/top1: 70.0000  accuracy/top1_best_epoch: 80.0000' in log
