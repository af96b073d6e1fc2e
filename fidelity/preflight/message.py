"""The trailers gate: the commit message being written, or every message of a judged
range (pre-push, CI's `--from-ref/--to-ref`), against `[tool.fidelity.trailers]`."""

from __future__ import annotations

from checkers.errors import ConfigError
from fidelity.errors import UsageError
from fidelity.preflight.context import Context, Plan, skip_unchanged, skip_unconfigured
from fidelity.preflight.outcome import GateResult, Status
from fidelity.text import counted


def plan_trailers(ctx: Context) -> Plan:
    if not isinstance(ctx.tool.get("trailers"), dict):
        return skip_unconfigured("no [tool.fidelity.trailers]")
    if ctx.message is None and ctx.span is not None:
        return Plan(f"the messages of {ctx.span[0][:12]}..{ctx.span[1][:12]}")
    if ctx.message is None:
        return skip_unchanged("no commit message to judge (--commit-msg FILE, or a range)")
    return Plan(str(ctx.message))


def check_trailers(ctx: Context) -> GateResult:
    from checkers.trailers import Code, rules_from_config
    from fidelity.history.trailers import check_file, check_range

    try:
        rules = rules_from_config(ctx.tool["trailers"], "pyproject.toml")
    except ConfigError as exc:
        return GateResult(
            "trailers", Status.INVALID, "invalid [tool.fidelity.trailers]", (str(exc),)
        )
    if rules.empty:
        return GateResult("trailers", Status.INVALID, "[tool.fidelity.trailers] sets no rule")
    try:
        if ctx.message is None:
            assert ctx.span is not None
            report = check_range(ctx.repo, ctx.span, rules)
        else:
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
    if ctx.message is None and not report.checked:
        return GateResult("trailers", Status.OK, "no message in the range but merges")
    if ctx.message is None:
        held = counted(len(report.checked), "message")
        return GateResult(
            "trailers", Status.OK, f"every message of the range keeps the rules ({held})"
        )
    return GateResult("trailers", Status.OK, f"{ctx.message.name}: the message keeps the rules")
