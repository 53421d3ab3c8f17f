"""The shell commands README.md and docs/ show agree with the repository: the
scripts and configs they name exist, and a checkpoint or learngene a command
writes or reads under ``checkpoints/`` is one the configs read (a converter's
output under another name would leave every config without its weights)."""
import functools
import re
import shlex

import pytest

from helpers.tools import REPO

DOCS = [REPO / 'README.md', *sorted((REPO / 'docs').glob('*.md'))]
WRITERS = ('tools/model_converters/', 'tools/learngene/build_learngene.py')
WEIGHT_FILES = ('.pth', '.npz', '.bin', '.safetensors')


def shell_commands(markdown: str):
    """Each command of the ```bash blocks, continuation lines joined, as tokens."""
    for block in re.findall(r'```bash\n(.*?)```', markdown, flags=re.S):
        for line in block.replace('\\\n', ' ').splitlines():
            tokens = shlex.split(line, comments=True)
            if tokens:
                yield line.strip(), tokens


@functools.lru_cache(maxsize=None)
def config_reads() -> frozenset:
    """Every ``checkpoint='...'`` and ``learngene='...'`` path in the configs."""
    paths = set()
    for config in (REPO / 'configs').rglob('*.py'):
        paths.update(re.findall(r"(?:checkpoint|learngene)='([^']+)'", config.read_text()))
    return frozenset(paths)


def written(tokens):
    """The file a converter (its second weights file) or the learngene builder
    (``--out``) writes, else None."""
    script = next((t for t in tokens if t.startswith(WRITERS)), None)
    if script is None:
        return None
    if '--out' in tokens:
        return tokens[tokens.index('--out') + 1]
    files = [t for t in tokens[tokens.index(script) + 1:] if t.endswith(WEIGHT_FILES)]
    assert len(files) == 2, f'{tokens}: a converter reads one weights file and writes one'
    return files[1]


COMMANDS = [(doc.name, line, tokens) for doc in DOCS
            for line, tokens in shell_commands(doc.read_text())]


def test_the_docs_show_commands():
    assert len(COMMANDS) > 20


@pytest.mark.parametrize('doc, line, tokens', COMMANDS, ids=[c[1][:60] for c in COMMANDS])
def test_named_files_exist_and_checkpoints_are_the_configs(doc, line, tokens):
    for token in tokens:
        if re.match(r'(tools|demo|configs)/\S+\.(py|sh)$', token):
            assert (REPO / token).is_file(), f'{doc}: {line}: {token} does not exist'
    reads = config_reads()
    out = written(tokens)
    if out is not None:
        assert out in reads, f'{doc}: {line}: writes {out}, which no config reads'
    for token in tokens:
        if token.startswith('checkpoints/'):
            assert token in reads, f'{doc}: {line}: {token} is not a file the configs read'
