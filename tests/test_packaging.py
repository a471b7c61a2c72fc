"""The rules live in the top-level ``rules/`` folder but must ship inside the package."""

import json
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _is_editable() -> bool:
    text = metadata.distribution("egraph-tiles").read_text("direct_url.json") or "{}"
    return json.loads(text).get("dir_info", {}).get("editable", False)


def _shipped_files() -> set[str]:
    if not _is_editable():
        return {str(f) for f in metadata.files("egraph-tiles") or []}
    # an editable install records no module files: build the real wheel and look inside
    out = ROOT / "build" / "wheel-test"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out),
                    str(ROOT)], check=True, capture_output=True)
    wheel = max(out.glob("egraph_tiles-*.whl"), key=lambda p: p.stat().st_mtime)
    return set(zipfile.ZipFile(wheel).namelist())


def test_non_editable_install_carries_every_rule_module():
    shipped = _shipped_files()
    for module in sorted((ROOT / "rules").glob("*.py")):
        assert f"egraph_tiles/rules/{module.name}" in shipped, module.name


def test_rules_import_as_a_subpackage():
    import egraph_tiles.rules

    assert Path(egraph_tiles.rules.__file__).name == "__init__.py"
