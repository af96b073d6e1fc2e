"""Controls that write themselves (issue 13 item 10): `suggest` prints the observed failing
set as an entry that then holds, and `validate` checks anchors and ids without running a
test (`from-fix`: tests/test_controls_fromfix.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from support import CONTROLS_LIB, Repo, controls_lib, run_cli

from fidelity.controls import gate as controls
from fidelity.controls.table import parse
from fidelity.controls.verdict import Verdict

TABLE = (CONTROLS_LIB / "controls.toml").read_text()
HEAD = TABLE.partition("[[control]]")[0]


@pytest.fixture
def lib(make_repo: Callable[[str], Repo]) -> Repo:
    repo = make_repo("lib")
    controls_lib(repo)
    return repo


def test_suggest_writes_the_entry_the_edit_deserves_and_it_holds(
    lib: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = TABLE.replace(
        '"tests/test_cli.py::test_cli_prints_gross",\n  "tests/test_prices.py::test_gross[100-120]",\n  "tests/test_prices.py::test_gross[250-300]",\n]\n\n[[control]]\nid = "cart-total',
        '"tests/test_prices.py::test_net",\n]\n\n[[control]]\nid = "cart-total',
    )
    lib.commit({"cases/controls.toml": wrong})
    code, out = run_cli(["controls", "suggest", "gross-drops-tax", "--repo", str(lib.path)])
    assert code == 0
    assert "SUGGESTED: 3 test(s) fail for 'gross-drops-tax'" in capsys.readouterr().err
    (suggested,) = parse((HEAD + out).encode(), "suggested").controls
    assert suggested.caught_by == (
        "tests/test_cli.py::test_cli_prints_gross",
        "tests/test_prices.py::test_gross[100-120]",
        "tests/test_prices.py::test_gross[250-300]",
    )
    assert out.startswith("# observed at "), "it says where and how it was observed"
    lib.commit({"cases/controls.toml": HEAD + out})
    report = controls.run(lib.path, controls.load(lib.path), jobs=1)
    assert [r.verdict for r in report.results] == [Verdict.CAUGHT]


def test_suggest_an_edit_of_your_own_that_nothing_catches_is_a_residue(
    lib: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run_cli(
        [
            "controls",
            "suggest",
            "--repo",
            str(lib.path),
            "--file",
            "shop/prices.py",
            "--find",
            "if pct < 0:",
            "--replace",
            "if pct < -1:",
            "--id",
            "neg-discount",
        ]
    )
    assert code == 0, capsys.readouterr().err
    (entry,) = parse((HEAD + out).encode(), "suggested").controls
    assert entry.id == "neg-discount" and entry.survives and "no test fails" in entry.residue


def test_suggest_refuses_an_edit_that_does_not_apply(lib: Repo) -> None:
    """It blamed the control table ("Fix the table"), which had nothing to do with it."""
    with pytest.raises(Exception, match="find 'nope' does not occur") as refused:
        run_cli(
            [
                "controls",
                "suggest",
                "--repo",
                str(lib.path),
                "--file",
                "shop/prices.py",
                "--find",
                "nope",
                "--replace",
                "x",
            ]
        )
    said = str(refused.value)
    assert "--file/--find does not apply" in said and "Fix --file/--find" in said, said
    assert "control table" not in said and "Fix the table" not in said, said


RAN = "from pathlib import Path\n\n\ndef test_marks_that_it_ran():\n    Path({mark!r}).write_text('ran')\n"


def test_validate_checks_anchors_and_ids_without_running_a_test(lib: Repo, tmp_path: Path) -> None:
    mark = tmp_path / "ran"
    lib.commit({"tests/test_ran.py": RAN.format(mark=str(mark))})
    out = tmp_path / "v.json"
    code, text = run_cli(["controls", "validate", "--repo", str(lib.path), "--json", str(out)])
    assert code == 0, text
    assert "VALID: 9 controls; every edit applies at HEAD and every caught_by names one of" in (
        " ".join(text.split())
    )
    bad = TABLE.replace("TAX = 25", "TAX = 30").replace('find = "TAX = 20"', 'find = "TAX = 19"')
    bad = bad.replace('"tests/test_rates.py::test_dollar"', '"tests/test_rates.py::test_yen"')
    # issue 38: a misspelt class in `raises` never matches; it used to pass validate
    names = '["ValueError", "PriceError", "shop.errors.PriceError", "VaulEError", "shop.Nope"]'
    bad = bad.replace('id = "tax-rate"\n', f'id = "tax-rate"\nraises = {names}\n')
    lib.commit(
        {
            "cases/controls.toml": bad,
            "shop/errors.py": "class PriceError(ValueError):\n    pass\n",
            "tests/test_errors.py": "from shop.errors import PriceError\n\n\n"
            "def test_kind():\n    assert issubclass(PriceError, ValueError)\n",
        }
    )
    code, text = run_cli(["controls", "validate", "--repo", str(lib.path), "--json", str(out)])
    flat = " ".join(text.split())
    assert code == 2
    assert "control 'tax-rate': edit #1 (shop/prices.py): find 'TAX = 19' does not occur" in flat
    assert (
        "control 'dollar-rate': caught_by names no collected test: tests/test_rates.py::test_yen"
        in flat
    )
    unknown = [n for n in ("VaulEError", "shop.Nope", "PriceError", "ValueError") if n in flat]
    assert unknown == ["VaulEError", "shop.Nope"], flat
    assert "control 'tax-rate': raises names 'VaulEError', which is no built-in exception" in flat
    assert json.loads(out.read_text())["exit_code"] == 2
    assert not mark.exists(), "no test ran"


def test_validate_refuses_an_edit_of_a_symbolic_link(lib: Repo, tmp_path: Path) -> None:
    """A link's blob is the path it points to: validate found the text there and said
    VALID, where the run, which edits no link, called the control unviable."""
    outside = tmp_path / "outside.txt"
    outside.write_text("sentinel\n")
    (lib.path / "shop" / "link.txt").symlink_to(outside)
    edit = 'edit = [{ file = "shop/link.txt", find = "outside", replace = "inside" }]'
    linked = f'[[control]]\nid = "via-link"\nwhy = "w"\n{edit}\ncaught_by = ["tests/test_rates.py::test_dollar"]\n'
    lib.commit({"cases/controls.toml": HEAD + linked})
    code, text = run_cli(["controls", "validate", "--repo", str(lib.path)])
    flat = " ".join(text.split())
    assert code == 2, flat
    assert "control 'via-link': edit #1 (shop/link.txt): a symbolic link at " in flat
    assert outside.read_text() == "sentinel\n"


def test_validate_names_a_collection_it_could_not_check_beside_invalid_entries() -> None:
    """A bad id in one control hid that another command's tests could not be collected: it
    showed only after the id was fixed, as exit 3."""
    from fidelity.controls.authoring import Validation

    found = Validation("t.toml", "HEAD", 2, ("t.toml:3: no test 'x'",), None, "collection failed")
    assert found.exit_code() == 2 and "collection failed, not checked either" in found.summary()
