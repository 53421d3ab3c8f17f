"""The model index where OpenMMLab users look: the metafiles of configs/dyt,
configs/cluster_learngene and configs/dyt_video in OpenMMLab's schema, their README tables,
``mim search mmvitdyn`` on an installed wheel's layout and after an editable
install, and mmpretrain's ``list_models`` / ``get_model`` after
``import mmvitdyn.apis``."""
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml
from modelindex.load_model_index import load

from helpers.configs import EARLIER_NAME_FOLDERS, earlier_names, renamed_to
from helpers.tools import REPO, load_tool
from mmvitdyn.version import __version__

FOLDERS = ('dyt', 'cluster_learngene', 'dyt_video')
METAFILES = {folder: REPO / 'configs' / folder / 'metafile.yml' for folder in FOLDERS}
# Detection / segmentation (also a learngene descendant's UperNet): not mmpretrain models;
# nor are the video recognisers (task VIDEO).
DENSE = re.compile(r'(^|_)(mask-rcnn|upernet)_')
DYT_VTAB = 'vit-b-p16-dyt_d16_1xb64-100e_vtab1k-224px'
VIDEO = 'Action Recognition'
# The classes of the Cluster-Learngene review answer's further downstream sets.
DOWNSTREAM_CLASSES = {
    'stanford-dogs': 120,
    'nabirds': 555,
    'svhn': 10,
    'dtd': 47,
    'eurosat': 10,
    'resisc45': 45
}


def entries(folder: str) -> list:
    return yaml.safe_load(METAFILES[folder].read_text())['Models']


def all_entries() -> dict:
    return {model['Name']: model for folder in FOLDERS for model in entries(folder)}


def vit_params(num_classes: int,
               bottleneck: int = 0,
               dispatchers: int = 0,
               c: int = 768,
               layers: int = 12) -> tuple:
    """(all, trainable) parameters of a frozen ViT-B/16 at 224 (or one ``c`` wide
    with ``layers`` blocks) with a linear head, ``bottleneck``-wide adapters and
    ``dispatchers`` Linear(C, 1) per block (all by hand)."""
    f, tokens, patch = 4 * c, 197, 16
    block = 2 * 2 * c + (c * 3 * c + 3 * c) + (c * c + c) + (c * f + f + f * c + c)
    vit = (3 * patch * patch * c + c) + c + tokens * c + layers * block + 2 * c
    added = layers * (
        (c * bottleneck + bottleneck + bottleneck * c + c if bottleneck else 0) + dispatchers *
        (c + 1))
    head = c * num_classes + num_classes
    return vit + added + head, added + head


@pytest.mark.parametrize('folder', FOLDERS)
def test_metafile_entries_follow_openmmlab_schema(folder):
    meta = yaml.safe_load(METAFILES[folder].read_text())
    collections = {c['Name'] for c in meta['Collections']}
    for c in meta['Collections']:
        assert c['Paper']['Title'] and c['Paper']['URL'].startswith('https://')
        assert c['Code']['URL'].startswith('https://github.com/')
        assert (REPO / c['README']).is_file()
    for model in meta['Models']:
        config = REPO / model['Config']
        assert config.is_file() and config.parent.name == folder, model['Name']
        assert model['Name'] == config.stem and model['In Collection'] in collections
        assert 'Weights' not in model  # no checkpoint is published
        data = model['Metadata']
        assert data['FLOPs'] > 0 and data['Parameters'] >= data['Trainable Parameters'] > 0
        assert data['Training Data'] and model['Results']
        assert len(set(data['Training Data'])) == len(data['Training Data']), model['Name']
        if 'upernet_' in model['Name']:
            assert {r['Task'] for r in model['Results']} == {'Semantic Segmentation'}
        for result in model['Results']:
            assert result['Task'] and result['Dataset']
            # Only the papers' numbers, marked as such, each with its source.
            assert all('(paper' in name for name in result['Metrics']), model['Name']
            assert bool(result['Metrics']) == ('Results Source' in model), model['Name']


def vtab_task_config(path) -> bool:
    """Whether ``path`` is one of DyT's VTAB-1K task configs: the listed
    ``DYT_VTAB`` config with one task's data root and class count."""
    return (path.stem != DYT_VTAB and path.stem.startswith(DYT_VTAB[:-len('-224px')])
            and path.read_text().startswith(f"_base_ = ['./{DYT_VTAB}.py']"))


def test_every_config_is_one_entry_or_excluded():
    """Each model config of the two folders (their ``_base_/`` parts are not
    models) is named by exactly one metafile entry, except the kinds the
    metafiles leave out on purpose: DyT's VTAB-1K task configs
    (:func:`vtab_task_config`), which the entry of their template stands for,
    the earlier names (:func:`helpers.configs.renamed_to`) and the two earlier
    learngene descendants the folder README lists (their configs are entries)."""
    listed = [model['Config'] for folder in FOLDERS for model in entries(folder)]
    differing = {
        f'configs/{folder}/{old}'
        for folder in EARLIER_NAME_FOLDERS
        for old, _, differs in earlier_names(folder) if differs != 'nothing'
    }
    assert len(differing) == 2
    assert sorted({c for c in listed if listed.count(c) > 1}) == []
    excluded, missing, earlier = [], [], []
    for folder in FOLDERS:
        for path in sorted((REPO / 'configs' / folder).glob('*.py')):
            config = f'configs/{folder}/{path.name}'
            if renamed_to(path) or config in differing:
                earlier.append(config)
                assert config not in listed
                continue
            if vtab_task_config(path):
                excluded.append(config)
                assert config not in listed
            elif config not in listed:
                missing.append(config)
    assert len(excluded) == 19 and len(earlier) == 72
    assert missing == [], f'{len(missing)} configs have no metafile entry: {missing}'


def test_the_model_index_imports_every_metafile():
    index = load(str(REPO / 'model-index.yml'))
    index.build_models_with_collections()
    names = [model.name for model in index.models]
    assert len(names) == len(set(names)) == len(all_entries())
    assert {model.in_collection
            for model in index.models} == {'DyT', 'Cluster-Learngene', 'DyT-Video'}


def test_figures_agree_with_the_spec_and_the_architecture():
    models = all_entries()
    # The spec's FLOP convention: ViT-B/16 at 224 counts 17.58 GFLOPs, a static
    # AdaptFormer ViT-B with d = 64 about 17.81 (DyT with every token active
    # adds 12 x 197 x 768 multiply-adds of its dispatchers: 0.002 G).
    full_ft = models['vit-b-p16-full-ft_1xb64-100e_vtab1k-224px']['Metadata']
    assert round(full_ft['FLOPs'] / 1e9, 2) == 17.58
    dyt_d64 = models['vit-b-p16-dyt_d64_8xb128-100e_cifar100-224px']['Metadata']
    assert abs(dyt_d64['FLOPs'] / 1e9 - 17.81) < 0.01
    # Parameters by hand: ViT-B plus adapters (d = 16) and one dispatcher per block.
    assert (full_ft['Parameters'], full_ft['Trainable Parameters']) == (vit_params(100)[0], ) * 2
    dyt = models[DYT_VTAB]['Metadata']
    assert (dyt['Parameters'], dyt['Trainable Parameters']) == vit_params(100, 16, 1)
    # DyT-AdaMix trains N = 4 down-projections (d = 64) and one shared
    # up-projection per block and runs their average.
    adamix = models['vit-b-p16-dyt-adamix4_d64_8xb128-100e_cifar100-224px']['Metadata']
    experts = 12 * 3 * (768 * 64 + 64)
    assert (adamix['Parameters'],
            adamix['Trainable Parameters']) == tuple(n + experts for n in vit_params(100, 64, 1))
    assert adamix['FLOPs'] == dyt_d64['FLOPs']
    # The 6-layer variants of Table 2's cells on the review answer's six data
    # sets (Table 2 itself trains the 12-layer descendants, test_table2_as_run.py)
    # or the whole DeiT-S, with a linear head of the
    # set's classes that adds 384 multiply-adds a class.
    # TLEG's descendants have no class token (nor its position embedding).
    cifar10 = {
        tleg: models[f'learngene-vit-s-p16-l6-h6_{row}_8xb64-500e_cifar10-224px']['Metadata']
        for tleg, row in ((False, 'deit-s-eps10'), (True, 'tleg-aux-vit-s'))
    }
    for data_set, classes in DOWNSTREAM_CLASSES.items():
        for row in ('deit-s-eps10', 'deit-s-heuristic', 'deit-s-auto', 'scratch', 'tleg-aux-vit-s'):
            tleg = row == 'tleg-aux-vit-s'
            data = models[f'learngene-vit-s-p16-l6-h6_{row}_8xb64-500e_{data_set}-224px'][
                'Metadata']
            assert data['Parameters'] == vit_params(classes, c=384, layers=6)[0] - 2 * 384 * tleg
            assert data['FLOPs'] - 384 * classes == cifar10[tleg]['FLOPs'] - 384 * 10
        data = models[f'deit-s-p16_pretrain-finetune_8xb64-500e_{data_set}-224px']['Metadata']
        assert data['Parameters'] == vit_params(classes, c=384)[0]


@pytest.mark.parametrize('folder', FOLDERS)
def test_readme_tables_are_the_metafiles(folder):
    tool = load_tool('misc/metafile_readme.py')
    readme = REPO / 'configs' / folder / 'README.md'
    table = tool.results_table(METAFILES[folder])
    assert tool.with_table(readme.read_text(), table, readme) == readme.read_text(), (
        f'run python tools/misc/metafile_readme.py configs/{folder}')
    assert table.count('\n| `') == len(entries(folder))


def test_the_table_tool_writes_each_figure_and_checks(tmp_path):
    tool = load_tool('misc/metafile_readme.py')
    (tmp_path / 'metafile.yml').write_text(
        yaml.safe_dump({
            'Models': [{
                'Name':
                'm',
                'Config':
                'configs/x/m.py',
                'Metadata': {
                    'FLOPs': 12_345_678_901,
                    'Parameters': 86_000_001,
                    'Trainable Parameters': 304_999
                },
                'Results': [{
                    'Task': 'Image Classification',
                    'Dataset': 'CIFAR-100',
                    'Metrics': {
                        'Top 1 Accuracy (paper)': 91.5
                    }
                }]
            }]
        }))
    readme = tmp_path / 'README.md'
    readme.write_text(
        'intro\n<!-- metafile table begin -->\nold\n<!-- metafile table end -->\nend\n')
    with pytest.raises(SystemExit) as exit_info:
        tool.main([str(tmp_path), '--check'])
    assert exit_info.value.code == 1
    tool.main([str(tmp_path)])
    assert readme.read_text().splitlines()[4] == (
        '| `m` | CIFAR-100 | 86.00 | 0.30 | 12.35 | Top 1 Accuracy (paper): 91.5 | [config](m.py) |'
    )
    tool.main([str(tmp_path), '--check'])  # up to date now


def mim_search(python: str, cwd, env=None) -> dict:
    """``mim search mmvitdyn`` run by ``python`` (openmim's command line):
    field -> model name -> value, from its ``--json`` output."""
    out = cwd / 'search.json'
    proc = subprocess.run([python, '-m', 'mim', 'search', 'mmvitdyn', '--json',
                           str(out)],
                          cwd=cwd,
                          env=env,
                          capture_output=True,
                          text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return json.loads(out.read_text())


def assert_lists_every_model(found: dict):
    models = all_entries()
    assert set(found['config']) == set(models)
    assert {
        name: found['config'][name]
        for name in models
    } == {
        name: model['Config']
        for name, model in models.items()
    }
    assert found['flops'][DYT_VTAB] == models[DYT_VTAB]['Metadata']['FLOPs']
    assert found['vtab-1k/gflops_(paper,_approx.)'][DYT_VTAB] == 12.5


def test_mim_search_lists_every_model_of_an_installed_wheel(tmp_path):
    """``mim search mmvitdyn`` as openmim runs it, on the layout a wheel
    installs: site-packages/mmvitdyn/.mim/ filled by setup.py's own copy step."""
    site = tmp_path / 'site'
    info = site / f'mmvitdyn-{__version__}.dist-info'
    info.mkdir(parents=True)
    (info /
     'METADATA').write_text(f'Metadata-Version: 2.1\nName: mmvitdyn\nVersion: {__version__}\n')
    (info / 'top_level.txt').write_text('mmvitdyn\n')
    runpy.run_path(str(REPO / 'setup.py'), run_name='setup')['copy_mim_files'](site / 'mmvitdyn')
    env = {**os.environ, 'PYTHONPATH': str(site)}
    assert_lists_every_model(mim_search(sys.executable, tmp_path, env))


def test_mim_search_lists_every_model_of_an_editable_install(tmp_path):
    """``pip install -e .`` as pip runs it for a setup.py project (PEP 660:
    setuptools' editable wheel), offline, into a venv that sees this
    environment's packages through a path file: ``mim search mmvitdyn`` lists
    every model, also run in the source tree beside the ``mmvitdyn.egg-info``
    that a ``setup.py develop`` leaves there, and ``mmvitdyn`` is still
    imported from the source tree."""
    src = tmp_path / 'src'  # a copy: the install leaves the checkout alone
    src.mkdir()
    for name in ('setup.py', 'setup.cfg', 'README.md', 'MANIFEST.in', 'model-index.yml'):
        shutil.copy(REPO / name, src)
    for name in ('requirements', 'configs', 'mmvitdyn'):
        shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns('__pycache__'))
    venv = tmp_path / 'venv'
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip', str(venv)], check=True)
    python = str(venv / 'bin' / 'python')
    purelib = subprocess.run(
        [python, '-c', 'import sysconfig; print(sysconfig.get_path("purelib"))'],
        check=True,
        capture_output=True,
        text=True).stdout.strip()
    ours = {sysconfig.get_path('purelib'), sysconfig.get_path('platlib')}
    (Path(purelib) / 'this-environment.pth').write_text(''.join(f'{path}\n'
                                                                for path in sorted(ours)))
    proc = subprocess.run([
        sys.executable, '-m', 'pip', '--python', python, 'install', '--quiet', '--no-index',
        '--no-deps', '--no-build-isolation', '--use-pep517', '--editable',
        str(src)
    ],
                          capture_output=True,
                          text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert_lists_every_model(mim_search(python, tmp_path))
    subprocess.run([python, 'setup.py', '-q', 'egg_info'], cwd=src, check=True, capture_output=True)
    assert_lists_every_model(mim_search(python, src))
    spec = 'import importlib.util; print(importlib.util.find_spec("mmvitdyn").origin)'
    origin = subprocess.run([python, '-c', spec],
                            cwd=tmp_path,
                            check=True,
                            capture_output=True,
                            text=True)
    assert origin.stdout.strip() == str(src / 'mmvitdyn' / '__init__.py')


def test_mmpretrain_lists_and_builds_the_classifiers_by_name():
    import mmpretrain

    import mmvitdyn.apis
    from mmvitdyn.models import DyTViT
    models = all_entries()
    classifiers = {
        name
        for name, model in models.items()
        if not DENSE.search(name) and model['Results'][0]['Task'] != VIDEO
    }
    # a renamed classifier's earlier names find it too
    classifiers |= {
        path.stem
        for folder in FOLDERS
        for path in (REPO / 'configs' / folder).glob('*.py')
        if renamed_to(path) and renamed_to(path)[:-len('.py')] in classifiers
    }
    listed = set(mmpretrain.list_models('*dyt*'))
    assert listed == {name for name in classifiers if 'dyt' in name}
    assert set(mmpretrain.list_models('learngene*')) == {
        name
        for name in classifiers if name.startswith('learngene')
    }
    assert mmvitdyn.apis.register_models() == []  # registered once, on import
    earlier = mmpretrain.get_model('vit-base-p16-dyt_d16_1xb64-100e_vtab1k-224px')
    assert earlier.backbone.arch_settings == mmpretrain.get_model(DYT_VTAB).backbone.arch_settings

    model = mmpretrain.get_model(DYT_VTAB)
    assert type(model).__name__ == 'DyTImageClassifier' and isinstance(model.backbone, DyTViT)
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    pattern = re.compile(r'backbone\.blocks\.\d+\.(adapter|dispatchers)\.|head\.')
    assert trainable == {n for n, _ in model.named_parameters() if pattern.match(n)}
    assert len({n.split('.')[2] for n in trainable if n.startswith('backbone')}) == 12
    total = sum(p.numel() for p in model.parameters())
    assert (total, sum(p.numel() for n, p in model.named_parameters() if n in trainable)) == \
        vit_params(100, 16, 1)
