"""``import mmvitdyn`` imports neither mmpretrain, mmdet, mmseg nor mmaction: the modules
that build on them are registered by name and imported on first use."""
import json
import os
import subprocess
import sys
import textwrap
from importlib import import_module

import pytest
from mmengine.registry import Registry

from helpers.models import TINY_ARCH, tiny_backbone_cfg
from helpers.tools import REPO
from mmvitdyn.lazy_registry import LIBRARY_MODULES, LazyModuleDict

LIBRARIES = ('mmpretrain', 'mmdet', 'mmseg', 'mmaction')
LOADED = f'sorted({{name.split(".")[0] for name in sys.modules}} & {set(LIBRARIES)!r})'


def fresh_python(code: str, cwd=REPO):
    """What ``code``, run by a fresh interpreter (the repository and tests/ on
    its path), prints as JSON on its last line."""
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join([str(REPO), str(REPO / 'tests')])}
    proc = subprocess.run([sys.executable, '-c', textwrap.dedent(code)],
                          cwd=cwd,
                          env=env,
                          capture_output=True,
                          text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.splitlines()[-1])


def test_importing_mmvitdyn_imports_no_library():
    assert fresh_python(f"""
        import json, sys
        import mmvitdyn
        print(json.dumps({LOADED}))""") == []


def test_a_classification_config_imports_its_library_only(tmp_path):
    cfg_file = tmp_path / 'cfg.py'
    backbone = tiny_backbone_cfg('DyTViT')
    cfg_file.write_text("default_scope = 'mmpretrain'\n"
                        "custom_imports = dict(imports=['mmvitdyn'], allow_failed_imports=False)\n"
                        f"model = dict(type='DyTImageClassifier', backbone={backbone!r},\n"
                        "             head=dict(type='LinearClsHead', num_classes=3, "
                        f"in_channels={TINY_ARCH['embed_dims']}))\n")
    built, loaded, ours = fresh_python(f"""
        import json, sys
        from mmengine.config import Config
        from mmengine.registry import MODELS, DefaultScope
        cfg = Config.fromfile({str(cfg_file)!r})
        before = {LOADED}
        DefaultScope.get_instance('lazy', scope_name=cfg.default_scope)
        model = MODELS.build(cfg.model)
        ours = sorted(m for m in sys.modules if m in {sorted(LIBRARY_MODULES)!r})
        print(json.dumps([[before, type(model).__name__], {LOADED}, ours]))""")
    assert built == [[], 'DyTImageClassifier']
    # mmpretrain.models imports mmdet itself (mmpretrain/models/utils/res_layer_extra_norm.py).
    assert 'mmpretrain' in loaded and 'mmseg' not in loaded
    assert ours == ['mmvitdyn.models.classifiers.dyt_classifier']


def registrations_code() -> str:
    """Code that records who registers what in mmengine's root registries while
    ``import mmvitdyn`` runs (eager) and while every mmvitdyn module is then
    imported (later), with the registries' pending names after the import."""
    return """
        import json, pkgutil, sys
        from importlib import import_module
        import mmengine.registry
        from mmengine.registry import Registry

        records = []
        register = Registry._register_module

        def recording(self, module, module_name=None, force=False):
            frame = sys._getframe(1)
            while frame.f_globals['__name__'].startswith('mmengine.registry'):
                frame = frame.f_back
            caller = frame.f_globals['__name__']
            if self.parent is None and caller.startswith('mmvitdyn'):
                names = module_name or module.__name__
                for name in [names] if isinstance(names, str) else names:
                    records.append([self.name, name, caller])
            return register(self, module, module_name, force)

        Registry._register_module = recording
        import mmvitdyn
        eager = list(records)
        roots = [r for r in vars(mmengine.registry).values()
                 if isinstance(r, Registry) and r.parent is None]
        pending = [[r.name, name, module] for r in roots
                   for name, module in getattr(r._module_dict, 'pending', {}).items()]
        for info in pkgutil.walk_packages(mmvitdyn.__path__, 'mmvitdyn.'):
            import_module(info.name)
        print(json.dumps([eager, records[len(eager):], pending]))"""


def test_the_pending_names_are_those_the_library_bound_modules_register():
    eager, later, pending = fresh_python(registrations_code())
    assert eager and not {name for _, name, _ in eager} & {name for _, name, _ in pending}
    assert sorted(map(tuple, later)) == sorted(map(tuple, pending))
    assert sorted(map(tuple, pending)) == sorted((registry.name, name, module)
                                                 for module, names in LIBRARY_MODULES.items()
                                                 for name, registry in names.items() if registry)


@pytest.mark.parametrize('module', sorted(LIBRARY_MODULES))
def test_packages_export_the_library_bound_names(module):
    parts = module.split('.')
    packages = ['.'.join(parts[:i]) for i in range(2, len(parts))]
    for name, registry in LIBRARY_MODULES[module].items():
        defined = getattr(import_module(module), name)
        assert [getattr(import_module(p), name) for p in packages] == [defined] * len(packages)
        assert registry is None or registry.get(name) is defined


def test_a_swin_finds_its_ancestry_family_when_mmvitdyn_has_not_imported_it():
    assert fresh_python("""
        import json, sys
        from mmpretrain.models import SwinTransformer
        import mmvitdyn
        from mmvitdyn.learngene import ancestry_for
        imported = 'mmvitdyn.learngene.ancestries.swin' in sys.modules
        swin = SwinTransformer(arch=dict(embed_dims=16, depths=[2, 2], num_heads=[2, 4]),
                               img_size=32, patch_size=2, window_size=4, out_indices=(0, 1))
        print(json.dumps([imported, type(ancestry_for(swin)).__name__]))""") == [
        False, 'SwinAncestry'
    ]


def test_an_unknown_backbone_names_every_family_lazy_ones_included():
    message = fresh_python("""
        import json, torch
        from mmvitdyn.learngene import ancestry_for
        try:
            ancestry_for(torch.nn.Linear(2, 2))
        except ValueError as err:
            print(json.dumps(str(err)))""")
    assert message.startswith('Linear is not an ancestry family learngenes are built from '
                              '(LeViT, SwinTransformer, ViT or their subclasses)')


@pytest.fixture
def lazy_registry(tmp_path, monkeypatch):
    """A registry whose ``Thing`` is pending on module ``lazy_thing`` (in
    ``tmp_path``), which registers it; module ``lazy_holder`` holds the registry."""
    registry = Registry('lazy test')
    registry._module_dict = LazyModuleDict({}, {'Thing': 'lazy_thing'})
    holder = type(sys)('lazy_holder')
    holder.REGISTRY = registry
    monkeypatch.setitem(sys.modules, 'lazy_holder', holder)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, 'lazy_thing', raising=False)
    (tmp_path / 'lazy_thing.py').write_text('from lazy_holder import REGISTRY\n\n\n'
                                            '@REGISTRY.register_module()\n'
                                            'class Thing:\n    pass\n')
    return registry


@pytest.mark.parametrize(
    'look_up', [
        lambda r: r.get('Thing'), lambda r: r.module_dict['Thing'],
        lambda r: dict(r.module_dict.items())['Thing'], lambda r: r.build(dict(type='Thing'))
    ],
    ids=['get', 'item', 'items', 'build'])
def test_a_pending_name_imports_its_module_when_looked_up_or_listed(lazy_registry, look_up):
    assert 'lazy_thing' not in sys.modules
    found = look_up(lazy_registry)
    thing = sys.modules['lazy_thing'].Thing
    assert found is thing or type(found) is thing
    assert lazy_registry._module_dict.pending == {} and len(lazy_registry) == 1


def test_a_pending_name_stays_pending_when_its_module_fails(lazy_registry, tmp_path):
    (tmp_path / 'lazy_thing.py').write_text('raise ImportError("no library")\n')
    for _ in range(2):
        with pytest.raises(ImportError, match='no library'):
            lazy_registry.get('Thing')
        assert lazy_registry._module_dict.pending == {'Thing': 'lazy_thing'}
