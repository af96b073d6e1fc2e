"""Preflight: every gate that applies to a change, judged on what a commit would record.

It sits above the capabilities (it runs their validators and checkers on the staged
content) and below the command line: `fidelity preflight`, the agent hook and the git
hooks that `fidelity install-hooks` writes.
"""
