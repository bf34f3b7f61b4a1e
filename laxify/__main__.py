"""``python -m laxify``: see :mod:`laxify.cli`."""

import sys

from laxify.cli import main

sys.exit(main())
