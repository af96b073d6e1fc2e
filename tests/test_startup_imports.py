"""Start-up stays light: the CLI's entry point imports none of the heavy dependencies.

Every command, `--version` included, first imports `fidelity.cli.main`; rich, pandas,
numpy, jsonschema and markdown-it are imported only by the commands that use them. A
module-level import of one of them in any CLI module put 0.06 s on every call (issue 13's
merge did, through `cli/stale_worktrees.py`, `cli/preflight.py` and `cli/records.py`). The
red case plants such an import in a copy of the source.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("rich", "pandas", "numpy", "jsonschema", "markdown_it", "pytest", "hypothesis")
PROBE = f"""
import json, sys
from fidelity.cli.main import main
try:
    main(["--version"])
except SystemExit:
    pass
print(json.dumps(sorted({{m.split(".")[0] for m in sys.modules}} & set({HEAVY!r}))))
"""


def heavy_at_startup(source: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=source,
        env={"PYTHONPATH": str(source), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.splitlines()[0].startswith("fidelity "), done.stdout
    loaded: list[str] = json.loads(done.stdout.splitlines()[-1])
    return loaded


def test_version_imports_no_heavy_dependency() -> None:
    assert heavy_at_startup(ROOT) == []


def test_a_module_level_rich_import_in_a_cli_module_is_caught(tmp_path: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__")
    for package in ("fidelity", "checkers"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=ignore)
    records = tmp_path / "fidelity" / "cli" / "records.py"
    text = records.read_text()
    anchor = "from __future__ import annotations\n"
    assert anchor in text
    records.write_text(text.replace(anchor, anchor + "\nimport rich.console  # noqa\n", 1))
    assert heavy_at_startup(tmp_path) == ["rich"]
