"""The ``dispatcher_cfg=dict(...)`` and ``adapter_cfg=dict(...)`` the docs show
name arguments that exist: the parameters of TokenDispatcher and of the
adapter config check (README.md once showed soft top-k's removed ``iterations``)."""
import inspect
import re

import pytest

from helpers.tools import REPO
from mmvitdyn.models.backbones.adapter_vit import ADAPTER_KEYS
from mmvitdyn.models.layers import TokenDispatcher

DOCS = [REPO / 'README.md', *sorted((REPO / 'docs').glob('*.md'))]
SHOWN = [
    (doc.name, field, body) for doc in DOCS
    for field, body in re.findall(r'(dispatcher_cfg|adapter_cfg)=dict\(([^)]*)\)', doc.read_text())
]
ALLOWED = {
    'dispatcher_cfg': set(inspect.signature(TokenDispatcher).parameters) - {'dim'},
    'adapter_cfg': set(ADAPTER_KEYS),
}


def test_the_docs_show_both():
    assert {field for _, field, _ in SHOWN} == set(ALLOWED)


@pytest.mark.parametrize('doc, field, body', SHOWN, ids=[f'{s[0]}:{s[2][:30]}' for s in SHOWN])
def test_each_shown_argument_exists(doc, field, body):
    names = re.findall(r'(\w+)=', body)
    assert names and set(names) <= ALLOWED[field], (doc, field, sorted(set(names) - ALLOWED[field]))
