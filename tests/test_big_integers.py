"""Integers past 2**53, which one float64 cannot tell apart: a seed, a hash, an id moved by
one was judged `within-tolerance` (exit 0) in csv, json and npy outputs, where the documented
rule `|cand - base| <= atol + rtol * |base|` with the default tolerances of 0 says moved.
Real repositories, the real CLI."""

from __future__ import annotations

import io

import numpy as np
import pytest
from support import Repo, fidelity_cli


def npy(values: list[int], dtype: str) -> bytes:
    out = io.BytesIO()
    np.save(out, np.array(values, dtype=dtype))
    return out.getvalue()


SHAPES: dict[str, tuple[str | bytes, str | bytes]] = {
    "csv": ("id,seed\n1,12345678901234567\n", "id,seed\n1,12345678901234568\n"),
    "json": ('{"run": {"seed": 18446744073709551615}}', '{"run": {"seed": 18446744073709551614}}'),
    "int64": (npy([2**53 + 1], "int64"), npy([2**53], "int64")),
    "uint64": (npy([2**64 - 1], "uint64"), npy([2**64 - 2], "uint64")),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_an_integer_past_2_53_moved_by_one_is_moved(make_repo, shape: str) -> None:
    kind = "npy" if shape.endswith("64") else shape
    name = f"out.{kind}"
    table = (
        f'[[case]]\nid = "c"\nargv = ["cp", "data", "{{out}}/{name}"]\noutputs = ["{name}"]\n'
        f'\n[case.compare."{name}"]\nkind = "{kind}"\n'
    )
    before, after = SHAPES[shape]
    repo: Repo = make_repo("big")
    repo.commit({"cases/matrix.toml": table, "data": before}, "base")
    repo.commit({"data": after}, "moved by one")
    done = fidelity_cli(repo.path, "-q", "run", "--baseline", "HEAD~1", "--candidate", "HEAD")
    assert done.returncode == 1 and "within-tolerance" not in done.stdout, done.stdout
    (run_dir,) = (repo.path / ".fidelity" / "runs").iterdir()
    assert fidelity_cli(repo.path, "compare", str(run_dir)).returncode == 1


def test_a_relative_tolerance_still_holds_them(make_repo) -> None:
    table = (
        '[[case]]\nid = "c"\nargv = ["cp", "data", "{out}/out.json"]\noutputs = ["out.json"]\n'
        '\n[case.compare."out.json"]\nkind = "json"\nrtol = 1e-9\n'
    )
    repo: Repo = make_repo("big-rtol")
    repo.commit({"cases/matrix.toml": table, "data": '{"n": 12345678901234567}'}, "base")
    repo.commit({"data": '{"n": 12345678901234568}'}, "moved by one")
    done = fidelity_cli(repo.path, "-q", "run", "--baseline", "HEAD~1", "--candidate", "HEAD")
    assert done.returncode == 0, done.stdout


def two_arrays(first: list[float], second: list[float]) -> bytes:
    out = io.BytesIO()
    np.save(out, np.array(first))
    np.save(out, np.array(second))  # one file, two arrays: np.load reads the first only
    return out.getvalue()


def test_a_second_array_saved_into_an_npy_file_is_compared_too(make_repo) -> None:
    """Only the first array was compared: a moved second one was "no value differs; only the
    header ... changed" (exit 0)."""
    table = (
        '[[case]]\nid = "c"\nargv = ["cp", "data", "{out}/a.npy"]\noutputs = ["a.npy"]\n'
        '\n[case.compare."a.npy"]\nkind = "npy"\n'
    )
    repo: Repo = make_repo("two-arrays")
    repo.commit({"cases/matrix.toml": table, "data": two_arrays([0, 0, 0], [0, 0, 0])}, "base")
    repo.commit({"data": two_arrays([0, 0, 0], [1, 1, 1])}, "the second moved")
    done = fidelity_cli(repo.path, "-q", "run", "--baseline", "HEAD~1", "--candidate", "HEAD")
    assert done.returncode == 1 and "after the array" in done.stdout, done.stdout


@pytest.mark.parametrize(
    ("ignore", "before", "after", "code"),
    [
        ('["$.a.b"]', '{"a": {"b": 1}, "a.b": 1.0}', '{"a": {"b": 1}, "a.b": 2.0}', 1),
        ('["b"]', '{"b": 1, "a.b": 1}', '{"b": 2, "a.b": 2}', 1),
        ('["$.runs[0]"]', '{"runs": [1], "runs[0]": 1}', '{"runs": [1], "runs[0]": 2}', 1),
        ("['$[\"a.b\"]']", '{"a": {"b": 1}, "a.b": 1.0}', '{"a": {"b": 1}, "a.b": 2.0}', 0),
    ],
)
def test_an_ignore_path_never_matches_a_key_that_only_looks_like_it(
    make_repo, ignore: str, before: str, after: str, code: int
) -> None:
    """`$.a.b` also ignored a top-level key named "a.b" (exit 0): a key a path segment
    cannot spell is written `$["a.b"]`, in reports and in ignore entries."""
    table = (
        '[[case]]\nid = "c"\nargv = ["cp", "data", "{out}/o.json"]\noutputs = ["o.json"]\n'
        f'\n[case.compare."o.json"]\nkind = "json"\nignore = {ignore}\n'
    )
    repo: Repo = make_repo("ignores")
    repo.commit({"cases/matrix.toml": table, "data": before}, "base")
    repo.commit({"data": after}, "moved")
    done = fidelity_cli(repo.path, "-q", "run", "--baseline", "HEAD~1", "--candidate", "HEAD")
    assert done.returncode == code, done.stdout + done.stderr
