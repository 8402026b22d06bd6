"""yolofpga generator: model -> IR -> passes -> quantized IR -> schedule -> program -> executors."""
from pathlib import Path

#: the repository root (boards/, hls_templates/, rtl/, host/ beside generator/)
ROOT_DIR = Path(__file__).resolve().parent.parent
