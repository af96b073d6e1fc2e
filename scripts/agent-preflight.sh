#!/bin/sh
# Coding-agent pre-tool-use hook: runs `fidelity preflight --agent-hook` on the event the
# agent writes to stdin, and blocks (exit 2, reasons on stderr) any call that could create a
# commit and fails a gate. Anything else is allowed. It fails closed: if fidelity cannot be
# run at all and the event mentions git or a commit, the call is blocked too.
# (`fidelity install-hooks --agent` installs the same thing without this file.)
#
# Claude Code (.claude/settings.json):
#   {"hooks": {"PreToolUse": [{"matcher": "Bash",
#     "hooks": [{"type": "command", "command": "scripts/agent-preflight.sh"}]}]}}
#
# FIDELITY names the command to run (default: `fidelity` on PATH), e.g.
#   FIDELITY="/path/to/venv/bin/fidelity" or FIDELITY="python3 -m fidelity".
event=$(cat; echo x)  # the x keeps trailing newlines, which $(...) would strip
event=${event%x}
fidelity=${FIDELITY:-fidelity}
# shellcheck disable=SC2086 # FIDELITY may be a command with arguments
printf '%s' "$event" | $fidelity preflight --agent-hook
status=$?
case $status in
  0 | 2) exit "$status" ;;
esac
case $event in
  *git* | *commit*)
    echo "agent-preflight: \`$fidelity preflight --agent-hook\` exited $status (not installed or" \
      "broken?); this may be a commit, so it is blocked. Set FIDELITY to a working fidelity." >&2
    exit 2
    ;;
esac
exit 0
