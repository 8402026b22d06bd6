"""Command line of the darknet converter: ``python -m generator.frontend.darknet CFG WEIGHTS OUT.onnx``."""
from __future__ import annotations

import argparse
import json
import sys

from generator.frontend.darknet.cfg import DarknetError
from generator.frontend.darknet.to_onnx import darknet_to_onnx


def main(argv=None) -> int:
    """CLI: ``python -m generator.frontend.darknet CFG WEIGHTS OUT.onnx``; exit 2 with the message on bad input."""
    ap = argparse.ArgumentParser(prog="python -m generator.frontend.darknet",
                                 description="Convert a darknet cfg + weights to ONNX (opset 13).")
    ap.add_argument("cfg")
    ap.add_argument("weights")
    ap.add_argument("out")
    ap.add_argument("--names", help="class-names file (default: names= of the cfg's [net])")
    a = ap.parse_args(argv)
    try:
        model = darknet_to_onnx(a.cfg, a.weights, a.out, names=a.names)
    except DarknetError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    meta = {p.key: json.loads(p.value) for p in model.metadata_props}
    outs = ", ".join(f"{o.name}{[d.dim_value for d in o.type.tensor_type.shape.dim]}" for o in model.graph.output)
    print(f"wrote {a.out}: {len(model.graph.node)} nodes, {meta['darknet_floats_consumed']} floats consumed, "
          f"outputs {outs}")
    return 0
