"""HLS back end, the build's words to the user: the tool commands that turn a rendered folder into a bitstream and
the message of a build that stops before them (the Markdown build report: :mod:`generator.flows.hls_report`)."""
from __future__ import annotations

from pathlib import Path



def tool_commands(hls_dir: str | Path) -> list[tuple[str, str]]:
    """[(tool, command)] that turn a rendered folder into a bitstream, in order: Vitis HLS (C-simulation,
    C-synthesis, IP export), then Vivado (block design, implementation, overlay .bit + .hwh)."""
    d = Path(hls_dir)
    return [("vitis_hls", f"cd {d} && vitis_hls -f run_hls.tcl"),
            ("vivado", f"cd {d} && vivado -mode batch -source vivado_bd.tcl")]


def missing_tools_message(hls_dir: str | Path, missing: list[str]) -> str:
    """The message of a build that stops before the bitstream: which tools were not found on PATH and the exact
    commands to run on a machine that has them."""
    cmds = "\n".join(f"    {c}" for _, c in tool_commands(hls_dir))
    return (f"{' and '.join(missing)} not found on PATH: C-synthesis, IP export and the bitstream were skipped. "
            f"On a machine with Vitis HLS and Vivado run:\n{cmds}\n"
            f"(the overlay .bit + .hwh land in overlay/<board>/, where `invoke package` picks them up)")
