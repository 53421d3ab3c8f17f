"""DyT's terms in the loss dicts of the small DyT Mask R-CNN and UperNet configs."""
import pytest
import torch
from mmengine.config import Config
from mmengine.registry import MODELS, init_default_scope
from mmengine.structures import PixelData

from helpers.configs import DYT_ADE_CFG, DYT_COCO_CFG

TASK_KEYS = {
    'det': {'loss_rpn_cls', 'loss_cls', 'loss_mask'},
    'seg': {'decode.loss_ce', 'aux.loss_ce'}
}


def build(task, **options):
    cfg = Config.fromfile(DYT_COCO_CFG if task == 'det' else DYT_ADE_CFG)
    cfg.merge_from_dict(options)
    init_default_scope(cfg.default_scope)
    torch.manual_seed(0)
    model = MODELS.build(cfg.model)
    model.init_weights()
    return model.train()


def batch(task, model):
    torch.manual_seed(1)
    if task == 'det':
        from mmdet.testing import demo_mm_inputs
        data = demo_mm_inputs(
            batch_size=2,
            image_shapes=[(3, 128, 128)] * 2,
            num_items=[2, 3],
            num_classes=3,
            with_mask=True)
    else:
        from mmseg.structures import SegDataSample
        samples = []
        for _ in range(2):
            sample = SegDataSample(metainfo=dict(img_shape=(128, 128), ori_shape=(128, 128)))
            sample.gt_sem_seg = PixelData(data=torch.randint(0, 5, (1, 128, 128)))
            samples.append(sample)
        data = dict(
            inputs=[torch.randint(0, 256, (3, 128, 128), dtype=torch.uint8)] * 2,
            data_samples=samples)
    data = model.data_preprocessor(data, True)
    return data['inputs'], data['data_samples']


@pytest.mark.parametrize('task', ['det', 'seg'])
def test_rate_loss_and_activation_rates_join_the_task_losses(task):
    model = build(task)
    losses = model.loss(*batch(task, model))
    assert TASK_KEYS[task] <= set(losses)
    # 2 (mean mask of the patch tokens over blocks and images - target rate 0.5)^2
    backbone = model.backbone
    extra = backbone.num_prefix_tokens  # ViT (seg): the class token; ViTDet (det): none
    rate = torch.cat([block.masks['mlp'][:, extra:].flatten() for block in backbone.blocks]).mean()
    assert 0 < rate < 1 and backbone.target_rate == 0.5
    torch.testing.assert_close(losses['loss_rate'], 2.0 * (rate - 0.5)**2)
    rates = {k for k in losses if k.startswith('act_rate')}
    assert rates == {'act_rate'} | {f'act_rate/{i}.mlp' for i in range(4)}
    total, log_vars = model.parse_losses(losses)
    task_total = sum(float(v) for k, v in log_vars.items() if 'loss' in k and k != 'loss')
    assert float(total) == pytest.approx(task_total, rel=1e-5)  # rates logged, not summed
    assert 'act_rate' in log_vars
    total.backward()
    assert model.backbone.blocks[0].dispatchers['mlp'].gate.weight.grad.abs().sum() > 0


@pytest.mark.parametrize('task', ['det', 'seg'])
def test_complete_pass_and_distillation_are_optional_terms(task):
    model = build(task, **{'model.complete_loss': True, 'model.distill_loss': True})
    losses = model.loss(*batch(task, model))
    assert {f'{k}_complete' for k in TASK_KEYS[task]} <= set(losses)
    assert float(losses['loss_distill']) > 0
    assert {'loss_rate', 'act_rate'} <= set(losses)


def test_without_dispatch_nothing_is_added():
    model = build('seg', **{'model.backbone.dispatch': None})
    losses = model.loss(*batch('seg', model))
    assert set(losses) == {'decode.loss_ce', 'decode.acc_seg', 'aux.loss_ce', 'aux.acc_seg'}


def test_a_non_dyt_backbone_is_refused():
    cfg = Config.fromfile(DYT_ADE_CFG)
    cfg.model.backbone = dict(
        type='ViT',
        arch=cfg.model.backbone.arch,
        img_size=128,
        out_indices=(0, 1, 2, 3),
        out_type='featmap')
    init_default_scope(cfg.default_scope)
    with pytest.raises(TypeError, match='DyTEncoderDecoder needs a DyT backbone.*; ViT is not one'):
        MODELS.build(cfg.model)
