"""The rules live in the top-level ``rules/`` folder but must ship inside the package."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import egraph_tiles
import egraph_tiles.rules

ROOT = Path(__file__).resolve().parents[1]
RULE_MODULES = sorted(p.name for p in (ROOT / "rules").glob("*.py"))


def _installed_from_source_tree() -> bool:
    return Path(egraph_tiles.rules.__file__).resolve().parent == (ROOT / "rules").resolve()


def _wheel_files(tmp_path: Path) -> set[str]:
    # build from a copy so setuptools' egg-info never lands in the working tree
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".git", "build", "*.egg-info", "__pycache__", ".hypothesis", "results"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                    str(tmp_path / "dist"), str(src)], check=True, capture_output=True)
    (wheel,) = (tmp_path / "dist").glob("egraph_tiles-*.whl")
    return set(zipfile.ZipFile(wheel).namelist())


def test_non_editable_install_carries_every_rule_module(tmp_path):
    if _installed_from_source_tree():  # an editable install: look inside the real wheel
        shipped = _wheel_files(tmp_path)
        missing = [m for m in RULE_MODULES if f"egraph_tiles/rules/{m}" not in shipped]
    else:  # a regular install: the modules sit next to the installed package
        installed = Path(egraph_tiles.__file__).parent / "rules"
        missing = [m for m in RULE_MODULES if not (installed / m).is_file()]
    assert not missing, f"rules/ modules not shipped: {missing}"


def test_rules_import_as_a_subpackage():
    assert Path(egraph_tiles.rules.__file__).name == "__init__.py"
    assert egraph_tiles.rules.__name__ == "egraph_tiles.rules"


def test_a_checkout_imports_its_rules_without_an_install():
    # drop an editable install's finders so the package comes from the folder itself
    code = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f)]; "
            "sys.path_hooks[:] = [h for h in sys.path_hooks if 'editable' not in repr(h)]; "
            "sys.path.insert(0, sys.argv[1]); import egraph_tiles.rules as r; print(r.__file__)")
    out = subprocess.run([sys.executable, "-c", code, str(ROOT)], check=True,
                         capture_output=True, text=True, cwd=ROOT).stdout.strip()
    assert Path(out).resolve() == (ROOT / "rules" / "__init__.py").resolve()


def test_non_editable_install_carries_every_package_module(tmp_path):
    """Every module under ``egraph_tiles/`` (subpackages included) is in the wheel: a folder
    missing from pyproject's package list would import from a checkout and fail once installed."""
    modules = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "egraph_tiles").rglob("*.py")
                     if "rules" not in p.relative_to(ROOT).parts[1:2])
    if _installed_from_source_tree():
        shipped = _wheel_files(tmp_path)
        missing = [m for m in modules if m not in shipped]
    else:
        installed = Path(egraph_tiles.__file__).parent.parent
        missing = [m for m in modules if not (installed / m).is_file()]
    assert not missing, f"modules not shipped: {missing}"
