"""How a control's test command is run: its environment."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fidelity.controls import runner
from fidelity.controls.lane import SELECT_ENV
from fidelity.controls.table import ControlTable
from fidelity.controls.warm import PRELOAD_ENV

# the files the controls plugin reads or writes: every `*_ENV = "FIDELITY_..."` of its source
# but the guard's root (set anew for every run); read from the source, not imported, since
# importing it under an outer traced run would make a second tracer
_PLUGIN = Path(runner.PLUGIN_SOURCE, "fidelity_pytest_controls.py").read_text()
PLUGIN_ENV = set(re.findall(r'^[A-Z_]+_ENV = "(FIDELITY_[A-Z_]+)"$', _PLUGIN, re.M)) - {
    runner.GUARD_ROOT_ENV
}


def test_an_outer_run_s_plugin_settings_do_not_reach_the_test_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Seen: fidelity's from-fix tests under `controls run` inherited FIDELITY_EXPECT, so
    the inner pytest refused its own tests and overwrote the outer run's collected ids. Red
    before (the list read from the plugin): FIDELITY_PROBE was not dropped."""
    names = {*PLUGIN_ENV, SELECT_ENV, PRELOAD_ENV}
    assert names == set(runner.RUN_ENV), "the runner drops every variable the plugins read"
    for name in names:
        monkeypatch.setenv(name, str(tmp_path / "outer.json"))
    table = ControlTable(source="t", sha256="", controls=())
    for pytest_run in (True, False):
        env = runner.env_for(table, tmp_path, (), pytest=pytest_run)
        assert names.isdisjoint(env), sorted(names & set(env))
    monkeypatch.setenv("KEPT", "1")
    assert runner.env_for(table, tmp_path, ())["KEPT"] == "1"
