"""The layout of the Python helpers: each concern package imports only the packages below it.

plugin_utils (controller) and module_utils (host) are split into packages by concern; each package's docstring
says what it may import, and this table is the same rule as data.  An import that points back up (the plan
importing a target, a host check importing the collector) fails here, naming the file.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

PLUGINS = pathlib.Path(__file__).resolve().parents[3] / "plugins"
PREFIX = "ansible_collections.ascend.sglang.plugins."

ALLOWED = {
    "plugin_utils.core": set(),
    "plugin_utils.plan": {"plugin_utils.core", "module_utils.npu", "module_utils.checks", "module_utils.files"},
    "plugin_utils.targets": {"plugin_utils.core", "plugin_utils.plan", "module_utils.files"},
    "plugin_utils.rollout": {"plugin_utils.core", "plugin_utils.plan", "plugin_utils.targets",
                             "module_utils.checks", "module_utils.files", "module_utils.http"},
    "plugin_utils.report": {"plugin_utils.core", "plugin_utils.plan",
                            "module_utils.bench", "module_utils.checks", "module_utils.npu"},
    "plugin_utils.forensics": {"plugin_utils.core", "module_utils.collect"},
    "plugin_utils.stage": {"plugin_utils.core", "plugin_utils.plan"},
    "plugin_utils.importer": {"plugin_utils.core", "plugin_utils.plan", "plugin_utils.report", "module_utils.bench"},
    "module_utils.npu": set(),
    "module_utils.files": set(),
    "module_utils.http": set(),
    "module_utils.bench": set(),
    "module_utils.checks": {"module_utils.npu", "module_utils.files"},
    "module_utils.stage": {"module_utils.checks"},
    "module_utils.collect": {"module_utils.npu", "module_utils.files", "module_utils.checks", "module_utils.http"},
}


def _package_of(module: str) -> str | None:
    if not module.startswith(PREFIX):
        return None
    parts = module[len(PREFIX):].split(".")
    return ".".join(parts[:2]) if parts[0] in ("plugin_utils", "module_utils") else None


def _imports(path: pathlib.Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return out


def test_every_package_is_in_the_table_and_says_what_it_holds():
    found = {f"{kind.name}.{pkg.name}" for kind in (PLUGINS / "plugin_utils", PLUGINS / "module_utils")
             for pkg in kind.iterdir() if pkg.is_dir() and pkg.name != "__pycache__"}
    assert found == set(ALLOWED)
    for package in found:
        init = PLUGINS / package.replace(".", "/") / "__init__.py"
        doc = ast.get_docstring(ast.parse(init.read_text()))
        assert doc and "import" in doc.lower(), f"{init}: a docstring saying what lives here and what it may import"


def test_no_helper_sits_outside_a_package():
    loose = [p.name for kind in ("plugin_utils", "module_utils") for p in (PLUGINS / kind).glob("*.py")
             if p.name != "__init__.py"]
    assert loose == []


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_imports_point_down_only(package):
    bad = []
    for path in sorted((PLUGINS / package.replace(".", "/")).glob("*.py")):
        for module in _imports(path):
            target = _package_of(module)
            if target and target != package and target not in ALLOWED[package]:
                bad.append(f"{path.relative_to(PLUGINS)} imports {module}")
    assert bad == []


def test_host_code_never_imports_controller_code():
    for path in (PLUGINS / "module_utils").rglob("*.py"):
        assert not any(m.startswith(PREFIX + "plugin_utils") for m in _imports(path)), path


def test_unit_tests_mirror_the_packages():
    """The unit tests of a package sit in the folder of that package (tests/unit/plugins/plugin_utils/plan/ for
    plugins/plugin_utils/plan/): none loose beside the packages, none under a folder no package has."""
    tests = PLUGINS.parent / "tests" / "unit" / "plugins"
    misplaced = []
    for kind in ("plugin_utils", "module_utils"):
        misplaced += [str(p.relative_to(tests)) for p in (tests / kind).glob("*.py")]
        misplaced += [str(p.relative_to(tests)) for p in (tests / kind).glob("*/*.py")
                      if f"{kind}.{p.parent.name}" not in ALLOWED]
    assert misplaced == [], "move each under tests/unit/plugins/<plugin_utils|module_utils>/<package>/"
