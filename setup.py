"""mmvitdyn: DyT and Cluster-Learngene for OpenMMLab 2.x."""
import json
import shutil
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).parent
# What OpenMMLab's mim (`mim search mmvitdyn`, `mim train mmvitdyn CONFIG`) and
# mmvitdyn.apis read from an installed package's `.mim/` folder: the model
# index, the configs it names and the tools mim runs.
MIM_FILES = ('model-index.yml', 'configs', 'tools')


def read_requirements(name: str) -> list:
    """Requirement lines of ``requirements/<name>.txt`` without comments."""
    lines = (HERE / 'requirements' / f'{name}.txt').read_text().splitlines()
    return [line.split('#')[0].strip() for line in lines if line.split('#')[0].strip()]


def copy_mim_files(package_dir: Path) -> None:
    """Copy ``MIM_FILES`` from the source tree into ``package_dir/.mim``."""
    for name in MIM_FILES:
        source, target = HERE / name, package_dir / '.mim' / name
        if source.is_dir():
            shutil.copytree(
                source, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns('__pycache__'))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)


# The tools mim runs (`mim train`, `mim test`): an editable install gets a
# script per tool in `.mim/tools/` that runs the source tree's.
MIM_TOOLS = ('train.py', 'test.py')
FORWARDING_TOOL = """\
# Written by mmvitdyn's setup.py for an editable install: runs {tool}.
import runpy
import sys

sys.argv[0] = {tool!r}
sys.path[0] = {folder!r}
runpy.run_path({tool!r}, run_name='__main__')
"""


def write_mim_pointers(package_dir: Path) -> None:
    """Point ``package_dir`` at the source tree: ``model-index.yml``, a model
    index that imports the source tree's by its absolute path (JSON is
    YAML), and ``.mim/tools/<tool>`` for each of :data:`MIM_TOOLS`, a script
    that runs the source tree's tool (a link would not survive the
    editable wheel)."""
    package_dir.mkdir(parents=True, exist_ok=True)
    index = {'Import': [str((HERE / 'model-index.yml').resolve())]}
    (package_dir / 'model-index.yml').write_text(json.dumps(index) + '\n')
    tools = package_dir / '.mim' / 'tools'
    tools.mkdir(parents=True, exist_ok=True)
    for name in MIM_TOOLS:
        tool = (HERE / 'tools' / name).resolve()
        (tools / name).write_text(FORWARDING_TOOL.format(tool=str(tool), folder=str(tool.parent)))


class BuildPyWithMim(build_py):
    """``build_py`` that also puts ``MIM_FILES`` into the built package, as
    OpenMMLab packages ship them (wheels, ``pip install .``).

    An editable install (PEP 660) builds no package, and mim looks for the
    index in ``<location>/mmvitdyn/``, where the location holds the metadata
    it finds first: site-packages, or the source tree when the working
    directory is that tree and holds the ``mmvitdyn.egg-info`` that a
    ``setup.py develop`` leaves. Both get pointers to the source tree
    (:func:`write_mim_pointers`); what a build step writes into
    ``install_lib`` goes into the editable wheel.
    """

    def run(self):
        super().run()
        if self.editable_mode:
            for location in (self.get_finalized_command('install').install_lib, HERE):
                write_mim_pointers(Path(location) / 'mmvitdyn')
        else:
            copy_mim_files(Path(self.build_lib) / 'mmvitdyn')


version = {}
exec((HERE / 'mmvitdyn' / 'version.py').read_text(), version)

if __name__ == '__main__':  # setuptools runs this file as __main__; tests read MIM_FILES
    setup(
        name='mmvitdyn',
        version=version['__version__'],
        description='Dynamic Tuning (DyT) and Cluster-Learngene ViTs for OpenMMLab 2.x',
        long_description=(HERE / 'README.md').read_text(encoding='utf-8'),
        long_description_content_type='text/markdown',
        packages=find_packages(include=['mmvitdyn', 'mmvitdyn.*']),
        # The source tree on sys.path (as `setup.py develop` had it) rather than
        # setuptools' import hook for flat layouts, which comes after the path
        # entries: the pointer folder site-packages/mmvitdyn/ of an editable
        # install would otherwise be imported as an empty namespace package.
        package_dir={'': '.'},
        # The code needs 3.8 (math.prod, typing.get_args, Path.unlink(missing_ok=True)),
        # as torch 2.1 to 2.4 (requirements/torch.txt: >= 2.1) do.
        python_requires='>=3.8',
        classifiers=[
            'License :: OSI Approved :: Apache Software License',
            'Programming Language :: Python :: 3',
            *(f'Programming Language :: Python :: 3.{minor}' for minor in range(8, 13)),
            'Topic :: Scientific/Engineering :: Artificial Intelligence',
        ],
        # Ranges only, and no torch / torchvision: an existing environment keeps its
        # own (requirements/torch.txt; importing mmvitdyn checks torch's version).
        install_requires=read_requirements('runtime'),
        extras_require={'tests': read_requirements('tests')},
        license='Apache-2.0',
        cmdclass={'build_py': BuildPyWithMim},
    )
