"""A backbone whose frozen weights no checkpoint filled refuses to train (its
adapters would be tuned on a random ViT without a word) until weights arrive
in any of the ways OpenMMLab loads them."""
import pytest
import torch
from mmengine.runner import load_checkpoint
from torch import nn

from helpers.configs import DYT_DIGITS_CFG
from helpers.models import TINY_ARCH, images, tiny
from helpers.tools import run_tool
from mmvitdyn.models import DyTViT, ViT

REFUSAL = 'would tune its adapters on frozen weights that no checkpoint filled'


def random_frozen(**kwargs) -> DyTViT:
    """A DyT backbone as a config without weights builds it (no objective needed)."""
    return tiny(DyTViT, **{'allow_random_frozen': False, 'dispatch': None, **kwargs})


def trains(backbone) -> bool:
    """Whether a training forward runs (False: it refused)."""
    try:
        backbone.train()(images(1))
    except RuntimeError as err:
        assert REFUSAL in str(err) and 'allow_random_frozen=True' in str(err)
        return False
    return True


def test_random_frozen_weights_infer_but_do_not_train():
    backbone = random_frozen()
    with torch.no_grad():
        backbone.eval()(images(1))
    assert not trains(backbone)
    assert trains(random_frozen(freeze_pretrained=False))  # full fine-tuning
    assert trains(tiny(DyTViT, dispatch=None, allow_random_frozen=True))


def test_weights_from_load_state_dict_init_cfg_or_the_runner_s_loader(tmp_path):
    vit_state = tiny(ViT, seed=3).state_dict()
    backbone = random_frozen()
    backbone.load_state_dict(vit_state, strict=False)
    assert trains(backbone)

    torch.save(vit_state, tmp_path / 'vit.pth')
    assert trains(
        random_frozen(init_cfg=dict(type='Pretrained', checkpoint=str(tmp_path / 'vit.pth'))))

    backbone = random_frozen()
    load_from(backbone, vit_state, tmp_path / 'model.pth')  # also --resume's loader
    assert trains(backbone)


def test_a_state_dict_without_the_frozen_weights_does_not_count():
    backbone = random_frozen()
    tuned = {k: v for k, v in backbone.state_dict().items() if '.adapter.' in k}
    backbone.load_state_dict(tuned, strict=False)
    assert not trains(backbone)


def load_from(backbone, state: dict, path) -> None:
    """As the Runner's ``load_from``: mmengine's loader, which only warns about
    keys it cannot use."""
    model = nn.Module()
    model.backbone = backbone
    torch.save({'state_dict': {f'backbone.{k}': v for k, v in state.items()}}, path)
    load_checkpoint(model, str(path), map_location='cpu')


def test_a_checkpoint_of_another_width_or_layout_does_not_count(tmp_path):
    wider = tiny(ViT, arch=dict(TINY_ARCH, embed_dims=48, feedforward_channels=96)).state_dict()
    backbone = random_frozen()
    load_from(backbone, wider, tmp_path / 'wider.pth')
    assert not trains(backbone)

    # another library's names: only the tokens' keys are ours
    vit_state = tiny(ViT, seed=3).state_dict()
    foreign = {k.replace('blocks.', 'layers.'): v for k, v in vit_state.items()}
    backbone = random_frozen()
    load_from(backbone, foreign, tmp_path / 'foreign.pth')
    with pytest.raises(RuntimeError) as error:
        backbone.train()(images(1))
    assert 'keep their random initialisation (blocks.0.' in str(error.value)
    assert backbone.filled_frozen >= {'cls_token', 'pos_embed'}


@pytest.mark.parametrize('value', [1, 'true', None])
def test_the_switch_is_a_bool(value):
    with pytest.raises(ValueError, match=f'allow_random_frozen={value!r} must be True or False'):
        random_frozen(allow_random_frozen=value)


def test_train_py_without_load_from_stops_at_the_first_step(data_workspace, tmp_path):
    """The digits DyT config expects the trained digits ViT as load_from."""
    proc = run_tool(['train.py', DYT_DIGITS_CFG, '--work-dir', tmp_path],
                    data_workspace,
                    check=False)
    assert proc.returncode != 0 and REFUSAL in proc.stderr, proc.stderr[-2000:]


@pytest.mark.parametrize('kind', ['sparse', 'complex'])
def test_a_tensor_the_copy_cannot_use_does_not_count(kind, tmp_path):
    """Right shapes, but no real values to copy: mmengine's loader only warns
    (sparse) or copies the real part (complex)."""
    vit_state = tiny(ViT, seed=3).state_dict()
    name = 'blocks.0.attn.qkv.weight'
    value = vit_state[name]
    vit_state[name] = {
        'sparse':
        lambda: torch.sparse_coo_tensor(torch.zeros(2, 0, dtype=torch.long), [], value.shape),
        'complex': lambda: value.to(torch.complex64),
    }[kind]()
    backbone = random_frozen()
    load_from(backbone, vit_state, tmp_path / f'{kind}.pth')
    with pytest.raises(RuntimeError) as error:
        backbone.train()(images(1))
    assert f'random initialisation ({name})' in str(error.value)
