"""``python -m generator.backends.hls.lint DIR ...``: see :mod:`generator.backends.hls.lint`."""
import sys

from generator.backends.hls.lint.run import main

sys.exit(main())
