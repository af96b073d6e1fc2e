"""What preflight judges besides the index: a symbolic link retargeted under a Markdown
link, and a branch's first push (pre-commit's pre-push names no range then). Real
repositories and the real CLI."""

from __future__ import annotations

from support import Repo, preflight_cli

PYPROJECT = '[tool.fidelity.docs]\npaths = ["README.md"]\n'
GOOD, BAD = "# Demo\n\nSee [a](a.txt).\n", "# Demo\n\nSee [a](gone.txt).\n"


def test_a_retargeted_symbolic_link_runs_the_docs_gate(make_repo) -> None:
    repo: Repo = make_repo("links")
    repo.commit(
        {"pyproject.toml": PYPROJECT, "README.md": "# Demo\n\nSee [l](l.txt).\n", "a.txt": "a\n"}
    )
    (repo.path / "l.txt").symlink_to("a.txt")
    repo.commit(message="link")
    (repo.path / "l.txt").unlink()
    (repo.path / "l.txt").symlink_to("gone.txt")
    repo.git("add", "l.txt")
    code, out = preflight_cli(repo, "--staged")
    assert code == 1 and "FD401" in out, out
    assert "l.txt is a symbolic link that changed" in preflight_cli(repo, "--staged", "--list")[1]
    repo.git("commit", "-qm", "retarget")
    code, out = preflight_cli(repo, "--from-ref", "HEAD~1", "--to-ref", "HEAD")
    assert code == 1 and "FD401" in out, out


def test_a_first_push_judges_the_pushed_commit_not_the_work_tree(make_repo) -> None:
    """pre-commit runs pre-push on a new branch with every work-tree file and no range; the
    fix left unstaged in the work tree must not hide the broken commit being pushed."""
    repo: Repo = make_repo("push")
    repo.commit({"pyproject.toml": PYPROJECT, "README.md": BAD, "a.txt": "a\n"}, "broken")
    repo.write({"README.md": GOOD})  # fixed on disk, not committed
    files = ["--pre-commit", "--", "README.md", "a.txt", "pyproject.toml"]
    assert preflight_cli(repo, *files)[0] == 0, "as --all-files: the work tree is fine"
    code, out = preflight_cli(repo, *files, env={"PRE_COMMIT_LOCAL_BRANCH": "refs/heads/main"})
    assert code == 1 and "FD401" in out, out


def test_preflight_keeps_check_docs_cache_and_a_hand_edited_one_changes_nothing(make_repo) -> None:
    """The docs gate answers unchanged pages from check-docs' signed cache; a cache edited to
    clear a page's findings is not signed with this machine's key, so the page is judged."""
    import re

    repo: Repo = make_repo("cached")
    repo.commit({"pyproject.toml": PYPROJECT, "README.md": BAD, "a.txt": "a\n"}, "broken")
    code, out = preflight_cli(repo, "--all")
    assert code == 1 and "FD401" in out, out
    (cache,) = (repo.path / ".fidelity" / "cache" / "check-docs").iterdir()
    raw = cache.read_bytes()
    edited = re.sub(rb'"findings":\[\[.*?\]\]', b'"findings":[]', raw)
    assert edited != raw, "the page's finding was cached"
    cache.write_bytes(edited)
    code, out = preflight_cli(repo, "--all")
    assert code == 1 and "FD401" in out, out


def test_a_range_judges_every_message_in_it(make_repo) -> None:
    """`--from-ref/--to-ref` (CI, pre-push) said "no commit message to judge" and passed a
    range whose commits broke the trailer rules, which `fidelity trailers --range` fails."""
    repo: Repo = make_repo("messages")
    config = '[tool.fidelity.trailers]\nrequired = { "Tested-by" = ".+" }\n'
    repo.commit({"pyproject.toml": config}, "config\n\nTested-by: a\n")
    repo.commit({"f.txt": "1\n"}, "no trailer\n")
    repo.commit({"f.txt": "2\n"}, "kept\n\nTested-by: b\n")
    code, out = preflight_cli(repo, "--from-ref", "HEAD~2", "--to-ref", "HEAD")
    assert code == 1 and out.count("FD801 missing required trailer") == 1, out
    code, out = preflight_cli(repo, "--from-ref", "HEAD~1", "--to-ref", "HEAD")
    assert code == 0 and "every message of the range keeps the rules (1 message)" in out, out


def test_all_with_only_a_gate_that_needs_a_message_says_so(make_repo) -> None:
    """`--all` with only trailers configured told the user to configure a gate."""
    repo: Repo = make_repo("only-trailers")
    config = '[tool.fidelity.trailers]\nrequired = { "Tested-by" = ".+" }\n'
    repo.commit({"pyproject.toml": config}, "config\n\nTested-by: a\n")
    code, out = preflight_cli(repo, "--all")
    assert code == 3 and "configure a gate" not in out and "no configured gate applies" in out
