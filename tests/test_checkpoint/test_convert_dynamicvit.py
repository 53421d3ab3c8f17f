"""Official DynamicViT checkpoints (raoyongming/DynamicViT, models/dyvit.py)
convert to our DynamicViT: its prediction modules compute what the official
``PredictorLG`` computes on the same weights, written out here in plain torch."""
import pytest
import torch
import torch.nn.functional as F

from helpers.models import TINY_ARCH, tiny
from helpers.tools import load_tool
from mmvitdyn.checkpoint import (convert_dynamicvit, detect_format, load_state_dict_file,
                                 to_classifier)
from mmvitdyn.models import DynamicViT

C = TINY_ARCH['embed_dims']
PRUNE_LOC = (1, 2)


@pytest.fixture(scope='module')
def official():
    """A DynamicViT-DeiT state dict in the official names: a timm ViT (ours
    shares them) and ``score_predictor.{k}`` with random values large enough
    that LayerNorm, GELU and the global mean all matter."""
    gen = torch.Generator().manual_seed(0)

    def r(*shape, scale=1., offset=0.):
        return offset + scale * torch.randn(*shape, generator=gen)

    state = {k: v.clone() for k, v in tiny().state_dict().items()}
    state['head.weight'], state['head.bias'] = r(5, C), r(5)
    for k in range(len(PRUNE_LOC)):
        p = f'score_predictor.{k}.'
        state[p + 'in_conv.0.weight'], state[p + 'in_conv.0.bias'] = r(C, offset=1.), r(C)
        state[p + 'in_conv.1.weight'], state[p + 'in_conv.1.bias'] = r(C, C, scale=0.5), r(C)
        for index, (out, inp) in zip((0, 2, 4), ((C // 2, C), (C // 4, C // 2), (2, C // 4))):
            state[f'{p}out_conv.{index}.weight'] = r(out, inp, scale=inp**-0.5 * 2)
            state[f'{p}out_conv.{index}.bias'] = r(out, scale=0.5)
    return state


def official_predictor(state, k, x, policy):
    """PredictorLG.forward of the official code: in_conv (LayerNorm, Linear,
    GELU), the first half of the channels per token, the second half averaged
    over the tokens weighted by ``policy`` (B, N, 1), then out_conv (Linear,
    GELU, Linear, GELU, Linear, LogSoftmax)."""

    def t(name):
        return state[f'score_predictor.{k}.{name}']

    x = F.layer_norm(x, (C, ), t('in_conv.0.weight'), t('in_conv.0.bias'))  # eps 1e-5
    x = F.gelu(x @ t('in_conv.1.weight').T + t('in_conv.1.bias'))
    half = C // 2
    local = x[:, :, :half]
    glob = (x[:, :, half:] * policy).sum(1, keepdim=True) / policy.sum(1, keepdim=True)
    x = torch.cat([local, glob.expand(-1, x.shape[1], -1)], dim=-1)
    x = F.gelu(x @ t('out_conv.0.weight').T + t('out_conv.0.bias'))
    x = F.gelu(x @ t('out_conv.2.weight').T + t('out_conv.2.bias'))
    return torch.log_softmax(x @ t('out_conv.4.weight').T + t('out_conv.4.bias'), dim=-1)


def test_predictors_compute_the_official_predictor(official):
    assert detect_format(official) == 'dynamicvit'
    model = tiny(DynamicViT, adapter_cfg=dict(bottleneck=4), prune_loc=PRUNE_LOC)
    report = model.load_state_dict(convert_dynamicvit(official), strict=False)
    assert report.unexpected_keys == ['head.weight', 'head.bias']
    assert report.missing_keys and all('.adapter.' in k for k in report.missing_keys)
    # 7 tokens; image 0 keeps all, image 1 one token, image 2 four.
    x = torch.randn(3, 7, C, generator=torch.Generator().manual_seed(1)) * 2
    keep = torch.ones(3, 7)
    keep[1, 1:] = 0
    keep[2, torch.tensor([0, 2, 5])] = 0
    with torch.no_grad():
        for k, predictor in enumerate(model.predictors):
            expected = official_predictor(official, k, x, keep.unsqueeze(-1))
            torch.testing.assert_close(predictor(x, keep), expected)
            # The policy matters: keeping every token gives other scores.
            everything = official_predictor(official, k, x, torch.ones(3, 7, 1))
            assert (expected[1:] - everything[1:]).abs().max() > 1e-2


@pytest.mark.parametrize(
    'key',
    [
        'score_predictor.0.out_conv.6.weight',  # a layer PredictorLG does not have
        'score_predictor.1.in_conv.2.weight',
        'patch_embed.conv.0.weight',  # LV-ViT's convolutional stem
        'aux_head.weight',  # LV-ViT's token-labelling head
        'layers.0.blocks.0.attn.relative_position_bias_table',  # the Swin model
        'blocks.0.attn.q_norm.weight',
    ])
def test_keys_outside_its_deit_models_are_refused(official, key):
    with pytest.raises(
            ValueError,
            match=rf"DynamicViT checkpoint keys \['{key}'\] are not parts "
            r'of its DeiT models .*LV-ViT, Swin and ConvNeXt models are not supported'):
        convert_dynamicvit({**official, key: torch.zeros(2)})


def test_cli_writes_a_classifier_checkpoint(tmp_path, capsys, official):
    torch.save(dict(model=official), tmp_path / 'dynamicvit.pth')
    load_tool('model_converters/dynamicvit2mmvitdyn.py').main(
        [str(tmp_path / 'dynamicvit.pth'),
         str(tmp_path / 'cls.pth'), '--classifier'])
    assert ('DynamicViT: 2 prediction modules; prune_loc needs 2 blocks' in capsys.readouterr().out)
    written = load_state_dict_file(str(tmp_path / 'cls.pth'))
    assert torch.equal(written['backbone.predictors.1.mlp.4.weight'],
                       official['score_predictor.1.out_conv.4.weight'])
    assert torch.equal(written['head.fc.weight'], official['head.weight'])
    assert written.keys() == to_classifier(convert_dynamicvit(official)).keys()
