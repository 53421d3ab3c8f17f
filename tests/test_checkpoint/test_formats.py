"""The registry of checkpoint formats replaces a chain of checks: each format's
``detect`` takes its own layout and, but for the ``timm`` fallback, no other."""
import pytest
import torch

from helpers.checkpoint_formats import FORMAT_FIXTURES
from mmvitdyn.checkpoint import CHECKPOINT_FORMATS, convert_checkpoint, detect_format, format_names

# The layouts built on timm's ViT keys, which the fallback 'timm' also takes.
TIMM_BASED = {'dyt', 'dynamicvit', 'mmvitdyn', 'dinov2', 'timm'}
DETECTION_ORDER = ('jax', 'mmpretrain', 'dyt', 'dynamicvit', 'mmvitdyn', 'openai_clip', 'dinov2',
                   'timm')


def test_every_format_is_registered_in_detection_order():
    assert format_names() == DETECTION_ORDER
    assert set(FORMAT_FIXTURES) == set(CHECKPOINT_FORMATS.module_dict)


@pytest.mark.parametrize('fmt', DETECTION_ORDER)
@pytest.mark.parametrize('source', DETECTION_ORDER)
def test_detect_takes_its_own_layout_and_rejects_the_others(fmt, source):
    state = FORMAT_FIXTURES[source]()
    expected = fmt == source or (fmt == 'timm' and source in TIMM_BASED)
    assert CHECKPOINT_FORMATS.module_dict[fmt]().detect(state) is expected


@pytest.mark.parametrize('source', DETECTION_ORDER)
def test_each_fixture_is_detected_and_converted_as_its_format(source):
    state = FORMAT_FIXTURES[source]()
    assert detect_format(state) == source
    converted, fmt = convert_checkpoint(state)
    assert fmt == source
    assert converted['patch_embed.proj.weight'].shape == (32, 3, 8, 8)
    assert converted['pos_embed'].shape == (1, 17, 32)


def test_unknown_layouts_and_formats_are_named():
    with pytest.raises(ValueError, match=r"known formats are \('jax', 'mmpretrain', "):
        detect_format({'encoder.weight': torch.zeros(1)})
    with pytest.raises(ValueError, match="fmt='swin' is not one of"):
        convert_checkpoint({}, 'swin')
