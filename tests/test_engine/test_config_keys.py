"""A misspelt config key is named as written, with the key it was meant to be."""
import pytest

from helpers.configs import DYT_DIGITS_CFG, FCN_ADE_CFG
from helpers.tools import run_tool
from mmvitdyn.engine.config_keys import init_arguments, misspelt_top_level_keys


class Base:

    def __init__(self, a, b=1, **kwargs):
        pass


class PassesOn(Base):

    def __init__(self, c, *args, **kwargs):
        super().__init__(*args, **kwargs)


class Closed(Base):

    def __init__(self, d):
        super().__init__(a=d)


class Inherited(PassesOn):
    pass


def test_init_arguments_follow_the_keywords_up_the_mro():
    assert init_arguments(PassesOn) == ['a', 'b', 'c']
    assert init_arguments(Inherited) == ['a', 'b', 'c']
    assert init_arguments(Closed) == ['d']  # takes no **kwargs: Base's are not its


def test_a_top_level_key_near_a_runner_key():
    from mmengine.config import Config
    cfg = Config(
        dict(train_cfgg=dict(max_epochs=2), val_evaluater=[], crop_size=(4, 4), test_pipeline=[]))
    assert misspelt_top_level_keys(cfg) == [('train_cfgg', 'train_cfg'),
                                            ('val_evaluater', 'val_evaluator')]


@pytest.mark.parametrize('config,option,message', [
    (DYT_DIGITS_CFG, 'model.backbone.target_rte=0.5',
     "model.backbone.target_rte: DyTViT has no argument 'target_rte'; did you mean "
     "'target_rate'? Its arguments: act_cfg, adapter_cfg, "),
    (FCN_ADE_CFG, 'model.decode_head.num_clases=5',
     "model.decode_head.num_clases: FCNHead has no argument 'num_clases'; did you mean "
     "'num_classes'?"),
    (DYT_DIGITS_CFG, 'train_cfgg.max_epochs=2',
     "train_cfgg: nothing reads this key; did you mean 'train_cfg'?"),
])
def test_train_names_the_misspelt_key(data_workspace, tmp_path, config, option, message):
    proc = run_tool(['train.py', config, '--work-dir', tmp_path, '--cfg-options', option],
                    data_workspace,
                    check=False)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr[-2000:]
    assert 'Traceback' not in proc.stderr
