"""The command line: one module per command family, shared options defined once in `options`.

Modules here parse arguments, call a capability with plain values and render its result;
they hold no logic of their own and import heavy modules only inside their handlers.
"""
