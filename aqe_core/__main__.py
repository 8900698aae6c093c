"""``python -m aqe_core``: see :mod:`aqe_core.cli`."""
import sys

from aqe_core.cli import main

sys.exit(main())
