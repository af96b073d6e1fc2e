"""`fidelity demo`: a tiny simulator repository built from `files/`, gated end to end.

- `show`: builds the demo repository from the shipped files and runs every gate on it
"""
