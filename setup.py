"""mmvitdyn: DyT and Cluster-Learngene for OpenMMLab 2.x."""
from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent


def read_requirements(name: str) -> list:
    """Requirement lines of ``requirements/<name>.txt`` without comments."""
    lines = (HERE / 'requirements' / f'{name}.txt').read_text().splitlines()
    return [line.split('#')[0].strip() for line in lines if line.split('#')[0].strip()]


version = {}
exec((HERE / 'mmvitdyn' / 'version.py').read_text(), version)

setup(
    name='mmvitdyn',
    version=version['__version__'],
    description='Dynamic Tuning (DyT) and Cluster-Learngene ViTs for OpenMMLab 2.x',
    long_description=(HERE / 'README.md').read_text(encoding='utf-8'),
    long_description_content_type='text/markdown',
    packages=find_packages(include=['mmvitdyn', 'mmvitdyn.*']),
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
)
