"""How a control's test command is run: its environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from fidelity.controls import runner
from fidelity.controls.lane import SELECT_ENV
from fidelity.controls.table import ControlTable
from fidelity.controls.warm import PRELOAD_ENV

# the plugin reads these (fidelity_pytest_controls's docstring); not imported here, since
# importing it under an outer traced run would make a second tracer
PLUGIN_ENV = {
    "FIDELITY_COLLECTED",
    "FIDELITY_EXPECT",
    "FIDELITY_RAISES",
    "FIDELITY_SELECT",
    "FIDELITY_TRACE",
}


def test_an_outer_run_s_plugin_settings_do_not_reach_the_test_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Seen: fidelity's from-fix tests under `controls run` inherited FIDELITY_EXPECT, so
    the inner pytest refused its own tests and overwrote the outer run's collected ids."""
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
