"""Every shell example a reader is meant to type works as documented, or says why it is not
run here (tests/docexamples.py reads the `<!-- example: ... -->` comment before each
block). The runnable ones run in a scratch copy of the demo repository, built once for the
module; each gets its own copy, so no example sees what another left.

The red cases plant an unmarked block, a block whose documented exit code or output no
longer holds, and a command .ci/run does not run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import docexamples
import pytest

from fidelity.demo.show import materialise
from fidelity.git import command

ROOT = Path(__file__).resolve().parents[1]
ALL = docexamples.collect(ROOT)
RUN = [e for e in ALL if e.words is not None and docexamples.kind(e) == "run"]
RAN_BY = [e for e in ALL if e.words is not None and docexamples.kind(e) == "ran-by"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo repository: HEAD (main) at the fix, origin/main at the refactor, as if the
    fix were a branch about to be pushed."""
    repo = tmp_path_factory.mktemp("examples") / "demo"
    shas = materialise(repo)
    command.git(repo, "update-ref", "refs/remotes/origin/main", shas["refactor"])
    return repo


@pytest.fixture
def scratch(demo: Path, tmp_path: Path) -> Path:
    """A copy of the demo repository of this example's own."""
    return Path(shutil.copytree(demo, tmp_path / "demo", symlinks=True))


def test_every_shell_example_is_marked() -> None:
    assert len(ALL) >= 15  # the walk found the pages' blocks
    assert RUN and RAN_BY
    assert [p for e in ALL for p in docexamples.problems(e)] == []


@pytest.mark.parametrize("example", RUN, ids=[e.where for e in RUN])
def test_a_runnable_example_works_as_documented(
    example: docexamples.Example, scratch: Path, tmp_path: Path
) -> None:
    wrong, output = docexamples.run(example, scratch, tmp_path)
    assert wrong == [], output[-3000:]


@pytest.mark.parametrize("example", RAN_BY, ids=[e.where for e in RAN_BY])
def test_an_example_that_ci_runs_is_run_word_for_word(example: docexamples.Example) -> None:
    assert docexamples.ran_by(example, ROOT) == []


# --- the red cases ----------------------------------------------------------------------------


def one(text: str) -> docexamples.Example:
    (found,) = docexamples.examples("page.md", text)
    return found


def test_an_unmarked_example_is_caught() -> None:
    page = "Try:\n\n```sh\nfidelity run --baseline origin/main\n```\n"
    (found,) = docexamples.problems(one(page))
    assert found.startswith("page.md:3: a shell example with no annotation")
    # a paragraph between the comment and the fence separates them
    apart = 'Try:\n\n<!-- example: skip="x" -->\nsee:\n```console\n$ fidelity\n```\n'
    assert docexamples.problems(one(apart))[0].startswith("page.md:5: a shell example")


@pytest.mark.parametrize(
    ("words", "says"),
    [
        ('skip=""', "skip needs a reason"),
        ('skip="x" exit=1', "skip needs a reason and no other words"),
        ("exits=1", "unknown word 'exits'"),
        ("exit=one", "is not a list of exit codes"),
        ("ran-by=.ci/run exit=1", "ran-by takes no other words"),
        ('expect="unclosed', "cannot be read: No closing quotation"),
    ],
)
def test_a_malformed_annotation_is_caught(words: str, says: str) -> None:
    page = f"<!-- example: {words} -->\n```bash\nfidelity --version\n```\n"
    assert any(says in p for p in docexamples.problems(one(page)))


def test_a_marked_example_with_its_words_is_read() -> None:
    page = (
        '<!--\n  example: exit=1,0 expect="a b" env=X=1 where=RUN=$(ls)\n-->\n\n'
        "```sh\nfidelity report RUN \\\n  --html r.html\n# a comment\necho ok\n```\n"
    )
    example = one(page)
    assert docexamples.problems(example) == []
    todo = docexamples.plan(example)
    assert todo.commands == ("fidelity report $(ls) --html r.html", "echo ok")
    assert (todo.exits, todo.expect, todo.env) == ((1, 0), ("a b",), (("X", "1"),))


def test_a_broken_example_goes_red(scratch: Path, tmp_path: Path) -> None:
    """A real command documented with the wrong exit code and a line it no longer prints:
    both are named; the same block with the truth passes."""
    truth = 'exit=2 expect="cases/nope.toml"'
    block = "```sh\nfidelity cases validate cases/nope.toml\n```\n"
    wrong, _ = docexamples.run(one(f"<!-- example: {truth} -->\n{block}"), scratch, tmp_path)
    assert wrong == []
    planted = one(f'<!-- example: exit=0 expect="valid: 5 cases" -->\n{block}')
    wrong, _ = docexamples.run(planted, scratch, tmp_path)
    assert wrong == [
        "page.md:2: `fidelity cases validate cases/nope.toml` exited 2, documented 0",
        "page.md:2: no line of the output holds 'valid: 5 cases'",
    ]


def test_a_console_transcript_checks_its_shown_output(scratch: Path, tmp_path: Path) -> None:
    page = "<!-- example: -->\n```console\n$ echo hello\nhello\n$ echo bye\nbye\n```\n"
    assert docexamples.run(one(page), scratch, tmp_path)[0] == []
    wrong, _ = docexamples.run(one(page.replace("\nbye", "\nfarewell")), scratch, tmp_path)
    assert wrong == ["page.md:2: no line of the output holds 'farewell'"]


def test_a_failing_hidden_step_goes_red(scratch: Path, tmp_path: Path) -> None:
    page = '<!-- example: then="test -f nothing-here" -->\n```sh\necho hi\n```\n'
    wrong, _ = docexamples.run(one(page), scratch, tmp_path)
    assert wrong == ["page.md:2: `test -f nothing-here` exited 1, documented 0"]


def test_a_command_ci_does_not_run_is_caught() -> None:
    page = (
        "<!-- example: ran-by=.ci/run -->\n```sh\npython -m pip install . && fidelity demo\n```\n"
    )
    assert docexamples.ran_by(one(page), ROOT) == []
    moved = one(page.replace("fidelity demo", "fidelity demo --html x.html"))
    (found,) = docexamples.ran_by(moved, ROOT)
    assert "does not run `python -m pip install . && fidelity demo --html x.html`" in found
    assert docexamples.ran_by(one(page.replace(".ci/run", ".ci/nope")), ROOT) != []
