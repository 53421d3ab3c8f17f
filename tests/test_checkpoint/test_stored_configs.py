"""A config a checkpoint stores as text reaches mmengine as plain data, never as code."""
import pytest
import torch
from mmengine.config import Config

from helpers.configs import DYT_ADE_CFG, DYT_COCO_CFG, DYT_DIGITS_CFG, VIT_DIGITS_CFG
from helpers.tools import REPO, run_tool
from mmvitdyn.checkpoint import load_checkpoint_file
from mmvitdyn.checkpoint.stored_configs import (NotPlainDataError, check_scopes, config_text,
                                                parse_config_text)
from mmvitdyn.settings import TRUST_ENV

FIELDS = [('meta', 'config'), ('meta', 'cfg'), ('message_hub', 'runtime_info', 'cfg')]


@pytest.fixture(autouse=True)
def untrusting(monkeypatch):
    monkeypatch.delenv(TRUST_ENV, raising=False)


def storing(field, text) -> dict:
    """A checkpoint with ``text`` at the key path ``field``."""
    checkpoint = dict(state_dict={'w': torch.ones(2)})
    owner = checkpoint
    for key in field[:-1]:
        owner = owner.setdefault(key, {})
    owner[field[-1]] = text
    return checkpoint


def stored(checkpoint, field):
    for key in field:
        checkpoint = checkpoint[key]
    return checkpoint


def code_that_creates(path) -> str:
    """A config text whose execution creates ``path`` (mmengine runs it as is)."""
    return f"gpu_ids = [__import__('pathlib').Path({str(path)!r}).touch()]\n"


@pytest.mark.parametrize('field', FIELDS, ids='.'.join)
def test_a_stored_config_with_code_is_left_out_and_never_run(tmp_path, field, log):
    created = tmp_path / 'created'
    torch.save(storing(field, code_that_creates(created)), tmp_path / 'ckpt.pth')
    loaded = load_checkpoint_file(tmp_path / 'ckpt.pth')
    with pytest.raises(KeyError):
        stored(loaded, field)
    assert torch.equal(loaded['state_dict']['w'], torch.ones(2))
    log = '\n'.join(record.getMessage() for record in log)
    assert f'checkpoint {tmp_path / "ckpt.pth"}: its stored config {".".join(field)}' in log
    assert "line 1: Call \"__import__('pathlib')" in log and not created.exists()


@pytest.mark.parametrize('field', FIELDS, ids='.'.join)
def test_a_stored_config_of_plain_data_reads_as_mmengine_reads_it(tmp_path, field):
    source = Config(
        dict(
            model=dict(type='ImageClassifier', backbone=dict(type='ViT', drop_path_rate=-0.0)),
            gpu_ids=[0, 1],
            crop=(224, 224),
            classes={'cat', 'dog'},
            tag=b'x',
            lr=1e-3,
            flag=None,
            custom_imports=dict(imports=['os.path'], allow_failed_imports=False)))
    text = source.pretty_text
    torch.save(storing(field, text), tmp_path / 'ckpt.pth')
    kept = stored(load_checkpoint_file(tmp_path / 'ckpt.pth'), field)
    expected = Config.fromstring(text, file_format='.py').to_dict()
    del expected['custom_imports']  # it would make mmengine import modules
    assert Config.fromstring(kept, file_format='.py').to_dict() == expected
    assert 'custom_imports' in text and 'custom_imports' not in kept
    trusted = load_checkpoint_file(tmp_path / 'ckpt.pth', trusted=True)
    assert stored(trusted, field) == text  # what the user vouched for stays as written


@pytest.mark.parametrize('text, where', [('x = open("f")', 'line 1: Call'),
                                         ('x = [1, y]', 'line 1: Name'),
                                         ('x = dict(**y)', 'line 1: Call'),
                                         ('x = 1e999', 'non-finite'), ('x: int = 1', 'AnnAssign'),
                                         ('a = b = 1', 'not an assignment to a name'),
                                         ('x = {[1]: 2}', 'unhashable'),
                                         ('x = ' + '[' * 5000 + ']' * 5000, ''),
                                         ('x = (', 'not readable Python'),
                                         ('x = -"a"', 'a sign before a non-number'),
                                         ('x = 2 ** 100000', 'BinOp')])
def test_anything_but_plain_assignments_is_not_data(text, where):
    with pytest.raises(NotPlainDataError, match=where):
        parse_config_text(text)


def test_resume_from_a_checkpoint_whose_config_is_code_runs_none_of_it(data_workspace, tmp_path):
    """mmengine's ``Runner.resume`` passes ``meta.config`` to ``Config.fromstring``."""
    opts = [
        'train_dataloader.dataset.indices=16', 'train_dataloader.batch_size=16',
        'val_dataloader.dataset.indices=16', 'default_hooks.checkpoint.interval=1',
        'train_cfg.val_interval=1'
    ]
    work = tmp_path / 'work'
    run_tool([
        'train.py', VIT_DIGITS_CFG, '--work-dir', work, '--cfg-options', 'train_cfg.max_epochs=3',
        *opts
    ], data_workspace)
    checkpoint = torch.load(work / 'epoch_3.pth', weights_only=False)
    assert 'model = dict(' in checkpoint['meta']['cfg']  # mmengine stores its text here
    created = tmp_path / 'created'
    checkpoint['meta']['config'] = code_that_creates(created)
    torch.save(checkpoint, tmp_path / 'crafted.pth')
    proc = run_tool([
        'train.py', VIT_DIGITS_CFG, '--work-dir', tmp_path / 'resumed', '--resume',
        tmp_path / 'crafted.pth', '--cfg-options', 'train_cfg.max_epochs=4', *opts
    ], data_workspace)
    assert not created.exists()  # mmengine's Runner.resume ran none of the file's text
    assert 'its stored config meta.config is not plain data' in proc.stdout + proc.stderr
    assert (tmp_path / 'resumed/epoch_4.pth').is_file()
    assert 'resumed epoch: 3' in proc.stdout + proc.stderr


@pytest.mark.parametrize(
    'config', [
        VIT_DIGITS_CFG, DYT_DIGITS_CFG, DYT_ADE_CFG, DYT_COCO_CFG,
        REPO / 'configs/dyt/vit-b-p16-dyt_d64_8xb128-100e_cifar100-224px.py'
    ],
    ids=lambda path: path.name)
def test_the_configs_mmengine_dumps_read_as_data_and_as_mmengine_reads_them(config):
    """What a run leaves in ``vis_data/config.py`` and in its checkpoints (every
    config under configs/ was checked so when this test was written)."""
    text = Config.fromfile(config).pretty_text
    expected = Config.fromstring(text, file_format='.py').to_dict()
    expected.pop('custom_imports', None)
    kept = config_text(parse_config_text(text))
    assert Config.fromstring(kept, file_format='.py').to_dict() == expected


@pytest.mark.parametrize('case', ['environment default', 'huge int'])
def test_plain_data_that_mmengine_would_not_keep_plain_is_left_out(tmp_path, case, log):
    """mmengine rewrites ``{{ $VAR:default }}`` in the text before running it,
    with the default as regular-expression replacement: a string constant can
    close itself that way. An int beyond Python's digit limit has no repr."""
    created = tmp_path / 'created'
    if case == 'environment default':
        payload = ('{{$MMVITDYN_UNSET:.*\\\' }} and __import__("pathlib").Path("'
                   f'{created}").touch() #')
        text = f'x = {payload!r}\n'
        assert parse_config_text(text) == dict(x=payload)  # a plain string constant
        Config.fromstring(text, file_format='.py')  # what mmengine would do with it
        assert created.exists()  # the attack is real
        created.unlink()
        problem = "it holds '{{'"
    else:
        text = 'x = 0x' + 'f' * 4000 + '\n'
        problem = 'a value has no literal'
    torch.save(storing(('meta', 'config'), text), tmp_path / 'ckpt.pth')
    loaded = load_checkpoint_file(tmp_path / 'ckpt.pth')
    assert 'config' not in loaded['meta']
    assert problem in '\n'.join(record.getMessage() for record in log)
    assert not created.exists()


@pytest.mark.parametrize('text, named', [
    ("model = dict(type='rtscope.Foo')\n", "model.type='rtscope.Foo'"),
    ("default_scope = 'rtscope'\n", "default_scope='rtscope'"),
    ("model = dict(layers=[dict(type='X', _scope_='rtscope')])\n",
     "model.layers[0]._scope_='rtscope'"),
])
def test_a_scope_mmengine_would_import_is_left_out(text, named, tmp_path, log, monkeypatch):
    """mmengine imports ``<scope>.registry`` for a dotted type, a ``_scope_`` or a
    ``default_scope``: a module beside the checkpoint (on ``sys.path``) would run
    when an inferencer builds the model from the weights alone (mmdet's
    DetInferencer(model=None, weights=...))."""
    package = tmp_path / 'rtscope'
    package.mkdir()
    (package / '__init__.py').write_text('')
    created = tmp_path / 'created'
    (package /
     'registry.py').write_text(f'import pathlib\npathlib.Path({str(created)!r}).touch()\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    torch.save(storing(('meta', 'cfg'), text), tmp_path / 'ckpt.pth')
    from mmdet.apis import DetInferencer
    with pytest.raises(ValueError, match='Cannot find the config in the checkpoint'):
        DetInferencer(model=None, weights=str(tmp_path / 'ckpt.pth'), device='cpu')
    assert not created.exists()
    assert f'{named} names the registry scope' in '\n'.join(r.getMessage() for r in log)
    check_scopes(
        parse_config_text("model = dict(type='mmdet.MaskRCNN')\ndefault_scope = 'mmdet'\n"))
