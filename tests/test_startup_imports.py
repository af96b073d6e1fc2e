"""Start-up stays light: the CLI's entry point imports none of the heavy dependencies.

Every command, `--version` included, first imports `fidelity.cli.main`; rich, pandas,
numpy, jsonschema and markdown-it are imported only by the commands that use them. A
module-level import of one of them in any CLI module put 0.06 s on every call (issue 13's
merge did, through `cli/stale_worktrees.py`, `cli/preflight.py` and `cli/records.py`). The
red case plants such an import in a copy of the source.

`check-docs` on a page, and `cases list`, validate their configuration without jsonschema
(`checkers.quickschema`, unless the table is not valid) and check-docs prints without rich:
at issue 24 the two imports were 0.1-0.2 CPU-s of a 0.49 CPU-s check of one small page.
markdown-it (about half of what was left) is imported only to parse a page, so a re-run
answered from the cache does without it, and `cases list -q` prints without rich. The red
cases plant each import back in a copy of the source.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("rich", "pandas", "numpy", "jsonschema", "markdown_it", "pytest", "hypothesis")


def probe(watched: str) -> str:
    """A script that runs the CLI and prints its exit code and the watched modules it
    loaded (watched: an expression over `sys.modules`)."""
    return f"""
import json, sys
from fidelity.cli.main import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
sys.stdout.flush()
print()
print(code, json.dumps(sorted({watched})))
"""


def watched(
    script: str, args: list[str], cwd: Path, env: dict[str, str], exit_code: str = "0"
) -> list[str]:
    """The watched modules a probe script saw the CLI load, after it exited as expected."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    code, names = done.stdout.splitlines()[-1].split(" ", 1)
    assert code == exit_code, done.stdout
    found: list[str] = json.loads(names)
    return found


PROBE = probe(f'{{m.split(".")[0] for m in sys.modules}} & set({HEAVY!r})')


def run_probe(
    source: Path, cwd: Path, *argv: str, env: dict[str, str] | None = None
) -> tuple[str, int, list[str]]:
    """What the command printed, its exit code, and the heavy modules it had imported."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        cwd=cwd,
        env={"PYTHONPATH": str(source), "PATH": "/usr/bin:/bin", **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    *printed, last = done.stdout.splitlines()
    code, loaded = last.split(" ", 1)
    return "\n".join(printed), int(code), json.loads(loaded)


def heavy_at_startup(source: Path) -> list[str]:
    printed, code, loaded = run_probe(source, source, "--version")
    assert code == 0 and printed.startswith("fidelity "), printed
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


@pytest.fixture
def docs_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".git").mkdir()
    (repo / "pyproject.toml").write_text(
        '[tool.fidelity.docs]\nmax_row_chars = 600\nkeyed_tables = { key = "row" }\n'
        '[[tool.fidelity.docs.page]]\npath = "*.md"\nselect = ["FD4"]\n'
    )
    (repo / "clean.md").write_text("# Clean\n\nSee [the top](#clean).\n")
    (repo / "broken.md").write_text("# Broken\n\nSee [gone](#gon).\n")
    return repo


CHECK_DOCS = {
    "clean, cached": (("check-docs", "clean.md"), 0),
    "clean, no cache": (("check-docs", "--no-cache", "clean.md"), 0),
    "a finding, -q": (("-q", "check-docs", "--no-cache", "broken.md"), 1),
    "a finding, github": (("check-docs", "--no-cache", "--format", "github", "broken.md"), 1),
    "json": (("check-docs", "--no-cache", "--json", "-", "broken.md"), 1),
}


@pytest.mark.parametrize("case", CHECK_DOCS)
def test_check_docs_imports_neither_rich_nor_jsonschema(docs_repo: Path, case: str) -> None:
    argv, expected = CHECK_DOCS[case]
    printed, code, loaded = run_probe(ROOT, docs_repo, *argv)
    assert code == expected, printed
    assert loaded == ["markdown_it"], f"{case}: {loaded} imported ({printed})"


def test_cases_list_draws_its_table_off_a_terminal_without_rich() -> None:
    """Off a terminal the table is drawn as rich draws it (`boxtable`), so neither rich nor
    the schema check's jsonschema is imported; where the environment could make rich take
    the pipe for a terminal, rich draws it, here to the same characters."""
    printed, code, loaded = run_probe(ROOT, ROOT, "cases", "list")
    assert code == 0 and "cases" in printed.splitlines()[-1] and "┏━" in printed, printed
    assert loaded == []
    by_rich, code, loaded = run_probe(ROOT, ROOT, "cases", "list", env={"TTY_COMPATIBLE": "0"})
    assert (code, loaded) == (0, ["rich"]) and by_rich == printed
    ascii_box, code, loaded = run_probe(
        ROOT, ROOT, "cases", "list", env={"PYTHONIOENCODING": "cp1252"}
    )
    assert (code, loaded) == (0, ["rich"]) and "+--" in ascii_box and "┏" not in ascii_box


@pytest.mark.parametrize("argv", [("-q", "cases", "list"), ("cases", "list", "-q")])
def test_cases_list_q_imports_nothing_heavy(argv: tuple[str, ...]) -> None:
    """Under -q the list is tab-separated lines: no table to draw, so no rich."""
    printed, code, loaded = run_probe(ROOT, ROOT, *argv)
    lines = printed.splitlines()
    assert code == 0 and lines[1] == "id\ttags\toutputs\tcommand", printed
    assert lines[-1].endswith(" cases") and loaded == []


def test_a_rich_import_in_the_report_module_is_caught(tmp_path: Path) -> None:
    source = _copy_source(tmp_path, "fidelity/cli/report.py", "import rich.table")
    table = str(ROOT / "cases" / "matrix.toml")  # run from the copy, which it must import
    printed, code, loaded = run_probe(source, source, "-q", "cases", "list", table)
    assert (code, loaded) == (0, ["rich"]), printed


def _copy_source(tmp_path: Path, module: str, planted: str) -> Path:
    """A copy of the source with ``planted`` imported at the top of ``module``."""
    source = tmp_path / "source"
    ignore = shutil.ignore_patterns("__pycache__")
    for package in ("fidelity", "checkers"):
        shutil.copytree(ROOT / package, source / package, ignore=ignore)
    path = source / module
    anchor = "from __future__ import annotations\n"
    path.write_text(path.read_text().replace(anchor, f"{anchor}\n{planted}  # noqa\n", 1))
    return source


def _cached_rerun(source: Path, repo: Path, key: Path) -> tuple[list[str], list[str]]:
    """The heavy imports of a first check-docs run and of an unchanged re-run."""
    env = {"FIDELITY_CACHE_KEY_FILE": str(key)}
    loaded = []
    for _ in range(2):
        printed, code, heavy = run_probe(source, repo, "check-docs", "clean.md", env=env)
        assert code == 0 and "1 file clean" in printed, printed
        loaded.append(heavy)
    return loaded[0], loaded[1]


def test_a_cached_rerun_imports_no_markdown_it(docs_repo: Path, tmp_path: Path) -> None:
    first, again = _cached_rerun(ROOT, docs_repo, tmp_path / "cache.key")
    assert (first, again) == (["markdown_it"], [])


def test_a_markdown_it_import_in_a_module_a_rerun_needs_is_caught(
    docs_repo: Path, tmp_path: Path
) -> None:
    source = _copy_source(tmp_path, "checkers/site.py", "import markdown_it")
    first, again = _cached_rerun(source, docs_repo, tmp_path / "cache.key")
    assert again == ["markdown_it"]


# what a one-page check-docs answered from the cache does without (issue 39: 0.06 CPU-s
# beyond Python's start-up): the parser and the rules, git (and so subprocess) for a page
# named on the command line, difflib and html until a hint or an HTML link needs them,
# importlib.resources and tempfile (the package's own files are read from its folder)
UNNEEDED = (
    *("markdown_it", "checkers.markdown", "checkers.prose", "checkers.headings"),
    *("checkers.links", "checkers.tables", "checkers.directives", "difflib", "html"),
    *("subprocess", "tempfile", "importlib.resources", "importlib.metadata", "fidelity.git"),
)
WATCH = probe(f"set(sys.modules) & set({UNNEEDED!r})")


def test_a_one_page_rerun_imports_only_what_it_needs(docs_repo: Path, tmp_path: Path) -> None:
    """As installed from a wheel (a dist-info beside the package gives the version without
    importlib.metadata). Red before: every name in UNNEEDED but html was imported."""
    source = tmp_path / "site-packages"
    for package in ("fidelity", "checkers"):
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__py*"))
    info = source / "fidelity_gate-0.0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.4\nName: fidelity-gate\nVersion: 0.0.1\n")
    env = {"PYTHONPATH": str(source), "PATH": "/usr/bin:/bin"}
    env["FIDELITY_CACHE_KEY_FILE"] = str(tmp_path / "cache.key")
    loaded = []
    for _ in range(2):
        loaded.append(watched(WATCH, ["check-docs", "clean.md"], docs_repo, env))
    assert "markdown_it" in loaded[0] and "difflib" not in loaded[0]
    assert loaded[1] == []


def test_an_invalid_configuration_still_gets_jsonschema_messages(docs_repo: Path) -> None:
    (docs_repo / "pyproject.toml").write_text("[tool.fidelity.docs]\nmax_row_chars = -1\n")
    printed, code, loaded = run_probe(ROOT, docs_repo, "check-docs", "clean.md")
    assert code == 2
    assert "jsonschema" in loaded


def test_a_module_level_jsonschema_import_in_the_checkers_is_caught(
    tmp_path: Path, docs_repo: Path
) -> None:
    ignore = shutil.ignore_patterns("__pycache__")
    for package in ("fidelity", "checkers"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=ignore)
    report = tmp_path / "checkers" / "report.py"
    anchor = "from __future__ import annotations\n"
    report.write_text(report.read_text().replace(anchor, anchor + "\nimport jsonschema\n", 1))
    _, code, loaded = run_probe(tmp_path, docs_repo, "check-docs", "clean.md")
    assert (code, loaded) == (0, ["jsonschema", "markdown_it"])


SMALL_TABLE = """[matrix]
name = "small"

[[case]]
id = "one"
argv = ["sh", "-c", "echo 1 > {out}/a.txt"]
outputs = [{ glob = "a.txt" }]
"""
VERDICT = """
import json, sys
from fidelity.cli.main import main
code = main(sys.argv[1:])
sys.stdout.flush()
print()
names = {m for m in sys.modules if m.startswith(("fidelity.kinds", "fidelity.matrix.verdict"))}
print(code, json.dumps(sorted(names)))
"""


@pytest.mark.parametrize("compare", [False, True])
def test_cases_list_loads_the_kinds_and_the_verdict_only_for_a_table_that_uses_them(
    tmp_path: Path, compare: bool
) -> None:
    """A table with no compare block and no [[accept]] is listed without the comparator
    kinds or the verdict's modules (about 0.03 CPU-s of imports; red before: both)."""
    table = tmp_path / "matrix.toml"
    extra = '\n[case.compare."a.txt"]\nkind = "text"\n' if compare else ""
    table.write_text(SMALL_TABLE + extra)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    loaded = watched(VERDICT, ["-q", "cases", "list", str(table)], tmp_path, env)
    assert ("fidelity.kinds.registry" in loaded) is compare, loaded
    assert not [m for m in loaded if m.startswith("fidelity.matrix.verdict")], loaded
    # only the kinds the table names: red before, every kind's module came in with the first
    assert ("fidelity.kinds.textdiff" in loaded) is compare, loaded
    others = ("delimited", "jsontree", "npyarray")
    assert not [m for m in loaded if m.rpartition(".")[2] in others], loaded


def test_each_family_registers_the_commands_it_is_listed_with() -> None:
    """`main.FAMILIES` says which module registers which command; a command line naming
    one imports that module alone, so a command missing from the table could not run."""
    import argparse
    import importlib

    from fidelity.cli import main

    for module, names in main.FAMILIES:
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(f"fidelity.cli.{module}").register(sub)
        assert tuple(sub.choices) == names, module
    for _, names in main.FAMILIES:
        for name in names:
            parser = main.build_parser(name)
            (chosen,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
            assert name in chosen.choices and len(chosen.choices) <= 5, name
    every = sum(len(names) for _, names in main.FAMILIES)
    for argv in (["-h", "gc"], ["--help", "check-docs"], ["-q", "--help", "gc"]):
        parser = main.build_parser(main.named_command(argv))  # the top-level help
        (chosen,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        assert len(chosen.choices) == every, argv
    assert main.named_command(["-q", "gc", "-h"]) == "gc"  # the command's own help


def test_cases_list_hashes_its_table_without_openssl() -> None:
    """`hashlib` loads OpenSSL (2.4 ms of `cases list`'s 60); the table's sha256 is
    CPython's own (`fidelity.digest`), the same digest."""
    script = probe('["_hashlib"] if "_hashlib" in sys.modules else []')
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    assert watched(script, ["-q", "cases", "list"], ROOT, env) == []


def test_check_docs_hashes_and_signs_its_cache_without_openssl(tmp_path: Path) -> None:
    """`hashlib` and `hmac` load OpenSSL (about 4 ms of a one-page check's 60): check-docs
    hashes with CPython's own BLAKE2b and signs its cache with a keyed one
    (`checkers.blake`), on the first run, the re-run from the cache and `--no-cache`."""
    (tmp_path / "page.md").write_text("# Page\n\nSee [the top](#page).\n", encoding="utf-8")
    script = probe('["_hashlib"] if "_hashlib" in sys.modules else []')
    env = {
        "PYTHONPATH": str(ROOT),
        "PATH": "/usr/bin:/bin",
        "FIDELITY_CACHE_KEY_FILE": str(tmp_path / "key"),
    }
    cache = tmp_path / ".fidelity" / "cache" / "check-docs" / "check-docs.json"
    assert watched(script, ["check-docs", "page.md"], tmp_path, env) == []
    written = cache.read_bytes()
    assert watched(script, ["check-docs", "page.md"], tmp_path, env) == []
    assert cache.read_bytes() == written  # read back and trusted: nothing re-signed
    assert watched(script, ["check-docs", "--no-cache", "page.md"], tmp_path, env) == []
    (tmp_path / "long.md").write_text(  # findings: fingerprints, subjects, a hint
        f"# Long\n\n{'word ' * 400}\n\n[x](#lomg)\n", encoding="utf-8"
    )
    for args in (["check-docs", "long.md"], ["check-docs", "--no-cache", "--json", "-", "long.md"]):
        assert watched(script, args, tmp_path, env, exit_code="1") == [], args


def test_the_cache_signature_is_a_keyed_blake2b() -> None:
    import hashlib

    from checkers import blake

    payload = b"entries"
    want = hashlib.blake2b(payload, key=b"k" * 64, digest_size=32).hexdigest().encode()
    assert blake.signature(b"k" * 64, payload) == want
    assert blake.signature(b"k" * 63, payload) != want
    long = b"k" * 65  # over BLAKE2b's 64 bytes: hashed to 64 first, still the key's own
    assert blake.signature(long, payload) == blake.signature(
        hashlib.blake2b(long).digest(), payload
    )
    assert blake.signature(long, payload) != blake.signature(b"k" * 66, payload)
    assert blake.hex_digest(payload, 16) == hashlib.blake2b(payload, digest_size=16).hexdigest()
    assert blake.same(want, bytes(want)) and not blake.same(want, want[:-1] + b"0")


@pytest.mark.parametrize("data", [b"", b"x", bytes(range(256)) * 300])
def test_the_small_text_digest_is_sha256(data: bytes) -> None:
    import hashlib

    from fidelity.digest import sha256_hex

    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()
