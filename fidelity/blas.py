"""numpy loaded with one BLAS thread in fidelity's own process, whatever the machine's cores.

fidelity's numeric comparisons work element by element, which BLAS never spreads over
threads; but OpenBLAS starts a thread per core as it loads, and each spins before it sleeps:
`import numpy` cost 135 CPU-ms on a 2-core machine against 75 with one thread, and about
65 more for each further core, so the same comparison cost more on a larger machine (issue
39). The thread variables are set only around the import, at the C level (`os.putenv`, not
`os.environ`), and taken away after: no case, setup or other child of fidelity sees them,
and a variable the user set is left as it is.
"""

from __future__ import annotations

import os
import sys

VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def load_numpy() -> None:
    """Import numpy, with one BLAS thread unless the user said otherwise; nothing when it is
    imported already. Call it before importing a module that imports numpy."""
    if "numpy" in sys.modules:
        return
    ours = [name for name in VARIABLES if name not in os.environ]
    for name in ours:
        os.putenv(name, "1")
    try:
        import numpy  # noqa: F401
    finally:
        for name in ours:
            os.unsetenv(name)
