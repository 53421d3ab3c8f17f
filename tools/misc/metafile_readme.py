"""Write a config folder's README results table from its metafile.

    python tools/misc/metafile_readme.py configs/dyt [--check]

The table of ``FOLDER/README.md`` between the lines ``<!-- metafile table
begin -->`` and ``<!-- metafile table end -->`` is replaced by one row per
model of ``FOLDER/metafile.yml``, in its order: name, data set, parameters,
trainable parameters, FLOPs, the paper's numbers where the metafile has
them, and the config. ``--check`` writes nothing and exits with status 1 if
the README's table differs from the metafile's (tests/test_model_index.py
checks both folders this way).
"""
import argparse
import sys
from pathlib import Path

import yaml

from mmvitdyn.utils import write_text_atomically

BEGIN, END = '<!-- metafile table begin -->', '<!-- metafile table end -->'
HEADER = ('| Model | Data | Params (M) | Trainable (M) | GFLOPs | Paper\'s result | Config |\n'
          '| :-- | :-- | --: | --: | --: | :-- | :-- |')


def paper_results(model: dict) -> str:
    """The metrics of ``model``'s Results as ``name: value``, '-' if none."""
    metrics = [
        f'{name}: {value}' for result in model.get('Results') or []
        for name, value in (result.get('Metrics') or {}).items()
    ]
    return '; '.join(dict.fromkeys(metrics)) or '-'


def results_table(metafile: Path) -> str:
    """The markdown table of the models of ``metafile``."""
    models = yaml.safe_load(metafile.read_text())['Models']
    rows = [HEADER]
    for model in models:
        meta = model['Metadata']
        data = ', '.join(dict.fromkeys(result['Dataset'] for result in model['Results']))
        config = Path(model['Config']).name
        rows.append(f'| `{model["Name"]}` | {data} | {meta["Parameters"] / 1e6:.2f} | '
                    f'{meta["Trainable Parameters"] / 1e6:.2f} | {meta["FLOPs"] / 1e9:.2f} | '
                    f'{paper_results(model)} | [config]({config}) |')
    return '\n'.join(rows)


def with_table(readme: str, table: str, path: Path) -> str:
    """``readme`` with the text between its markers replaced by ``table``."""
    if readme.count(BEGIN) != 1 or readme.count(END) != 1:
        raise ValueError(f'{path} must hold the lines {BEGIN!r} and {END!r} once each')
    head, rest = readme.split(BEGIN)
    _, tail = rest.split(END)
    return f'{head}{BEGIN}\n{table}\n{END}{tail}'


def main(argv=None):
    parser = argparse.ArgumentParser(description='Write a README results table from a metafile')
    parser.add_argument('folder', type=Path, help='config folder with metafile.yml and README.md')
    parser.add_argument(
        '--check', action='store_true', help='exit with status 1 if the README is out of date')
    args = parser.parse_args(argv)
    readme_path = args.folder / 'README.md'
    readme = readme_path.read_text()
    try:
        updated = with_table(readme, results_table(args.folder / 'metafile.yml'), readme_path)
    except ValueError as err:
        parser.error(str(err))
    if args.check:
        if updated != readme:
            print(f'{readme_path} is out of date: run python tools/misc/metafile_readme.py '
                  f'{args.folder}')
            sys.exit(1)
        return
    write_text_atomically(updated, readme_path)
    print(f'Wrote the table of {readme_path}')


if __name__ == '__main__':
    main()
