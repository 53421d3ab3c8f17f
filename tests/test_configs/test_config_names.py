"""Every config path a user can have read keeps working: the ones README.md, docs/,
the CHANGELOG, the folder READMEs, the metafiles, the configs' comments and the tools
name load, and an earlier name is its config under that name (the folder README
lists those of configs/dyt and configs/cluster_learngene). Config names follow one
naming scheme. Every runnable config inherits one of the seeded runtimes."""
import ast
import functools
import re

import pytest
from mmengine.config import Config

from helpers.configs import EARLIER_NAME_FOLDERS, earlier_names, renamed_to
from helpers.tools import REPO
from mmvitdyn.engine.config_keys import misspelt_top_level_keys

# Where a user reads config paths.
TEXTS = sorted([
    REPO / 'README.md', REPO / 'CHANGELOG.md', *(REPO / 'docs').glob('*.md'),
    *(REPO / 'configs').rglob('README.md'), *(REPO / 'configs').rglob('metafile.yml'),
    *(REPO / 'configs').rglob('*.py'), *(REPO / 'tools').rglob('*.py'),
    *(REPO / 'tools').rglob('*.sh'), *(REPO / 'demo').rglob('*.py')
])
NAMED = re.compile(r'(?<![\w/])configs/[\w./-]+?\.py\b')
# Files of the public DyT code that our texts cite (under its own configs/).
PUBLIC_CODE = {
    'configs/_base_/models/upernet_beit.py', 'configs/_base_/schedules/schedule_160k.py',
    'configs/beit/upernet/our_vit.py'
}
LINKED = re.compile(r'\]\(([\w.-]+\.py)\)')  # a folder README's links to its configs
RUNTIMES = {
    REPO / f'configs/_base_/runtimes/{lib}.py'
    for lib in ('mmpretrain', 'mmdet', 'mmseg', 'mmaction')
}


@functools.lru_cache(maxsize=None)
def load(path: str) -> dict:
    return Config.fromfile(path).to_dict()


@pytest.fixture(scope='module', autouse=True)
def read_metafiles_once():
    """mmengine parses every metafile of mmpretrain / mmdet / mmseg again for each
    ``mmpretrain::`` base (0.5 s each): read each file once here."""
    import mmengine.config.utils as config_utils
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(config_utils, 'load', functools.lru_cache(maxsize=None)(config_utils.load))
        yield


def named_configs():
    named = {}
    for text in TEXTS:
        found = NAMED.findall(text.read_text())
        if text.name == 'README.md' and text.parent != REPO:
            found += [
                str((text.parent / name).relative_to(REPO))
                for name in LINKED.findall(text.read_text())
            ]
        for path in set(found) - PUBLIC_CODE:
            named.setdefault(path, text.relative_to(REPO))
    return sorted(named.items())


NAMED_CONFIGS = named_configs()


def test_the_texts_name_configs_and_the_earlier_names():
    names = dict(NAMED_CONFIGS)
    assert len(names) > 150
    assert 'configs/dyt/vitdet_coco.py' in names  # the design card's command
    assert not any((REPO / path).exists() for path in PUBLIC_CODE)


@pytest.mark.parametrize('path,where', NAMED_CONFIGS, ids=[p for p, _ in NAMED_CONFIGS])
def test_every_named_config_loads(path, where):
    assert (REPO / path).is_file(), f'{where} names {path}, which does not exist'
    cfg = load(str(REPO / path))
    if '/_base_/' not in path and not path.startswith('configs/sweeps/'):
        assert cfg['default_scope'] in ('mmpretrain', 'mmdet', 'mmseg', 'mmaction')
        assert misspelt_top_level_keys(Config(cfg)) == []


# Every earlier name (a config that only inherits its current one, renamed_to),
# by its folder under configs/.
ALIASES = sorted((str(p.parent.relative_to(REPO / 'configs')), p.name, renamed_to(p))
                 for p in (REPO / 'configs').rglob('*.py') if renamed_to(p))
# The folder READMEs' rows (earlier names, and the two earlier learngene
# descendants that differ from their current config), then the earlier names of
# the folders without such a table.
EARLIER = [(folder, *row) for folder in EARLIER_NAME_FOLDERS for row in earlier_names(folder)]
EARLIER += [(folder, old, new, 'nothing') for folder, old, new in ALIASES
            if folder not in EARLIER_NAME_FOLDERS]


def test_the_folders_list_their_earlier_names():
    listed = {(folder, old) for folder, old, _, _ in EARLIER}
    assert ('dyt', 'vitdet_coco.py') in listed and ('dyt', 'upernet_ade20k.py') in listed
    assert ('examples', 'vit-base-p16-dyt_d16_1xb64-100e_my-set-224px.py') in listed
    # A folder's table lists exactly the earlier names in it, each with its config.
    for folder in EARLIER_NAME_FOLDERS:
        rows = {(old, new)
                for f, old, new, differs in EARLIER if f == folder and differs == 'nothing'}
        assert rows == {(old, new) for f, old, new in ALIASES if f == folder}
    for folder, old, new, _ in EARLIER:
        text = (REPO / 'configs' / folder / old).read_text()
        # a short config that inherits the current one, and names it in its comment
        assert ast.literal_eval(text.split('_base_ = ', 1)[1].splitlines()[0]) == [f'./{new}']
        assert new in text.split('_base_ = ', 1)[0], f'the comment of {old} does not name {new}'


@pytest.mark.parametrize('folder,old,new,differs', EARLIER, ids=[row[1] for row in EARLIER])
def test_an_earlier_name_is_its_config(folder, old, new, differs):
    before = load(str(REPO / 'configs' / folder / old))
    now = load(str(REPO / 'configs' / folder / new))
    if differs == 'nothing':
        assert before == now
    else:  # the two eps = 1 descendants: the learngene file only
        assert before['model']['backbone'].pop('learngene').endswith('_eps1.pth')
        assert now['model']['backbone'].pop('learngene').endswith('_eps0.1.pth')
        assert before == now


# The naming scheme, OpenMMLab's {algorithm}_{module}_{training}_{data}: the
# dense task's head, the model, its settings, NxbB-schedule, then the data set
# and its size. The model is the backbone, spelt one way (its size as one short
# word, as configs/cluster_learngene spells vit-s, deit-ti and swin-t; a ViT's
# patch always given), then its pretraining, the method and the method's
# variants, joined by '-'. A setting is the adapter width d<N> or the neck /
# pooling, never a method or a variant: vit-b-p16-dyt-moe4_d16_..., not
# vit-b-p16-dyt_moe4-d16_...
SIZE = r'(ti|s|b|l|mini)'
BACKBONE = rf'(vit-{SIZE}-p\d+|vitdet-{SIZE}|r\d+(-d8)?)'
MODEL = rf'{BACKBONE}(-(?!d\d+(?![a-z0-9]))[a-z0-9]+)*'  # no adapter width among its words
SETTINGS = r'(_(d\d+|mln|pyramid|avgpool|fpn))*'
NAME = re.compile(
    rf'((mask-rcnn|upernet|fcn)_)?{MODEL}{SETTINGS}_\d+xb\d+-\d+[eik]_[a-z0-9-]+-(\d+px|\d+x\d+)')
LONG_SIZE = re.compile(r'-(tiny|small|base|large|huge)(?![a-z0-9])')
# configs/cluster_learngene names descendants by their own scheme
# (tests/test_learngene/test_configs.py); its sizes are spelt as here.
SCHEMED = sorted(
    p for p in (REPO / 'configs').rglob('*.py') if '_base_' not in p.parts
    and 'sweeps' not in p.parts and 'cluster_learngene' not in p.parts and not renamed_to(p))


def test_config_names_follow_the_naming_scheme():
    assert len(SCHEMED) > 80
    assert [p.name for p in SCHEMED if not NAME.fullmatch(p.stem)] == []


def test_backbone_sizes_are_spelt_one_way():
    long = [
        str(p.relative_to(REPO)) for p in (REPO / 'configs').rglob('*.py')
        if not renamed_to(p) and LONG_SIZE.search(p.stem)
    ]
    assert long == []


@pytest.mark.parametrize(
    'name',
    [
        'vit-b-p16-dyt_moe4-d16_1xb64-100e_vtab1k-224px',  # the variant and d16 in settings
        'vit-b-p16-dyt-moe4-d16_1xb64-100e_vtab1k-224px',  # d16 in the model
        'vit-b-p16_full-ft_1xb64-100e_vtab1k-224px',  # the method in settings
        'upernet_vit-mini-dyt_mln_1xb4-400i_ade-shapes-128px',  # a ViT without its patch
        'vit-base-p16-dyt_d16_1xb64-100e_vtab1k-224px',  # the long size word
    ])
def test_the_scheme_refuses_the_earlier_shapes(name):
    assert not NAME.fullmatch(name)
    assert NAME.fullmatch('vit-b-p16-dyt-moe4_d16_1xb64-100e_vtab1k-224px')


def bases(path):
    """The files ``path``'s ``_base_`` names, local ones as resolved paths."""
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                getattr(t, 'id', None) == '_base_' for t in node.targets):
            value = ast.literal_eval(node.value)
            for base in [value] if isinstance(value, str) else value:
                yield base if '::' in base else (path.parent / base).resolve()


def inherits_runtime(path) -> bool:
    return path in RUNTIMES or any(not isinstance(base, str) and inherits_runtime(base)
                                   for base in bases(path))


RUNNABLE = sorted(
    p for p in (REPO / 'configs').rglob('*.py')
    if '_base_' not in p.parts and 'sweeps' not in p.parts)


def test_every_runnable_config_inherits_a_seeded_runtime():
    assert len(RUNNABLE) > 200
    unseeded = [str(p.relative_to(REPO)) for p in RUNNABLE if not inherits_runtime(p)]
    assert unseeded == []
    # The seed is set in the runtimes only: nothing downstream unsets it.
    setting = [
        str(p.relative_to(REPO)) for p in (REPO / 'configs').rglob('*.py') if p not in RUNTIMES
        and re.search(r'^randomness\b|::_base_/default_runtime', p.read_text(), flags=re.M)
    ]
    assert setting == []


@pytest.mark.parametrize('runtime', sorted(RUNTIMES), ids=lambda p: p.name)
def test_the_runtimes_fix_the_seed(runtime):
    cfg = load(str(runtime))
    assert cfg['randomness'] == dict(seed=0, deterministic=False)
    assert cfg['default_scope'] == runtime.stem
