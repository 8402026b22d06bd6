"""The HP ports' part of the latency model: what splitting the units' m_axi over two or four PS HP ports
(S_AXI_HPn_FPD, UG1085 ch. 35; rtl/axi_hp_split.sv, rtl/axi_hp_ports.sv) adds to a transfer -- each read burst's
slot, the splitters' register stages and the last bursts' hand-over -- and to PRE's fetch runs. Constants are
calibrated on the RTL (Verilator): tests/exec/test_rtl.py::test_rtl_load_window_cycles, the distinct LOADs and
STOREs of YOLOv4-tiny 64x64 on ``small-2hp`` / ``small-4hp`` run alone, ``invoke rtl-frame --config small-2hp`` /
``small-4hp --resolution 64``, and tests/rtl/test_pre_insn.py::test_pre_on_two_hp_ports. Cycles are PL clock
cycles."""
from __future__ import annotations

import numpy as np

from generator.spec.arch import AXI_BOUNDARY_BYTES

#: cycles a read burst's slot among the MAX_READ_BURSTS stays taken beyond the DDR read latency (the address and
#: last-beat registers of rtl/load.sv), and more through two HP ports (rtl/axi_hp_split.sv: its address register,
#: port-beat pairing and output stages); calibrated on the RTL with LOADs of 1 to 784 one-beat bursts at read
#: latencies 20 to 120 (tests/exec/test_rtl.py::test_rtl_load_window_cycles)
READ_SLOT_EXTRA, HP_SPLIT_SLOT_EXTRA = 3, 5
#: the same through four HP ports (rtl/axi_hp_ports.sv: two levels of splitters), calibrated alike on the 512-bit
#: TINY-16x32-4HP (tests/exec/test_rtl.py::test_rtl_load_window_cycles)
HP4_SLOT_EXTRA = 10
#: two HP ports (rtl/axi_hp_split.sv): the register stages a LOAD's data and a STORE's write response pass besides
#: the one-port path (R: beat pairing, data FIFO, output slice; W: data FIFO, then two port beats per word)
HP_SPLIT_READ_STAGES, HP_SPLIT_WRITE_STAGES = 3, 2
#: four HP ports: both levels' stages (R: 7, W: HP4_WRITE_STAGES), calibrated as split_tail says
HP4_READ_STAGES, HP4_WRITE_STAGES = 7, 8


def burst_beats(addr, nbytes, beat: int):
    """Beats of the AXI bursts covering ``nbytes`` bytes from byte address ``addr`` (int or array)."""
    return (np.asarray(addr) % beat + nbytes + beat - 1) // beat


def max_burst_beats(seg_addr, seg_bytes, beat: int) -> int:
    """Beats of the largest burst the segments ``[seg_addr, + seg_bytes)`` are cut into at 4 KB boundaries (a
    segment crossing two boundaries holds a whole page)."""
    a = np.asarray(seg_addr, dtype=np.int64)
    end = a + np.broadcast_to(np.asarray(seg_bytes, dtype=np.int64), a.shape)
    first_end = np.minimum(end, (a // AXI_BOUNDARY_BYTES + 1) * AXI_BOUNDARY_BYTES)
    last_start = np.maximum(a, (end - 1) // AXI_BOUNDARY_BYTES * AXI_BOUNDARY_BYTES)
    n = np.maximum(burst_beats(a, first_end - a, beat), burst_beats(last_start, end - last_start, beat))
    n = np.where(last_start > first_end, AXI_BOUNDARY_BYTES // beat, n)
    return int(n.max())


def split_tail(addr: int, nbytes: int, beat: int, write: bool, ports: int = 2, n_max: int = 0) -> int:
    """Cycles ``ports`` (2 or 4) HP ports add to a transfer whose last segment is ``nbytes`` bytes from ``addr``,
    besides the splitters' register stages. Two ports (rtl/axi_hp_split.sv): the last burst (from the last 4 KB
    boundary) of N beats is cut into about N / 2 beats on port 0 and the rest on port 1, each port moving half a
    beat per cycle. A read's last burst is handed over in order, port 0's part at the port's rate first, port 1's
    (buffered meanwhile) after it: about N / 2 cycles more than on one port of twice the width (at least one: a one-
    beat burst takes two port beats), N the transfer's largest burst (``n_max``: the lag a burst's hand-over leaves
    stays with the bursts behind it, so a short last burst after a 4 KB one ends as late); a write's port 1 part
    starts N / 2 beats late: about N / 2 more. Four ports (rtl/axi_hp_ports.sv, a splitter of two-port splitters):
    the root's first half comes from a two-port splitter at half its rate, so a read's tail is about N for the
    largest burst (N rounded up to even, at least 2), a write's about N / 2 + N / 4 of the last. Calibrated on the
    RTL: reads by tests/exec/test_rtl.py::test_rtl_load_window_cycles, contiguous LOADs of 1 to 384 beats, and each
    distinct LOAD and STORE of YOLOv4-tiny 64x64's program on ``small-2hp`` / ``small-4hp`` alone on the RTL (the
    largest-burst rule: WBUF LOADs whose short last burst follows a 4 KB one); writes by ``invoke rtl-frame --config
    small-2hp`` / ``small-4hp`` ``--resolution 64``."""
    end = addr + nbytes
    start = max(addr, (end - 1) // AXI_BOUNDARY_BYTES * AXI_BOUNDARY_BYTES)
    n = int(burst_beats(start, end - start, beat))
    if ports == 4:
        if write:
            return n // 2 + n // 4 + HP4_WRITE_STAGES
        n = max(n, n_max)
        return max(2, n + n % 2) + HP4_READ_STAGES
    return n // 2 + HP_SPLIT_WRITE_STAGES if write else max(1, max(n, n_max) // 2) + HP_SPLIT_READ_STAGES


#: (cycles per fetch run, cycles per beat of the run's last burst) that 2 / 4 HP ports add to PRE's fetch runs
#: (rtl/axi_hp_split.sv hands a burst's port-0 part over at that port's rate before the rest, and PRE waits for the
#: run's last beat; four ports, rtl/axi_hp_ports.sv, add the second level's stages and half-rate hand-over): least
#: squares on the RTL's cycles of seven frames from 33x47 to 810x1080 (letterbox and stretch, int8 and int16), TINY
#: at 16x32 with a 256-bit m_axi over two ports and a 512-bit one over four: every frame within 2.2%
#: (tests/rtl/test_pre_insn.py::test_pre_on_two_hp_ports). The shape of split_tail's read tail: N / 2 + 3 and N + 7.
PRE_SPLIT = {1: (0, 0.0), 2: (4, 0.65), 4: (9, 1.28)}


def pre_split_cycles(hp_ports: int, runs: int, beats: int) -> int:
    """Cycles ``hp_ports`` HP ports add to ``runs`` PRE fetch runs whose last bursts hold ``beats`` beats in all
    (:data:`PRE_SPLIT`; 0 on one port)."""
    per_run, per_beat = PRE_SPLIT[hp_ports]
    return round(per_run * runs + per_beat * beats)
