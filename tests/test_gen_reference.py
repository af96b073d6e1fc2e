"""docs/reference/ is what scripts/gen_reference.py writes now: from the shipped schemas (whose
every key is described, with the code's defaults), the exit codes `fidelity --help` prints,
the placeholder sets and every command's `--help`. A page that drifts is named with the
command that fixes it."""

from __future__ import annotations

import copy
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from checkers import config as docs_config
from fidelity.controls import table as control_table
from fidelity.history import stale
from fidelity.kinds import diffs
from fidelity.matrix.cases import outputs
from fidelity.matrix.cases import table as case_table

ROOT = Path(__file__).resolve().parents[1]
FIX = "run `python scripts/gen_reference.py`"


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "gen_reference", ROOT / "scripts/gen_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


GEN = load_generator()


@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    pages: dict[str, str] = GEN.pages()
    return pages


def test_every_reference_page_is_current(generated: dict[str, str]) -> None:
    assert sorted(generated) == [
        f"docs/reference/{name}.md"
        for name in (
            "commands",
            "configuration",
            "exit-codes",
            "findings",
            "formats",
            "placeholders",
        )
    ]
    assert GEN.stale(generated, GEN.read(ROOT, list(generated))) == []


def test_a_changed_help_line_is_reported_stale(generated: dict[str, str]) -> None:
    page = "docs/reference/commands.md"
    written = GEN.read(ROOT, list(generated))
    line = "  --shard K/N"
    assert written[page].count(line) == 1
    drifted = written[page].replace(line, "  --shard N", 1)
    number = written[page][: written[page].index(line)].count("\n") + 1
    assert GEN.stale(generated, {**written, page: drifted}) == [
        f"{page}:{number}: stale: has {drifted.splitlines()[number - 1]!r}, the generator "
        f"writes {written[page].splitlines()[number - 1]!r}; {FIX}"
    ]


def test_an_edited_schema_description_makes_its_page_stale() -> None:
    schemas = copy.deepcopy(GEN.shipped_schemas())  # the loader caches: never edit its dicts
    entry = schemas["records"]["items"]["properties"]["stale_after"]
    entry["description"] = "an edited description"
    pages = GEN.pages(schemas)
    problems = GEN.stale(pages, GEN.read(ROOT, list(pages)))
    assert len(problems) == 1
    assert problems[0].startswith("docs/reference/configuration.md:")
    assert "an edited description" in problems[0] and problems[0].endswith(FIX)


def test_a_missing_page_is_reported(generated: dict[str, str]) -> None:
    written = {**GEN.read(ROOT, list(generated)), "docs/reference/exit-codes.md": None}
    assert GEN.stale(generated, written) == [f"docs/reference/exit-codes.md is missing; {FIX}"]


def test_check_mode_fails_on_a_stale_copy_and_writing_fixes_it(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "docs" / "reference", tmp_path / "docs" / "reference")
    page = tmp_path / "docs" / "reference" / "exit-codes.md"
    page.write_text(page.read_text().replace("| 2 | usage", "| 2 | misuse", 1))
    script = [sys.executable, str(ROOT / "scripts" / "gen_reference.py"), "--root", str(tmp_path)]

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*script, *extra], capture_output=True, text=True, timeout=120, check=False
        )

    red = run("--check")
    assert (red.returncode, red.stdout.split(": stale:")[0]) == (
        1,
        "docs/reference/exit-codes.md:11",
    )
    assert run().stdout == "wrote docs/reference/exit-codes.md\n"
    green = run("--check")
    assert (green.returncode, green.stdout) == (0, "6 reference pages current\n")


def test_the_page_holds_what_the_command_prints(generated: dict[str, str]) -> None:
    shown = generated["docs/reference/commands.md"]
    begin, end = "<!-- begin: fidelity check-docs --help -->\n```text\n", "```\n<!-- end:"
    block = shown.split(begin, 1)[1].split(end, 1)[0]
    done = subprocess.run(
        [sys.executable, "-m", "fidelity", "check-docs", "--help"],
        env={"COLUMNS": "100", "PATH": "/usr/bin:/bin"},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert block == done.stdout


def test_every_property_and_definition_is_described() -> None:
    for name, schema in GEN.shipped_schemas().items():
        assert GEN.undescribed(schema) == [], name
    planted = copy.deepcopy(GEN.shipped_schemas()["matrix"])
    del planted["properties"]["matrix"]["properties"]["venv"]["description"]
    del planted["$defs"]["tolerance"]["description"]
    assert GEN.undescribed(planted) == ["$defs.tolerance", "matrix.venv"]
    with pytest.raises(SystemExit, match="describe every property"):
        GEN.pages({**GEN.shipped_schemas(), "matrix": planted})


def defaults(schema: Any, pointer: tuple[str | int, ...]) -> dict[str, Any]:
    node = schema
    for part in pointer:
        node = node[part]
    return {k: v["default"] for k, v in node["properties"].items() if "default" in v}


def test_the_schema_defaults_are_the_codes() -> None:
    """Every `default` the reference shows is the value the code falls back to."""
    schemas = GEN.shipped_schemas()
    docs = docs_config.from_section({})
    found = defaults(schemas["docs"], ())
    assert found.pop("exclude") == [] and docs.exclude == docs_config.DEFAULT_EXCLUDE
    plain = {k: list(v) if isinstance(v, tuple) else v for k, v in found.items()}
    code = {k: getattr(docs.defaults, k, getattr(docs, k, None)) for k in found}
    assert plain == {k: list(v) if isinstance(v, tuple) else v for k, v in code.items()}

    (record,) = stale.specs_from_config([{"path": "r.md"}], "t")
    assert defaults(schemas["records"], ("items",)) == {
        "key": record.key,
        "commit_column": record.commit_column,
        "stale_after": record.stale_after,
    }

    matrix = case_table.parse(b'[[case]]\nid = "a"\nargv = ["x"]\noutputs = ["o"]\n', "t")
    (case,) = matrix.cases
    assert defaults(schemas["matrix"], ("properties", "matrix")) == {
        k: getattr(matrix, k) for k in ("name", "setup_timeout_s", "python", "venv", "reuse_setup")
    }
    assert defaults(schemas["matrix"], ("$defs", "case")) == {
        "shell": case.shell,
        "timeout_s": case.timeout_s,
        "repeat": case.repeat,
        "nondeterministic": case.nondeterministic,
    }
    output = outputs.Output.parse({"glob": "o"})
    assert defaults(schemas["matrix"], ("$defs", "output", "oneOf", 1)) == {
        "optional": output.optional,
        "absent": output.absent,
    }
    assert defaults(schemas["matrix"], ("$defs", "compare"))["top"] == diffs.DEFAULT_TOP

    controls = control_table.parse(
        b'[[control]]\nid = "c"\nwhy = "w"\ncaught_by = ["t"]\n'
        b'edit = [{ file = "f", find = "a", replace = "b" }]\n',
        "t",
    )
    (control,) = controls.controls
    assert defaults(schemas["controls"], ("properties", "controls")) == {
        "command": list(controls.command)
    }
    assert defaults(schemas["controls"], ("$defs", "control")) == {"match": control.match}


def test_the_findings_page_is_the_never_accept_list_in_code() -> None:
    """The page lists exactly what validation refuses; a finding dropped from the list in
    code makes it stale."""
    from fidelity.matrix.verdict.accept import MAY, NEVER

    page = "docs/reference/findings.md"
    written = GEN.read(ROOT, [page])[page]
    assert written is not None
    never, may = written.split("## Never accepted", 1)[1].split("## May be accepted", 1)
    listed = re.compile(r"^\| `([a-z-]+)` \|", re.M)
    assert listed.findall(never) == sorted(NEVER) and listed.findall(may) == sorted(MAY)
    fewer = {code: why for code, why in NEVER.items() if code != "side-changed"}
    drifted = GEN.findings_page(GEN.HEADER, fewer, MAY)
    problems = GEN.stale({page: drifted}, {page: written})
    assert len(problems) == 1 and problems[0].startswith(f"{page}:"), problems
