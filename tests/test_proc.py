"""The process runner: statuses, never exceptions; timeouts kill the whole process group."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from fidelity.proc import ProcStatus, run

PY = sys.executable


def test_statuses() -> None:
    assert run([PY, "-c", "pass"]).status is ProcStatus.OK
    failed = run([PY, "-c", "raise SystemExit(7)"])
    assert (failed.status, failed.returncode) == (ProcStatus.FAILED, 7)
    crashed = run([PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"])
    assert crashed.status is ProcStatus.CRASHED
    missing = run(["definitely-not-a-command-zz"])
    assert missing.status is ProcStatus.NOT_FOUND and missing.returncode is None
    assert run("exit 127", shell=True).status is ProcStatus.NOT_FOUND


def test_output_goes_to_log_files(tmp_path: Path) -> None:
    out, err = tmp_path / "o.log", tmp_path / "e.log"
    run(
        [PY, "-c", "import sys; print('hi'); print('oops', file=sys.stderr)"],
        stdout_path=out,
        stderr_path=err,
    )
    assert out.read_text() == "hi\n" and err.read_text() == "oops\n"


def test_timeout_kills_grandchildren(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    script = (
        "import subprocess, sys, time\n"
        f"p = subprocess.Popen([{PY!r}, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
        "time.sleep(60)\n"
    )
    start = time.monotonic()
    result = run([PY, "-c", script], timeout_s=1.0)
    assert result.status is ProcStatus.TIMEOUT
    assert time.monotonic() - start < 30
    grandchild = int(pidfile.read_text())
    for _ in range(50):
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the grandchild survived the timeout")
