"""The trailers gate: the commit message being written, against `[tool.fidelity.trailers]`."""

from __future__ import annotations

from checkers.errors import ConfigError
from fidelity.errors import UsageError
from fidelity.preflight.context import Context, Plan, skip_unchanged, skip_unconfigured
from fidelity.preflight.outcome import GateResult, Status
from fidelity.text import counted


def plan_trailers(ctx: Context) -> Plan:
    if not isinstance(ctx.tool.get("trailers"), dict):
        return skip_unconfigured("no [tool.fidelity.trailers]")
    if ctx.message is None:
        return skip_unchanged("no commit message to judge (--commit-msg FILE)")
    return Plan(str(ctx.message))


def check_trailers(ctx: Context) -> GateResult:
    from checkers.trailers import Code, rules_from_config
    from fidelity.history.trailers import check_file

    assert ctx.message is not None
    try:
        rules = rules_from_config(ctx.tool["trailers"], "pyproject.toml")
    except ConfigError as exc:
        return GateResult(
            "trailers", Status.INVALID, "invalid [tool.fidelity.trailers]", (str(exc),)
        )
    if rules.empty:
        return GateResult("trailers", Status.INVALID, "[tool.fidelity.trailers] sets no rule")
    try:
        report = check_file(ctx.repo, ctx.message, rules)
    except UsageError as exc:
        return GateResult("trailers", Status.FAILED, str(exc))
    findings = report.findings
    if ctx.partial:  # the rest of the message is unseen: a required trailer may be there
        findings = tuple(f for f in findings if f.code is not Code.MISSING)
    if findings:
        details = tuple(f.render() for f in findings)
        return GateResult("trailers", Status.FAILED, counted(len(details), "finding"), details)
    if ctx.partial:
        return GateResult("trailers", Status.OK, "the --trailer values keep the rules")
    return GateResult("trailers", Status.OK, f"{ctx.message.name}: the message keeps the rules")
