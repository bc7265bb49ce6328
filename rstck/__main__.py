"""`python -m rstck`: the `rstck` command, for an environment whose scripts are not on PATH."""

import sys

from rstck.cli import main

sys.exit(main())
