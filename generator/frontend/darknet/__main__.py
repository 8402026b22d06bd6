"""``python -m generator.frontend.darknet CFG WEIGHTS OUT.onnx``."""
import sys

from generator.frontend.darknet.cli import main

sys.exit(main())
