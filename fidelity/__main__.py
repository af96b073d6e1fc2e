import sys

from fidelity.cli import main

sys.exit(main())
