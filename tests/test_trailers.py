"""Commit trailers against real repositories, parsed by git itself."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import Repo, run_cli

from checkers import trailers
from checkers.errors import ConfigError
from fidelity.errors import UsageError
from fidelity.history import trailers as htrailers

CONFIG = """\
[tool.fidelity.trailers]
required = { "Assisted-by" = "Claude( Opus [0-9]+)?" }
forbidden = ["Change-Id"]
verify = { "Measured-at" = "ancestor", "Evidence" = "path" }
max_changed_lines = 20
"""


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    r = Repo(tmp_path / "repo")
    r.commit({"pyproject.toml": CONFIG, "records/x.md": "# x\n"}, "root\n\nAssisted-by: Claude\n")
    return r


def hook(repo: Repo, message: str) -> tuple[int, str]:
    """Run the check the way a commit-msg hook does, on COMMIT_EDITMSG."""
    path = repo.path / ".git" / "COMMIT_EDITMSG"
    path.write_text(message)
    return run_cli(["trailers", "--repo", str(repo.path), "--message-file", str(path)])


def codes(out: str) -> list[str]:
    return re.findall(r":\d+:\d+: (FD8\d\d) ", out)


def test_valid_message(repo: Repo) -> None:
    sha = repo.git("rev-parse", "HEAD")
    message = (
        f"Fix it\n\nWhy.\n\nAssisted-by: Claude\nMeasured-at: {sha[:10]}\nEvidence: records/x.md\n"
    )
    code, out = hook(repo, message)
    assert (code, codes(out)) == (0, [])
    assert "0 findings in 1 message" in out


def test_missing_trailer_is_red(repo: Repo) -> None:
    code, out = hook(repo, "Fix it\n\nNo trailers here.\n")
    assert (code, codes(out)) == (1, ["FD801"])
    assert "COMMIT_EDITMSG:1:1: FD801 missing required trailer `Assisted-by: ...`" in out


def test_quiet_hook_prints_each_finding_once(repo: Repo) -> None:
    """`-q` printed every finding twice: located, then again as the table's row."""
    path = repo.path / ".git" / "COMMIT_EDITMSG"
    path.write_text("Fix it\n\nBody.\n\nChange-Id: I1\nAssisted-by: GPT\n")
    code, out = run_cli(["trailers", "--repo", str(repo.path), "--message-file", str(path), "-q"])
    assert code == 1
    assert out.splitlines() == [
        f"{path}:5:1: FD803 Change-Id is a forbidden trailer",
        f"{path}:6:1: FD802 Assisted-by: 'GPT' does not match 'Claude( Opus [0-9]+)?'",
        "2 findings in 1 message",
    ]


def test_quiet_range_prints_each_finding_once_and_the_clean_messages(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD")
    good = repo.commit({"a.txt": "a\n"}, "good\n\nAssisted-by: Claude\n")
    bad = repo.commit({"b.txt": "b\n"}, "bad\n\nno trailer\n")
    code, out = run_cli(["trailers", "-q", "--repo", str(repo.path), "--range", f"{base}..HEAD"])
    assert code == 1
    assert out.splitlines() == [
        f"{bad[:12]}:1:1: FD801 missing required trailer `Assisted-by: ...`",
        "commit trailers",
        "where\tline\tcode\tmessage",
        f"{good[:12]}\t\tok\tgood (trailers: Assisted-by)",
        "1 finding in 2 messages; 2 files, 2 lines changed",
    ]


def test_wrong_value_is_red_with_its_line(repo: Repo) -> None:
    code, out = hook(repo, "Fix it\n\nBody.\n\nSigned-off-by: A <a@b>\nAssisted-by: GPT\n")
    assert code == 1
    assert "COMMIT_EDITMSG:6:1: FD802 Assisted-by: 'GPT' does not match" in out


def test_folded_value_is_unfolded_as_git_does(repo: Repo, tmp_path: Path) -> None:
    path = repo.path / ".git" / "COMMIT_EDITMSG"
    path.write_text("Fix it\n\nBody.\n\nAssisted-by: Claude\n  Opus 4\n")
    out_json = tmp_path / "t.json"
    argv = ["trailers", "--repo", str(repo.path), "--message-file", str(path)]
    code, out = run_cli([*argv, "--json", str(out_json)])
    assert (code, codes(out)) == (0, [])
    (checked,) = json.loads(out_json.read_text())["checked"]
    assert checked["trailers"] == [["Assisted-by", "Claude Opus 4"]]  # one value, unfolded


def test_trailer_in_the_wrong_paragraph_is_missing(repo: Repo) -> None:
    message = "Fix it\n\nAssisted-by: Claude\n\nThe last paragraph is prose, not trailers.\n"
    code, out = hook(repo, message)
    assert (code, codes(out)) == (1, ["FD801"])
    assert "COMMIT_EDITMSG:3:1: FD801 Assisted-by is written on line 3 but is not a trailer" in out


def test_comments_and_scissors_are_ignored(repo: Repo) -> None:
    message = (
        "Fix it\n\nBody.\n\nAssisted-by: Claude\n# Please enter the commit message\n"
        "# ------------------------ >8 ------------------------\nChange-Id: I123\n"
    )
    assert hook(repo, message)[0] == 0


def test_forbidden_trailer(repo: Repo) -> None:
    code, out = hook(repo, "Fix it\n\nBody.\n\nAssisted-by: Claude\nChange-Id: I0123\n")
    assert (code, codes(out)) == (1, ["FD803"])


def test_measured_at_must_be_an_ancestor(repo: Repo) -> None:
    repo.git("switch", "-q", "-c", "side")
    side = repo.commit({"s.txt": "s\n"}, "side\n\nAssisted-by: Claude\n")
    repo.git("switch", "-q", "main")
    code, out = hook(repo, f"Fix\n\nBody.\n\nAssisted-by: Claude\nMeasured-at: {side}\n")
    assert (code, codes(out)) == (1, ["FD804"])
    assert "is not an ancestor of" in out
    code, out = hook(repo, "Fix\n\nBody.\n\nAssisted-by: Claude\nMeasured-at: 0123abcd\n")
    assert "names no commit in this repository" in out


def test_evidence_path_checked_against_the_index(repo: Repo) -> None:
    message = "Fix\n\nBody.\n\nAssisted-by: Claude\nEvidence: records/new.md\n"
    code, out = hook(repo, message)
    assert (code, codes(out)) == (1, ["FD805"])
    repo.write({"records/new.md": "new\n"})  # in the work tree only: not in the commit
    code, out = hook(repo, message)
    assert (code, codes(out)) == (1, ["FD805"])
    repo.git("add", "records/new.md")  # staged: part of the commit being made
    assert hook(repo, message)[0] == 0
    assert hook(repo, message.replace("records/new.md", "records/"))[0] == 0  # a folder


@pytest.mark.parametrize("pattern", ["records/*.md", "rec*", ":(glob)**/x.md", "records/[nx].md"])
def test_an_evidence_path_is_a_path_not_a_pattern(repo: Repo, pattern: str) -> None:
    """Red before: in the commit-msg hook the value went to `git ls-files` as a pathspec,
    so a pattern any staged file matched passed there, and failed in `--range`."""
    message = f"Fix\n\nBody.\n\nAssisted-by: Claude\nEvidence: {pattern}\n"
    code, out = hook(repo, message)
    assert (code, codes(out)) == (1, ["FD805"]), out
    base = repo.git("rev-parse", "HEAD")
    repo.commit({"a.txt": "a\n"}, message)
    code, out = run_cli(["trailers", "--repo", str(repo.path), "--range", f"{base}..HEAD"])
    assert (code, codes(out)) == (1, ["FD805"]), out


def test_range_names_the_bad_commit(repo: Repo, tmp_path: Path) -> None:
    base = repo.git("rev-parse", "HEAD")
    repo.commit({"a.txt": "a\n"}, "good\n\nAssisted-by: Claude\n")
    bad = repo.commit({"b.txt": "b\n"}, "bad\n\nno trailer\n")
    out_json = tmp_path / "t.json"
    code, out = run_cli(
        ["trailers", "--repo", str(repo.path), "--range", f"{base}..HEAD", "--json", str(out_json)]
    )
    assert code == 1
    assert f"{bad[:12]}:1:1: FD801 missing required trailer" in out
    data = json.loads(out_json.read_text())
    assert [c["subject"] for c in data["checked"]] == ["bad", "good"]
    assert data["size"] == {"files": 2, "lines": 2}


def test_range_enforces_forbidden_and_verified_trailers(repo: Repo) -> None:
    """Each rule in `--range`, one commit per rule: a forbidden trailer, a Measured-at that
    is not an ancestor, an Evidence path the commit does not hold (red with any of the
    three left out of the range check: the hook's tests never reached them)."""
    repo.git("switch", "-q", "-c", "side")
    side = repo.commit({"s.txt": "s\n"}, "side\n\nAssisted-by: Claude\n")
    repo.git("switch", "-q", "main")
    base = repo.git("rev-parse", "HEAD")
    said = "Assisted-by: Claude"
    forbidden = repo.commit({"a.txt": "a\n"}, f"forbidden\n\n{said}\nChange-Id: I0123\n")
    measured = repo.commit({"b.txt": "b\n"}, f"measured\n\n{said}\nMeasured-at: {side}\n")
    evidence = repo.commit({"c.txt": "c\n"}, f"evidence\n\n{said}\nEvidence: records/gone.md\n")
    code, out = run_cli(["trailers", "--repo", str(repo.path), "--range", f"{base}..HEAD"])
    assert code == 1, out
    found = re.findall(r"^([0-9a-f]{12}):\d+:\d+: (FD8\d\d) ", out, re.M)
    assert sorted(found) == sorted(
        [(forbidden[:12], "FD803"), (measured[:12], "FD804"), (evidence[:12], "FD805")]
    ), out


def test_range_size_rule(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD")
    repo.commit({"big.txt": "x\n" * 21}, "big\n\nAssisted-by: Claude\n")
    code, out = run_cli(["trailers", "--repo", str(repo.path), "--range", f"{base}..main"])
    assert (code, codes(out)) == (1, ["FD806"])
    assert "21 lines changed (limit 20)" in out


def test_empty_range_checked_nothing(repo: Repo) -> None:
    code, out = run_cli(["trailers", "--repo", str(repo.path), "--range", "HEAD..HEAD"])
    assert code == 3
    assert "nothing checked" in out


def test_unknown_revision_in_range(repo: Repo) -> None:
    with pytest.raises(UsageError, match="unknown revision 'nope'"):
        run_cli(["trailers", "--repo", str(repo.path), "--range", "nope..HEAD"])


def test_unknown_config_key_is_named() -> None:
    with pytest.raises(ConfigError, match=r"unknown key 'requird'"):
        trailers.rules_from_config({"requird": {}}, "pyproject.toml")


def test_bad_regex_is_named() -> None:
    with pytest.raises(ConfigError, match=r"required.Assisted-by: bad regex"):
        trailers.rules_from_config({"required": {"Assisted-by": "("}}, "pyproject.toml")


class _Nothing:
    def commit_problem(self, value: str) -> str | None:
        return None

    def has_path(self, value: str) -> bool:
        return True


def test_keys_compare_case_insensitively() -> None:
    rules = trailers.rules_from_config({"required": {"Assisted-By": ".+"}}, "p")
    found = trailers.check_message(
        "m", "s\n\nassisted-by: x\n", [("assisted-by", "x")], rules, _Nothing()
    )
    assert found == ()


# --- agreement with git log's trailer parser on real message shapes ---

SHAPES = sorted((Path(__file__).parent / "data" / "trailers").glob("*.txt"))


def git_log_trailers(repo: Repo, sha: str) -> list[tuple[str, str]]:
    """The oracle: what `git log --format=%(trailers:only,unfold)` prints, line by line."""
    out = repo.git("log", "-1", "--format=%(trailers:only,unfold)", sha)
    return [
        (k.strip(), v.strip()) for k, _, v in (line.partition(":") for line in out.splitlines())
    ]


@pytest.mark.parametrize("shape", SHAPES, ids=[p.stem for p in SHAPES])
def test_trailers_agree_with_git_log(tmp_path: Path, shape: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit({"pyproject.toml": '[tool.fidelity.trailers]\nforbidden = ["X-Never"]\n'}, "root")
    base = repo.git("rev-parse", "HEAD")
    repo.write({"f.txt": shape.stem})
    repo.git("add", "-A")
    repo.git("commit", "-q", "--cleanup=verbatim", "-F", str(shape))
    sha = repo.git("rev-parse", "HEAD")
    expected = git_log_trailers(repo, sha)
    report = htrailers.check(repo.path, None, f"{base}..HEAD")
    assert [list(t) for t in report.checked[0].trailers] == [list(t) for t in expected]
    stored = tmp_path / "stored.txt"  # the same message as a commit-msg hook would see it
    stored.write_bytes(
        subprocess.run(
            ["git", "log", "-1", "--format=%B", sha], cwd=repo.path, capture_output=True, check=True
        ).stdout
    )
    from_file = htrailers.check_file(repo.path, stored, htrailers.rules(repo.path))
    assert list(from_file.checked[0].trailers) == list(report.checked[0].trailers)


def test_dependabot_signoff_below_a_divider_is_found(tmp_path: Path) -> None:
    """Every Dependabot commit has `---` above its final block: the sign-off is a trailer."""
    repo = Repo(tmp_path / "repo")
    rules = '[tool.fidelity.trailers]\nrequired = { "Signed-off-by" = ".+" }\n'
    repo.commit({"pyproject.toml": rules}, "root\n\nSigned-off-by: A <a@b>\n")
    message = tmp_path / "msg"
    message.write_bytes(
        (Path(__file__).parent / "data" / "trailers" / "dependabot.txt").read_bytes()
    )
    code, out = run_cli(["trailers", "--repo", str(repo.path), "--message-file", str(message)])
    assert (code, codes(out)) == (0, [])
    # its nearest invalid neighbour: the same message without the sign-off is red
    message.write_text(
        message.read_text().replace("Signed-off-by: dependabot[bot] <support@github.com>\n", "")
    )
    code, out = run_cli(["trailers", "--repo", str(repo.path), "--message-file", str(message)])
    assert (code, codes(out)) == (1, ["FD801"])


keys = st.text(alphabet="Ab0-_ x\n", min_size=0, max_size=4)
values = st.one_of(st.text(max_size=3), st.integers(-1, 3), st.booleans(), st.none())
sections = st.dictionaries(
    st.sampled_from(
        ["required", "forbidden", "verify", "max_changed_files", "max_changed_lines", "other"]
    ),
    st.one_of(
        values,
        st.lists(st.one_of(keys, values), max_size=3),
        st.dictionaries(
            keys, st.one_of(st.sampled_from(["ancestor", "path", ".+"]), values), max_size=3
        ),
    ),
)


@given(section=sections)
def test_the_fast_configuration_check_never_accepts_what_the_schema_refuses(
    section: dict[str, object],
) -> None:
    from checkers import schema

    if trailers.plainly_valid(section):
        assert schema.errors("checkers", "trailers", section) == []


def test_the_fast_configuration_check_accepts_the_usual_sections() -> None:
    usual = {
        "required": {"Signed-off-by": ".+"},
        "forbidden": ["Change-Id"],
        "verify": {"Measured-at": "ancestor"},
        "max_changed_lines": 400,
    }
    assert trailers.plainly_valid(usual)
    assert not trailers.plainly_valid({**usual, "max_changed_lines": True})
    assert not trailers.plainly_valid({**usual, "forbidden": ["Change-Id", "Change-Id"]})
    assert not trailers.plainly_valid({**usual, "verify": {"Measured-at": "commit"}})


def test_trailer_codes_never_share_a_number_with_check_docs_codes():
    """preflight prints both gates' findings side by side: a code must mean one thing
    ("FD701" meant both a missing trailer and a page that is not UTF-8 up to 0.2.0)."""
    from checkers.findings import Code as DocsCode

    shared = {str(c) for c in trailers.Code} & {str(c) for c in DocsCode}
    assert not shared, f"codes used by both check-docs and trailers: {sorted(shared)}"
    assert all(str(c).startswith("FD8") for c in trailers.Code)


@pytest.mark.parametrize("separator", ["\x85", "\u2028", "\x0b", "\x0c", "\x1c"])
def test_the_hook_and_the_range_read_one_message_alike(repo: Repo, separator: str) -> None:
    """Python's splitlines also breaks at U+0085, U+2028 and three control characters; git
    does not: the commit-msg hook saw two trailers where `--range` (and git log) saw one,
    and passed the message CI then failed."""
    message = f"s\n\nSigned-off-by: a <a@b>{separator}Assisted-by: Claude\n"
    hook_code, hook_out = hook(repo, message)
    base = repo.git("rev-parse", "HEAD")
    repo.commit({"c.txt": "c\n"}, message)
    code, out = run_cli(["trailers", "--repo", str(repo.path), "--range", f"{base}..HEAD"])
    assert (hook_code, codes(hook_out)) == (code, codes(out)) == (1, ["FD801"]), hook_out


@pytest.mark.parametrize("quiet", [[], ["-q"]])
def test_repository_text_reaches_the_log_escaped(repo: Repo, quiet: list[str]) -> None:
    """Commit subjects, trailer values and the message file's name were printed as they
    are: a terminal's escapes (clear the screen, retitle it), and a line break or carriage
    return before `::add-mask::`, a GitHub workflow command of the commit's making."""
    base = repo.git("rev-parse", "HEAD")
    repo.commit({"a.txt": "a\n"}, "subj \x1b[2J\x1b]0;owned\x07\n\nAssisted-by: Claude\n")
    repo.commit(
        {"b.txt": "b\n"}, "subj\r::add-mask::x\n\nAssisted-by: Claude\nEvidence: x\x1b[2J\n"
    )
    code, out = run_cli(["trailers", *quiet, "--repo", str(repo.path), "--range", f"{base}..HEAD"])
    named = repo.path / "msg\n::add-mask::m.txt"
    named.write_text("s\n\nno trailer\n")
    code2, out2 = run_cli(
        ["trailers", *quiet, "--repo", str(repo.path), "--message-file", str(named)]
    )
    for text in (out, out2):
        assert not any(c in text for c in "\x1b\x07\r"), repr(text)
        assert not any(line.lstrip().startswith("::") for line in text.splitlines()), text
    assert code == 1 and code2 == 1
