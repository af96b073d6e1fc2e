"""tinysim: a tiny deterministic serving simulator (fidelity's demo subject)."""
