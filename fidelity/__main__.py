import sys

from fidelity.cli.main import main

sys.exit(main())
