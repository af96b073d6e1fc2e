"""`fidelity demo`: a tiny simulator repository built from `files/`, gated end to end."""
