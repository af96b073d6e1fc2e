"""The product is typed `--strict`: CI's plain `mypy fidelity checkers` reads pyproject.toml,
whose override for fidelity and checkers sets every flag `mypy --strict` sets, so the two are
one check; tests stay relaxed. mypy's own option parser says which flags `--strict` sets, so a
flag a new mypy adds to it shows up here as missing."""

from __future__ import annotations

from pathlib import Path

from mypy.main import process_options
from mypy.options import Options

ROOT = Path(__file__).resolve().parents[1]
# global in mypy (no per-module form); left out because the tests' check shares this config
# and does not import every library the product's check does, so it would note those
# sections as unused on every run; it says nothing about the code
GLOBAL_ONLY = {"warn_unused_configs"}


def _options(*args: str) -> Options:
    return process_options([*args, "-c", "pass"])[1]


def strict_flags(empty: Path) -> dict[str, object]:
    """Each option `--strict` changes from mypy's defaults, with the value it gives it."""
    empty.write_text("[mypy]\n")
    base = _options("--config-file", str(empty))
    strict = _options("--config-file", str(empty), "--strict")
    names = [n for n in dir(base) if not n.startswith("_") and not callable(getattr(base, n))]
    return {n: getattr(strict, n) for n in names if getattr(base, n) != getattr(strict, n)}


def short_of_strict(config: Path, module: str, empty: Path) -> list[str]:
    """The `--strict` flags that config leaves off for module."""
    effective = _options("--config-file", str(config)).clone_for_module(module)
    flags = strict_flags(empty)
    return sorted(
        n for n, v in flags.items() if getattr(effective, n) != v and n not in GLOBAL_ONLY
    )


def test_strict_sets_flags_mypy_knows(tmp_path: Path) -> None:
    flags = strict_flags(tmp_path / "empty.ini")
    assert {"warn_return_any", "disallow_any_generics", "check_untyped_defs"} <= set(flags)


def test_the_product_is_checked_strict(tmp_path: Path) -> None:
    config = ROOT / "pyproject.toml"
    for module in ("fidelity", "fidelity.git.command", "checkers", "checkers.check"):
        assert short_of_strict(config, module, tmp_path / "empty.ini") == [], module


def test_tests_stay_relaxed(tmp_path: Path) -> None:
    config = ROOT / "pyproject.toml"
    assert "disallow_incomplete_defs" in short_of_strict(config, "support", tmp_path / "e.ini")


def test_a_flag_left_off_the_override_is_caught(tmp_path: Path) -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert text.count("\nwarn_return_any = true\n") == 1
    config = tmp_path / "pyproject.toml"
    config.write_text(text.replace("\nwarn_return_any = true\n", "\n"), encoding="utf-8")
    assert short_of_strict(config, "fidelity.cli", tmp_path / "e.ini") == ["warn_return_any"]
