"""`fidelity demo`: a tiny simulator repository built from `files/`, gated end to end.

- `show`: builds the demo repository from the shipped files, runs every gate on it and
  writes the fix gate's HTML report
"""
