"""``head_loss`` (mmpretrain's private ``ClsHead._get_loss``) gives what the
head's public ``loss`` gives from the features, for the heads and labels
the configs use; a change of the private API in mmpretrain fails here."""
import pytest
import torch
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

from mmvitdyn.models.classifiers.head_loss import head_loss

HEADS = {
    'linear':
    dict(type='mmpretrain.LinearClsHead', num_classes=5, in_channels=8),
    'smoothed':
    dict(
        type='mmpretrain.LinearClsHead',
        num_classes=5,
        in_channels=8,
        loss=dict(type='mmpretrain.LabelSmoothLoss', label_smooth_val=0.1, mode='original')),
    'vision-transformer':
    dict(type='mmpretrain.VisionTransformerClsHead', num_classes=5, in_channels=8),
}


def samples(soft: bool):
    """Four samples: hard labels, or the mixed scores of a batch augment."""
    gen = torch.Generator().manual_seed(1)
    out = []
    for label in (0, 3, 4, 1):
        sample = DataSample().set_gt_label(label)
        if soft:
            sample.set_gt_score(torch.rand(5, generator=gen).softmax(0))
        out.append(sample)
    return out


@pytest.mark.parametrize('soft', [False, True], ids=['labels', 'mixed-scores'])
@pytest.mark.parametrize('name', sorted(HEADS))
def test_the_loss_of_the_logits_is_the_heads_loss_of_the_features(name, soft):
    torch.manual_seed(0)
    head = MODELS.build(HEADS[name])
    head.init_weights()
    feats = (torch.randn(4, 8), )  # a backbone's class tokens
    data = samples(soft)
    expected = head.loss(feats, data)['loss']
    assert torch.equal(head_loss(head, head(feats), data), expected)
