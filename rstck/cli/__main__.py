"""`python -m rstck.cli`: the `rstck` command."""

import sys

from rstck.cli import main

sys.exit(main())
