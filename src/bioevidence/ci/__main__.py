"""``python -m bioevidence.ci run``: the GitHub Action's step without the console script."""

import sys

from .action import main

sys.exit(main())
