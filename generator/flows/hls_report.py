"""The HLS build's Markdown report (``report.md`` of ``invoke build``): configuration, estimated resources
against the part, predicted performance, the kernel's cycle estimate, the C-simulation's result."""
from __future__ import annotations

from generator.estimate import hls_resources
from generator.spec import isa
from generator.spec.board import Board
from generator.spec.hw import HwConfig


def report_md(board: Board, quant: str, program_insns: int, cycles: dict, compiled_bits: int, check: dict | None,
              image: str = "", detections: list | None = None, est: "hls_resources.Estimate | None" = None,
              kernel_est: dict | None = None, mixed: tuple | None = None, rom: bool = True) -> str:
    """The build report (Markdown): configuration, estimated resources against the part's capacity, predicted
    cycles and frames/s at the board clock, the int8 / int16 throughput ratio, the C-simulation result.

    Args: cycles: {8: predicted cycles of the int8 program, 16: of the int16 one} (latency model of the HLS kernel,
        single-pumped, per frame: :func:`generator.flows.build.hls_program_cycles`);
        compiled_bits: precision of the program baked into the ROM; check:
        :func:`generator.exec.csim.build_and_check`'s result (None: not run); detections: from the C-simulation's
        heads; est: resource estimate (computed if None); kernel_est: :func:`generator.estimate.hls_cycles.compare`
        of the program (the ``hls-cycles:`` / ``model-cycles:`` lines, :func:`kernel_estimate_lines`; omitted if
        None); mixed: (label, cycles) of a per-layer precision program (``cycles`` then holds the uniform
        programs; None: the build is the uniform ``compiled_bits`` one); rom: the program is baked into the
        instruction ROM (False: an empty ROM, the program fetched from DDR).
    """
    a = board.accelerator
    est = est or hls_resources.estimate(board, program_insns if rom else 0)
    h = HwConfig.from_board(board, compiled_bits)
    f = board.pl_clock_mhz * 1e6
    title = f"{quant}, precision {mixed[0]}" if mixed else quant
    lines = [f"# Build report: {board.name}, {title}", "",
             "## Configuration", "",
             f"- board `{board.name}` ({board.description}), part `{board.part}`",
             f"- PE array Tn x Tm = {a.tn} x {a.tm}: {a.tn * a.tm} MACs/cycle in int16, {2 * a.tn * a.tm} in int8 "
             f"(two int8 products per DSP48E2)",
             f"- buffers per bank: IBUF {a.ibuf_bank_bytes} B, WBUF {a.wbuf_bank_bytes} B, ACC {a.acc_bank_words} "
             f"words of {a.tm} x {max(a.acc_bits_int8, a.acc_bits_int16)} bit (2 banks each); OBUF "
             f"{a.obuf_bytes} B; PBUF {a.pbuf_entries} records",
             f"- m_axi {a.axi_data_width_bits} bit on S_AXI_HP0_FPD; PL clock {board.pl_clock_mhz:g} MHz",
             f"- {'instruction ROM' if rom else 'program fetched from DDR (empty instruction ROM: it does not fit)'}: "
             f"{program_insns} instructions "
             f"({f'int8 and int16 layers, {mixed[0]}' if mixed else f'int{compiled_bits}'}); CONFIG id "
             f"0x{h.config_id:08x}", "",
             "## Estimated resources", "",
             "Estimates of `generator/estimate/hls_resources.py` (nothing synthesized): DSP and memories follow the kernel's "
             "structure, LUT/FF are a coarse bit-width estimate.", "",
             est.table(), "", est.memory_table(), "",
             "## Predicted performance (latency model, one frame)", "",
             "| precision | cycles | ms | frames/s |", "|---|---:|---:|---:|"]
    rows = [(f"int{bits}{' (this build)' if bits == compiled_bits and not mixed else ''}", cycles[bits])
            for bits in (8, 16) if bits in cycles]
    rows += [(f"per layer, {mixed[0]} (this build)", mixed[1])] if mixed else []
    lines += [f"| {name} | {c} | {c / f * 1e3:.2f} | {f / c:.1f} |" for name, c in rows]
    if a.pump != 1:
        lines += ["", f"The board's RTL double-pumps the PE array (`pump: {a.pump}`, rtl/pe_array_2x.sv); the HLS "
                      f"kernel is single-pumped (Vitis HLS has no second clock for a loop), so these are the same "
                      f"program timed on the single-rate machine. The RTL's figures: `invoke build --kernel rtl`, "
                      f"`invoke rtl-frame`."]
    if 8 in cycles and 16 in cycles:
        lines += ["", f"int8 / int16 throughput: {cycles[16] / cycles[8]:.2f}x (same DSPs; int8 packs two "
                      f"products per DSP48E2, DDR-bound layers gain less)"]
    if kernel_est is not None:
        lines += [""] + kernel_estimate_lines(kernel_est)
    lines += ["", "## C-simulation (g++, the rendered kernel)", ""]
    if check is None:
        lines.append("not run")
    else:
        ok = "**bit-exact**" if check["bit_exact"] else f"**differs** ({check['diff_bytes']} DDR bytes)"
        lines += [f"- image `{image}`: {ok} against the golden simulator; status "
                  f"{isa.status_names(check['status']) or 'OK'}",
                  f"- the C-simulation's `cycles` register (loop iterations of the busiest module, not a cycle "
                  f"count): {check['cycles']}; golden simulator {check['golden_cycles']} cycles; the C-simulation "
                  f"took {check['csim_seconds']:.1f} s"]
    if detections is not None:
        lines += ["", f"## Detections (from the C-simulation's heads), `detections.png`", ""]
        lines += [f"- {d['label']} {d['score']:.2f} box {[round(v) for v in d['box']]}" for d in detections]
        if not detections:
            lines.append("- none")
    return "\n".join(lines) + "\n"


def kernel_estimate_lines(cmp: dict) -> list[str]:
    """The report.md section of a kernel cycle estimate (:func:`generator.estimate.hls_cycles.compare`'s dict:
    "hls" / "model" cycles, their "ratio", per instruction "kinds", per pipelined loop "loops")."""
    lines = ["## Kernel cycle estimate (from the kernel's loop structure, not a synthesis result)", "",
             "Each instruction's trip counts x the II and pipeline depth the port analysis gives each pipelined "
             "loop of the kernel (`hls_templates/kernel/accel_kernel*.h`; `generator/backends/hls/lint/analysis.py`: "
             "the memory ports, m_axi bundles and streams of one iteration after ARRAY_PARTITION / ARRAY_RESHAPE), "
             "plus the board's DDR latency once per LOAD / STORE (one flattened loop over all its beats), scheduled with the "
             "token queues' overlap (`generator/estimate/hls_cycles.py`); model-cycles: the latency model "
             "(`generator/spec/timing.py`) on the same program in the golden simulator.", "",
             f"hls-cycles: {cmp['hls']}", f"model-cycles: {cmp['model']}",
             f"hls/model: {cmp['ratio']:.3f}", "",
             "| instruction kind | count | hls cycles (sum) | model cycles (sum) | hls / model |",
             "|---|---:|---:|---:|---:|"]
    for k, v in sorted(cmp["kinds"].items()):
        r = v["hls"] / v["model"] if v["model"] else float("nan")
        lines.append(f"| {k} | {v['count']} | {v['hls']} | {v['model']} | {r:.3f} |")
    if cmp.get("loops"):
        lines += ["", *loop_table_lines(cmp["loops"])]
    return lines


def loop_table_lines(loops: list[dict]) -> list[str]:
    """The per-loop table (:func:`generator.estimate.hls_cycles.loop_table`): loop, requested II, analysed II,
    the memory that limits it, depth, trip count per frame (iterations summed over the program's instructions),
    cycles."""
    out = ["| loop | function | requested II | analysed II | limited by | depth | trip count per frame | cycles |",
           "|---|---|---:|---:|---|---:|---:|---:|"]
    for r in loops:
        out.append(f"| {r['loop']} | {r['function']} | {r['requested_ii']} | {r['ii']} | {r['limit']} | "
                   f"{r['depth']} | {r['trips']} | {r['cycles']} |")
    return out
