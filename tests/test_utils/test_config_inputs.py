"""A command's outputs leave alone everything its config makes it read: the
config's own files down its ``_base_`` chain, and the files of its data."""
from pathlib import Path

import mmpretrain
import pytest
import torch
from mmengine.config import Config

from helpers.configs import VIT_DIGITS_CFG
from helpers.models import tiny
from helpers.tools import REPO, load_tool
from mmvitdyn.engine import config_files, config_inputs
from mmvitdyn.utils import OutputIsInputError, refuse_overwriting_inputs

BASES = ('models/vit-mini-p4_32px.py', 'datasets/digits_bs32_32px.py',
         'schedules/adamw_cosine_20e.py', 'runtimes/mmpretrain.py')


def write_chain(folder: Path) -> Path:
    """child.py -> middle/base.py (its own folder) -> the digits ViT config."""
    (folder / 'middle').mkdir()
    (folder / 'middle/base.py').write_text(f'_base_ = {str(VIT_DIGITS_CFG)!r}\n')
    (folder /
     'child.py').write_text("_base_ = ['./middle/base.py']\ntrain_cfg = dict(max_epochs=1)\n")
    return folder / 'child.py'


def test_the_config_files_are_the_chain_mmengine_reads(tmp_path):
    child = write_chain(tmp_path)
    found = [Path(path).resolve() for path in config_files(str(child))]
    expected = [child, tmp_path / 'middle/base.py', VIT_DIGITS_CFG]
    expected += [REPO / 'configs/_base_' / base for base in BASES]
    # runtimes/mmpretrain.py's own base: 'mmpretrain::_base_/default_runtime.py'
    expected.append(Path(mmpretrain.__file__).parent / '.mim/configs/_base_/default_runtime.py')
    assert found == expected
    Config.fromfile(str(child))  # the chain is one mmengine reads


def test_the_inputs_hold_the_scanned_folders_and_annotation_files(tmp_path):
    cfg = Config.fromfile(str(write_chain(tmp_path)))
    inputs = config_inputs(cfg)
    # digits: data_root plus data_prefix 'train' / 'val' (val and test loaders)
    assert [p for p in inputs if p.startswith('data/')
            ] == ['data/digits/train', 'data/digits/val', 'data/digits/val']


def test_predefined_variables_are_substituted_as_mmengine_does(tmp_path):
    (tmp_path / 'base.py').write_text(f'_base_ = {str(VIT_DIGITS_CFG)!r}\n')
    child = tmp_path / 'child.py'
    child.write_text("_base_ = '{{ fileDirname }}/base.py'\n")
    Config.fromfile(str(child))
    assert [Path(p).resolve()
            for p in config_files(str(child))[:3]] == [child, tmp_path / 'base.py', VIT_DIGITS_CFG]


def test_a_file_in_a_scanned_folder_is_refused_new_or_not(tmp_path):
    data = tmp_path / 'data/set'
    (data / 'train').mkdir(parents=True)
    (data / 'train/0001.png').write_bytes(b'image')
    for out in ('train/0001.png', 'train/0002.png', 'train/sub/preds.pkl'):
        with pytest.raises(OutputIsInputError, match='lies in the input folder'):
            refuse_overwriting_inputs(data / out, [data / 'train'])
    (data / 'preds.pkl').write_text('{}')
    refuse_overwriting_inputs(data / 'preds.pkl', [data / 'train'])  # beside it, not in it


def test_a_data_root_that_is_the_working_directory_refuses_no_rerun(tmp_path, monkeypatch):
    """data_root='.' (or above): the same command run twice writes its output
    twice (the first run's output must not become an input)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'base.py').write_text('')
    (tmp_path / 'results.pkl').write_bytes(b'first run')
    for root in ('.', './', str(tmp_path), str(tmp_path.parent)):
        cfg = Config(
            dict(test_dataloader=dict(dataset=dict(data_root=root))),
            filename=str(tmp_path / 'base.py'))
        refuse_overwriting_inputs('results.pkl', config_inputs(cfg))
        refuse_overwriting_inputs('work_dirs/x/results.pkl', config_inputs(cfg))


@pytest.fixture
def chain_workspace(data_workspace, tmp_path, monkeypatch) -> dict:
    """The digits ViT config behind two levels of ``_base_``, run from a
    workspace whose data/digits the config reads; a checkpoint of its model."""
    monkeypatch.chdir(data_workspace)
    child = write_chain(tmp_path)
    torch.save(dict(state_dict=tiny().state_dict()), tmp_path / 'vit.pth')
    image = sorted((data_workspace / 'data/digits').rglob('*.png'))[0]
    preds = data_workspace / 'data/digits/val/preds.pkl'  # in a scanned folder
    preds.write_bytes(b'kept')
    return dict(
        child=child,
        base=tmp_path / 'middle/base.py',
        ckpt=tmp_path / 'vit.pth',
        image=image,
        preds=preds)


@pytest.mark.parametrize(
    'tool, argv', [
        ('analysis_tools/get_flops.py', ['{child}', '--out', '{base}']),
        ('analysis_tools/get_flops.py', ['{child}', '--out', '{image}']),
        ('deployment/pytorch2onnx.py', ['{child}', '{ckpt}', '{base}']),
        ('deployment/pytorch2onnx.py', ['{child}', '{ckpt}', '{image}']),
        ('learngene/extract_baseline_learngene.py',
         ['heuristic', '{child}', '{ckpt}', '--out', '{base}']),
        ('learngene/materialize_descendant.py', ['{child}', '{ckpt}', '--out', '{image}']),
        ('test.py', ['{child}', '{ckpt}', '--out', '{preds}']),
    ],
    ids=[
        'get_flops-base', 'get_flops-image', 'onnx-base', 'onnx-image', 'extract-base',
        'materialize-image', 'test-data-pkl'
    ])
def test_tools_refuse_a_base_config_or_a_data_file_as_output(tool, argv, chain_workspace, capsys):
    paths = chain_workspace
    kept = {name: paths[name].read_bytes() for name in ('base', 'image', 'preds')}
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        load_tool(tool).main([arg.format(**paths) for arg in argv])
    assert stop.value.code == 2
    error = capsys.readouterr().err
    assert 'destroy what this command reads' in error, error[-2000:]
    assert {name: paths[name].read_bytes() for name in kept} == kept
