"""Attribution of a mapped netlist's cells to RTL units (generator/estimate/netlist.py ``cell_units``), on a small
hand-built netlist in Yosys' ``write_json`` form whose intended units are known cell by cell, and on TINY's real
Yosys netlist (slow): every cell attributed, the per-unit counts adding up to Yosys' own ``stat``."""
from pathlib import Path

import pytest

from generator.estimate import netlist as nl

TOP_SV = """module accel_top (input clk, output [1:0] y);
  load u_load (
    .clk(clk)
  );
  store #(.W(8)) u_st (
    .clk(clk)
  );
  pre_insn u_pre (
    .clk(clk)
  );
  assign y = 0;
endmodule
"""
LOAD_SV = "module load (input clk);\n  pe_array u_pe (\n    .clk(clk)\n  );\nendmodule\n"
PRE_INSN_SV = "module pre_insn (input clk);\n  pre #(.DW(8)) u_pre (\n    .clk(clk)\n  );\nendmodule\n"
PRE_SV = "module pre (input clk);\n  pre_chan u_ch (\n    .clk(clk)\n  );\nendmodule\n"


def _cell(kind, ins, outs, src="/usr/share/yosys/xilinx/lut_map.v:47.26-48.41"):
    """One cell: ``ins`` / ``outs`` {port: [bits]}."""
    return {"type": kind, "attributes": {"src": src},
            "port_directions": {**{p: "input" for p in ins}, **{p: "output" for p in outs}},
            "connections": {**ins, **outs}}


def _netlist():
    """Cells and the units they belong to (bit numbers are nets)."""
    ff_src = "accel_top.sv:2.3-4.4|load.sv:9.1-9.20|/usr/share/yosys/xilinx/ff_map.v:68.41-68.95"
    cells = {
        "ld_ff_a": (_cell("FDRE", {"D": [10]}, {"Q": [20]}, ff_src), "load"),
        "ld_ff_b": (_cell("FDRE", {"D": [11]}, {"Q": [21]}, ff_src), "load"),
        "st_ff": (_cell("FDRE", {"D": [12]}, {"Q": [22]}, "accel_top.sv:5.3-7.4|store.sv:3.1-3.9"), "store"),
        # an ABC LUT feeding two load registers and one store register: load (the majority)
        "$abc$1": (_cell("LUT3", {"I0": [1], "I1": [2], "I2": [3]}, {"O": [13]}), "load"),
        "$abc$buf_a": (_cell("LUT1", {"I0": [13]}, {"O": [10]}), "load"),
        "$abc$buf_b": (_cell("LUT1", {"I0": [13]}, {"O": [11]}), "load"),
        "$abc$buf_c": (_cell("LUT1", {"I0": [13]}, {"O": [12]}), "store"),
        # a DSP48E2 of the PE array (its RTL file is a unit of its own) and the LUT chain in front of it
        "u_load.u_pe.dsp": (_cell("DSP48E2", {"A": [30]}, {"P": [31]}, "pe_dsp.sv:40.3-60.4"), "pe_array"),
        "$abc$2": (_cell("LUT2", {"I0": [20], "I1": [21]}, {"O": [32]}), "pe_array"),
        "$abc$3": (_cell("LUT2", {"I0": [32], "I1": [1]}, {"O": [30]}), "pe_array"),
        # PRE's DSP48E2 (rtl/pre_chan.sv instantiates pe_dsp, as the PE array does) and a register of that
        # pe_dsp by its src alone, with the LUT in front of it: PRE's, not the PE array's (the outermost unit wins)
        "u_pre.u_pre.u_ch.d0.u_dsp": (_cell("DSP48E2", {"A": [81]}, {"P": [82]}, "pe_dsp.sv:40.3-60.4"), "pre"),
        "$auto$ff$pre": (_cell("FDRE", {"D": [80]}, {"Q": [81]},
                               "accel_top.sv:8.3-10.4|pre_insn.sv:2.3-4.4|pre.sv:2.3-4.4|pe_dsp.sv:70.5-70.20"), "pre"),
        "$abc$pre": (_cell("LUT1", {"I0": [1]}, {"O": [80]}), "pre"),
        # a RAM by its flattened name
        "u_st.mem.0.0": (_cell("RAMB18E2", {"DIN": [22]}, {"DOUT": [40]}, "/usr/share/yosys/brams_map.v:1.1"), "store"),
        # a counter whose register lost its RTL source: its named output net, and the increment LUT by its load
        "$auto$ff$9": (_cell("FDRE", {"D": [51]}, {"Q": [50]}, "/usr/share/yosys/xilinx/ff_map.v:68.41-68.95"),
                       "store"),
        "$abc$inc": (_cell("LUT1", {"I0": [50]}, {"O": [51]}), "store"),
        # a register and its LUT in a loop, neither named, the LUT also feeding a load register: both load (the
        # register is resolved on the second pass, after the LUT)
        "$abc$loop": (_cell("LUT1", {"I0": [71]}, {"O": [70]}), "load"),
        "$auto$ff$loop": (_cell("FDRE", {"D": [70]}, {"Q": [71]}, "/usr/share/yosys/xilinx/ff_map.v:68.41-68.95"),
                          "load"),
        "ld_ff_c": (_cell("FDRE", {"D": [70]}, {"Q": [72]}, ff_src), "load"),
        # logic driving a module output port: the top's
        "$abc$out": (_cell("LUT2", {"I0": [40], "I1": [31]}, {"O": [60]}), "accel_top"),
    }
    mod = {"ports": {"clk": {"direction": "input", "bits": [1]}, "y": {"direction": "output", "bits": [60, "0"]}},
           "cells": {n: c for n, (c, _) in cells.items()},
           "netnames": {"u_st.cnt_q": {"hide_name": 0, "bits": [50]}, "$abc$n51": {"hide_name": 1, "bits": [51]}}}
    return mod, {n: u for n, (_, u) in cells.items()}


def _sources(tmp_path: Path) -> list[Path]:
    (tmp_path / "accel_top.sv").write_text(TOP_SV)
    (tmp_path / "load.sv").write_text(LOAD_SV)
    (tmp_path / "pre_insn.sv").write_text(PRE_INSN_SV)
    (tmp_path / "pre.sv").write_text(PRE_SV)
    return [tmp_path / "accel_top.sv", tmp_path / "load.sv", tmp_path / "pre.sv", tmp_path / "pre_insn.sv"]


def test_each_cell_goes_to_the_unit_it_was_built_for(tmp_path):
    mod, want = _netlist()
    got = nl.cell_units(mod, _sources(tmp_path))
    assert got == want


def test_unit_counts_add_up(tmp_path):
    mod, want = _netlist()
    by = nl.cells_by_unit(mod, _sources(tmp_path))
    assert sum(sum(t.values()) for t in by.values()) == len(mod["cells"])
    assert by["pe_array"] == {"DSP48E2": 1, "LUT2": 2}
    assert by["load"] == {"FDRE": 4, "LUT3": 1, "LUT1": 3}
    assert by["pre"] == {"DSP48E2": 1, "FDRE": 1, "LUT1": 1}


def test_top_instances_span_their_port_lists(tmp_path):
    _sources(tmp_path)
    assert nl.top_instances(tmp_path / "accel_top.sv") == [(2, 4, "load", "u_load"), (5, 7, "store", "u_st"),
                                                            (8, 10, "pre_insn", "u_pre")]


@pytest.mark.parametrize("name", ["kv260", "ultra96v2", "zcu102", "zcu104", "zcu19eg"])
def test_lut_terms_add_up_to_the_models_lut(name):
    """The parts the Yosys units are compared with are the LUT models' own terms: they sum to the estimates."""
    from generator.estimate import hls_resources, rtl_model
    from generator.spec import memories
    from generator.spec.board import load_board

    b = load_board(name, chosen=False)
    assert sum(rtl_model.lut_terms(b).values()) == rtl_model.estimate(b).lut
    assert sum(hls_resources.lut_terms(b, memories.bound_kernel_memories(b, 0)).values()) == \
        hls_resources.estimate(b).lut


def test_yosys_units_grouped_as_the_model_and_drawn(tmp_path):
    """Units go to the model's parts (compute / requant / post: the output lanes; PRE and its write arbiter: the
    PRE part; anything unlisted: the fixed part), LUTRAM and SRL sites counted as LUTs; the comparison table's
    totals and the PNG."""
    from PIL import Image

    from generator.estimate import rtl_model
    from generator.flows.resources import plot_lut_parts
    from generator.spec.board import load_board

    units = {"compute": {"LUT3": 100, "LUT6": 50}, "requant": {"LUT2": 10}, "post": {"SRL16E": 4},
             "load": {"LUT6": 7}, "ctrl_regs": {"LUT1": 3, "FDRE": 9}, "buffers": {"RAM64M8": 2},
             "pe_array": {"LUT4": 5, "DSP48E2": 4}, "pre": {"LUT6": 20, "DSP48E2": 21}, "axi_wr_arb": {"LUT2": 2}}
    y = rtl_model.yosys_lut_terms(units)
    assert y == {"pe_array": 5, "lanes": 164, "fixed": 10, "memories": 16, "axi_hp_split": 0, "pre": 22}
    b = load_board("zcu19eg", chosen=False)
    t = rtl_model.lut_comparison_table(b, units)
    assert f"| total | 217 | {rtl_model.estimate(b).lut:,} |" in t
    assert f"| PRE (pre_insn, axi_wr_arb) | 22 | {rtl_model.pre_lut_ff(b)[0]:,} |" in t
    png = tmp_path / "lut.png"
    plot_lut_parts(b, units, png)
    with Image.open(png) as im:
        assert im.format == "PNG" and im.width > 500
