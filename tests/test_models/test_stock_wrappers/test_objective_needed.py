"""A DyT / DynamicViT backbone in OpenMMLab's own models (which add no rate or
keep-ratio loss) stops at the first training step, naming the model to use."""
import pytest
import torch
from mmengine.config import Config
from mmengine.registry import MODELS, DefaultScope

from helpers.configs import DYT_ADE_CFG, DYT_COCO_CFG, DYT_CONFIG_DIR, DYT_DIGITS_CFG

DYNAMICVIT_DIGITS_CFG = DYT_CONFIG_DIR / \
    'vit-mini-p4-adaptformer-dynamicvit_1xb32-8e_digits-32px.py'
# config, the stock model, its scope, an input size, the DyT models the error names
CASES = {
    'DyTViT in ImageClassifier': (DYT_DIGITS_CFG, 'ImageClassifier', 'mmpretrain', 32,
                                  'DyTImageClassifier / DyTEncoderDecoder / DyTMaskRCNN'),
    'DynamicViT in ImageClassifier':
    (DYNAMICVIT_DIGITS_CFG, 'ImageClassifier', 'mmpretrain', 32, 'DynamicViTClassifier'),
    'DyTViT in EncoderDecoder': (DYT_ADE_CFG, 'EncoderDecoder', 'mmseg', 128,
                                 'DyTImageClassifier / DyTEncoderDecoder / DyTMaskRCNN'),
    'DyTViTDet in MaskRCNN':
    (DYT_COCO_CFG, 'MaskRCNN', 'mmdet', 128, 'DyTMaskRCNN / DyTEncoderDecoder'),
}


def stock_model(config, model_type, scope, **backbone):
    cfg = Config.fromfile(str(config))
    cfg.model.type = model_type
    for key in ('complete_loss', 'distill_loss', 'rate_loss_weight', 'distill_weight',
                'token_distill'):
        cfg.model.pop(key, None)
    cfg.model.backbone.update(allow_random_frozen=True, **backbone)
    cfg.model.backbone.pop('init_cfg', None)
    with DefaultScope.overwrite_default_scope(scope):
        return MODELS.build(cfg.model)


@pytest.mark.parametrize('case', sorted(CASES))
def test_training_in_a_stock_model_stops_and_names_the_dyt_model(case):
    config, model_type, scope, size, named = CASES[case]
    model = stock_model(config, model_type, scope)
    x = torch.randn(1, 3, size, size)
    with torch.no_grad():
        model.eval().extract_feat(x)  # inference needs no objective
    with pytest.raises(RuntimeError) as error:
        model.train().extract_feat(x)
    message = str(error.value)
    assert f'build it in {named} instead of' in message
    assert 'backbone.attach_objective' in message


def test_adaptformer_in_a_stock_model_trains():
    """Without token selection (dispatch=None) the task loss is the whole objective."""
    model = stock_model(DYT_DIGITS_CFG, 'ImageClassifier', 'mmpretrain', dispatch=None)
    model.train().extract_feat(torch.randn(2, 3, 32, 32))[0].sum().backward()
