"""Every generator: seeded, byte-for-byte reproducible and idempotent."""
import runpy
import sys
from pathlib import Path

import pytest

from helpers.tools import load_tool
from mmvitdyn.datasets.generators import GENERATORS

REPO = Path(__file__).parents[3]
SMALL = {
    'digits': dict(max_per_class=3),
    'coco_shapes': dict(num_train=3, num_val=2),
    'ade_shapes': dict(num_train=3, num_val=2),
    'video_shapes': dict(num_train=3, num_val=2),
}


@pytest.mark.parametrize('name', sorted(GENERATORS))
def test_same_seed_same_bytes(tmp_path, tree_digest, name):
    generate = GENERATORS[name].generate
    first = generate(str(tmp_path / 'a'), seed=0, **SMALL[name])
    second = generate(str(tmp_path / 'b'), seed=0, **SMALL[name])
    other = generate(str(tmp_path / 'c'), seed=1, **SMALL[name])
    assert first.counts == second.counts == other.counts
    assert tree_digest(first.root) == tree_digest(second.root)
    assert tree_digest(first.root) != tree_digest(other.root)


@pytest.mark.parametrize('name', sorted(GENERATORS))
def test_second_call_does_not_rewrite(tmp_path, tree_digest, name):
    generate, out = GENERATORS[name].generate, str(tmp_path / name)
    assert generate(out, **SMALL[name]).created
    digest = tree_digest(Path(out))
    times = {p: p.stat().st_mtime_ns for p in Path(out).rglob('*')}
    assert not generate(out, **SMALL[name]).created
    assert {p: p.stat().st_mtime_ns for p in Path(out).rglob('*')} == times
    assert generate(out, overwrite=True, **SMALL[name]).created
    assert tree_digest(Path(out)) == digest


def test_cli_options_follow_the_signature(tmp_path, capsys):
    out = tmp_path / 'digits'
    argv = ['--out-dir', str(out), '--size', '16', '--max-per-class', '2']
    generate = GENERATORS['digits'].generate
    main = load_tool('dataset_converters/_generator_cli.py').main
    assert main(generate, argv).counts == {'train': 10, 'val': 10}
    printed = capsys.readouterr().out
    assert printed == f'wrote {out} (10 train, 10 val images)\n'
    main(generate, argv)
    assert capsys.readouterr().out.startswith('up to date:')


@pytest.mark.parametrize('name', sorted(GENERATORS))
def test_cli_script(tmp_path, monkeypatch, capsys, name):
    script = REPO / GENERATORS[name].script
    options = [f'--{key.replace("_", "-")}={value}' for key, value in SMALL[name].items()]
    argv = [str(script), '--out-dir', str(tmp_path / name)] + options
    monkeypatch.setattr(sys, 'argv', argv)
    monkeypatch.syspath_prepend(str(script.parent))  # as when it runs as a script
    runpy.run_path(str(script), run_name='__main__')
    assert capsys.readouterr().out.startswith(f'wrote {tmp_path / name} (')


def test_gen_all_writes_the_defaults(tmp_path, monkeypatch, capsys):
    script = REPO / 'tools' / 'dataset_converters' / 'gen_all.py'
    monkeypatch.setattr(sys, 'argv', [str(script), '--data-dir', str(tmp_path)])
    runpy.run_path(str(script), run_name='__main__')
    counts = {
        'digits': (1438, 359),
        'coco_shapes': (48, 16),
        'ade_shapes': (48, 16),
        'video_shapes': (48, 24)
    }
    assert capsys.readouterr().out.splitlines() == [
        f'wrote {tmp_path / name} ({train} train, {val} val images)'
        for name, (train, val) in counts.items()
    ]
