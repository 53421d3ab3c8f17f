"""mmvitdyn installs into the OpenMMLab environments users already have.

``pip install -e .`` asks for ranges (``requirements/runtime.txt``) and leaves
torch, torchvision, numpy and mmcv of an older stack in place; the tested
stack (``requirements/constraints.txt``) lies inside those ranges; the code
parses with the lowest Python that ``python_requires`` admits.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from helpers.tools import REPO
from mmvitdyn.version_check import SUPPORTED, unsupported_message

# An older environment mmvitdyn supports: the lowest torch with its torchvision,
# numpy 1.x and OpenMMLab's prebuilt mmcv 2.1 wheel for that torch.
OLD_STACK = {'torch': '2.1.2', 'torchvision': '0.16.2', 'numpy': '1.26.4', 'mmcv': '2.1.0'}


def requirements(name: str) -> dict:
    """Package name -> Requirement of ``requirements/<name>.txt``."""
    reqs = {}
    for line in (REPO / 'requirements' / f'{name}.txt').read_text().splitlines():
        line = line.split('#')[0].strip()
        if line:
            req = Requirement(line)
            reqs[canonicalize_name(req.name)] = req
    return reqs


def python_requires() -> str:
    return re.search(r"python_requires='>=(\d+\.\d+)'", (REPO / 'setup.py').read_text()).group(1)


def fake_environment(root: Path, dists: dict) -> Path:
    """A venv whose site-packages holds only the metadata of ``dists`` (name -> version):
    to pip, they are installed. Returns its python."""
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip', str(root)], check=True)
    python = root / 'bin' / 'python'
    purelib = 'import sysconfig; print(sysconfig.get_path("purelib"))'
    site = subprocess.run([str(python), '-c', purelib], check=True, capture_output=True,
                          text=True).stdout.strip()
    for name, version in dists.items():
        info = Path(site) / f'{name}-{version}.dist-info'
        info.mkdir()
        (info / 'METADATA').write_text(f'Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n')
        (info / 'INSTALLER').write_text('pip\n')
        (info / 'RECORD').write_text('')
    return python


def test_import_checks_hold_the_requirement_ranges():
    declared = {**requirements('torch'), **requirements('runtime')}
    for name, spec in SUPPORTED.items():
        assert declared[name].specifier == SpecifierSet(spec), name


def test_torch_is_not_an_install_requirement():
    runtime = requirements('runtime')
    assert not {'torch', 'torchvision'} & set(runtime)
    assert all(runtime['numpy'].specifier.contains(v) for v in ('1.26.4', '2.2.0'))


def test_the_tested_stack_lies_inside_the_ranges():
    pins = requirements('constraints')
    assert all(str(req.specifier).startswith('==') for req in pins.values())
    pinned = {name: str(req.specifier)[2:] for name, req in pins.items()}
    for file in ('torch', 'runtime', 'build', 'tests', 'video'):
        for name, req in requirements(file).items():
            assert name in pinned, f'{name} of requirements/{file}.txt is not pinned'
            assert req.specifier.contains(pinned[name]), (file, name, pinned[name])
    assert unsupported_message({name: pinned[name] for name in SUPPORTED}) is None


def test_install_into_an_older_environment_keeps_its_torch_and_numpy(tmp_path):
    """``pip install -e .`` (resolver dry run) into a venv with torch 2.1, numpy 1.26 and mmcv 2.1.

    The resolver reads the metadata of mmdet, mmseg, mmpretrain and the rest
    from the package index: this needs PyPI.
    """
    python = fake_environment(tmp_path / 'env', OLD_STACK)
    src = tmp_path / 'src'  # the package, so that building its metadata leaves the checkout alone
    src.mkdir()
    for name in ('setup.py', 'setup.cfg', 'README.md'):
        shutil.copy(REPO / name, src)
    shutil.copytree(REPO / 'requirements', src / 'requirements')
    shutil.copytree(
        REPO / 'mmvitdyn', src / 'mmvitdyn', ignore=shutil.ignore_patterns('__pycache__'))
    constraints = tmp_path / 'old-stack.txt'
    constraints.write_text(''.join(f'{name}=={version}\n' for name, version in OLD_STACK.items()))
    report = tmp_path / 'report.json'
    proc = subprocess.run([
        sys.executable, '-m', 'pip', '--python',
        str(python), 'install', '--dry-run', '--quiet', '--report',
        str(report), '--timeout', '20', '--retries', '2', '-c',
        str(constraints), '-e',
        str(src)
    ],
                          capture_output=True,
                          text=True,
                          timeout=600)
    assert proc.returncode == 0, ('the resolver failed (it needs PyPI for the metadata of '
                                  f'mmdet, mmseg, mmpretrain, ...):\n{proc.stderr[-4000:]}')
    install = {
        canonicalize_name(item['metadata']['name']): item['metadata']
        for item in json.loads(report.read_text())['install']
    }
    assert not set(OLD_STACK) & set(install), sorted(install)
    assert {'mmvitdyn', 'mmengine', 'mmdet', 'mmsegmentation', 'mmpretrain'} <= set(install)
    # and the environment that results passes the import checks
    assert unsupported_message({**OLD_STACK, 'mmengine': install['mmengine']['version']}) is None
    mmvitdyn = install['mmvitdyn']
    required = [Requirement(r) for r in mmvitdyn['requires_dist']]
    assert {canonicalize_name(r.name) for r in required if r.marker is None} == \
        set(requirements('runtime'))  # extras aside ('tests')
    assert mmvitdyn['requires_python'] == f'>={python_requires()}'
    assert f'Programming Language :: Python :: {python_requires()}' in mmvitdyn['classifier']


def lowest_python():
    """The interpreter of the lowest supported Python version, if this machine has one
    (pyenv's, or on PATH; pyenv's shims on PATH fail for versions not selected)."""
    version = python_requires()
    pyenv_root = os.environ.get('PYENV_ROOT', os.path.expanduser('~/.pyenv'))
    candidates = [
        *sorted(glob.glob(f'{pyenv_root}/versions/{version}.*/bin/python{version}')),
        shutil.which(f'python{version}')
    ]
    for candidate in filter(None, candidates):
        if subprocess.run([candidate, '-c', ''], capture_output=True).returncode == 0:
            return candidate
    return None


def test_the_code_parses_with_the_lowest_supported_python():
    python = lowest_python()
    if python is None:
        pytest.skip(f'no Python {python_requires()} interpreter on this machine (PATH, pyenv)')
    check = ('import pathlib, sys\n'
             'print(sys.version_info[0], sys.version_info[1])\n'
             'for root in sys.argv[1:]:\n'
             '    for f in sorted(pathlib.Path(root).rglob("*.py")):\n'
             '        try:\n'
             '            compile(f.read_text("utf-8"), str(f), "exec", dont_inherit=True)\n'
             '        except SyntaxError as err:\n'
             '            print(f"{f}:{err.lineno}: {err.msg}")\n')
    proc = subprocess.run([python, '-c', check, 'mmvitdyn', 'tools', 'configs', 'demo'],
                          cwd=REPO,
                          capture_output=True,
                          text=True,
                          timeout=120,
                          check=True)
    version, *errors = proc.stdout.splitlines()
    assert version == python_requires().replace('.', ' ')
    assert errors == []


def test_license_citation_and_changelog_agree_with_the_package():
    """LICENSE is the Apache-2.0 text setup.py declares; CITATION.cff (valid YAML)
    names the version and both papers; CHANGELOG has a section for the version."""
    import yaml

    from mmvitdyn.version import __version__
    setup_py = (REPO / 'setup.py').read_text()
    assert "license='Apache-2.0'" in setup_py
    license_text = (REPO / 'LICENSE').read_text()
    assert 'Apache License' in license_text and 'Version 2.0, January 2004' in license_text
    assert 'END OF TERMS AND CONDITIONS' in license_text
    citation = yaml.safe_load((REPO / 'CITATION.cff').read_text())
    assert citation['cff-version'] == '1.2.0' and citation['license'] == 'Apache-2.0'
    assert citation['version'] == __version__
    titles = {ref['title'] for ref in citation['references']}
    assert titles == {
        'Dynamic Tuning Towards Parameter and Inference Efficiency for ViT Adaptation',
        'Cluster-Learngene: Inheriting Adaptive Clusters for Vision Transformers'
    }
    assert all(ref['year'] == 2024 and ref['authors'] for ref in citation['references'])
    sections = re.findall(r'^## (\S+)', (REPO / 'CHANGELOG.md').read_text(), re.M)
    assert sections and sections[0] == __version__
