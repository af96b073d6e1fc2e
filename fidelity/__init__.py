"""fidelity: turn the claims a change makes into evidence that can fail."""

__version__ = "0.1.0"
