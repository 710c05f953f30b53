"""`python -m jaxmap`."""

import sys

from jaxmap.cli import main

sys.exit(main())
