"""Golden ISA simulator (numpy): executes an encoded instruction stream on a DDR byte image.

It touches data only as the instructions say (LOAD/STORE through the base-address registers, on-chip buffers
of the configured sizes) and orders execution like the hardware: the timing engine
(:mod:`generator.spec.timing_engine`: three modules running their instructions in program order, concurrently,
synchronised only by the four dependency-token FIFOs, every instruction's duration from
:mod:`generator.spec.timing`) decides when each instruction starts, and the simulator applies its data effect
then, so a missing dependency token shows up as wrong data, as it would on the FPGA.

It is the reference the HLS C-simulation and the RTL must match bit for bit, and it is itself checked against
the layer-level integer reference (:mod:`generator.ref.layer_ref`) and, through it, onnxruntime.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.lib.stride_tricks import as_strided

from generator.exec import acc_layout
from generator.spec import isa
from generator.spec.arch import RTL_QUEUES
from host.pre import PreFrame, PreQuant, frame_bytes, pre_run, pre_violation
from generator.spec.hw import HwConfig
from generator.spec.timing_engine import ModuleTimer, TokenError

PARAM_DTYPE = np.dtype([(n, np.dtype(t).newbyteorder("<")) for n, t, _ in isa.PARAM_RECORD])


class SimError(RuntimeError):
    """The program did something the hardware flags as an error.

    Attributes:
        status: the status-register word the hardware reports for it (one bit of :data:`generator.spec.isa.STATUS_BITS`;
            the table there says which condition sets which bit).
        insn: index of the offending instruction in the program (None for a whole-program condition: partial
            instruction, missing END, deadlock, tokens left). The message names it as ``instruction K``.
    """

    def __init__(self, msg: str, status: str | int, insn: int | None = None):
        super().__init__(msg)
        self.status = isa.status_of(status) if isinstance(status, str) else int(status)
        self.insn = insn

    @property
    def bits(self) -> list[str]:
        """Names of the status bits set."""
        return isa.status_names(self.status)


@dataclass
class SimResult:
    """cycles: total cycles until every module is idle; start/end: per-instruction cycle arrays;
    busy: cycles each module spent executing; stall: cycles each module waited for tokens."""
    cycles: int
    start: np.ndarray
    end: np.ndarray
    busy: dict = field(default_factory=dict)
    stall: dict = field(default_factory=dict)


class GoldenSim:
    """The accelerator in numpy.

    Args:
        hw: hardware configuration the simulated accelerator is built with.
        ddr: uint8 array, the whole DDR image (modified in place by STOREs).
        bases: byte address of each base register, ``{"WEIGHTS": a, "ACT": b, "INPUT": c, "OUTPUT": d}``.
        sizes: bytes of the buffer behind each base register (the ``*_size`` registers of
            :data:`generator.spec.isa.REGISTERS`), same keys; every LOAD / STORE byte must lie in [0, size) of its base
            register (else OUT_OF_RANGE). None: each region extends to the end of the DDR image.
        frame: PRE's per-frame registers (:class:`host.pre.PreFrame`; its ``addr`` a byte offset in ``ddr``), None:
            the registers after reset (all 0: a PRE instruction stops with OUT_OF_RANGE).
    """

    def __init__(self, hw: HwConfig, ddr: np.ndarray, bases: dict, sizes: dict | None = None, frame=None):
        self.hw, self.ddr = hw, ddr
        self.frame = frame if frame is not None else PreFrame.from_registers({})
        self.base = [int(bases[isa.BASE_REG_NAMES[i]]) for i in range(len(isa.BASE_REGS))]
        if sizes is None:
            self.size = [max(ddr.size - b, 0) for b in self.base]
        else:
            self.size = [int(sizes[isa.BASE_REG_NAMES[i]]) for i in range(len(isa.BASE_REGS))]
        tn, tm, h8 = hw.tn, hw.tm, hw.at(8)      # storage: the int8 word counts (int16 uses half of each bank)
        self.ibuf = [np.zeros(h8.ibuf_words * tn, np.int64) for _ in range(2)]
        self.wbuf = [np.zeros(h8.wbuf_words * hw.wbuf_pitch, np.int64) for _ in range(2)]   # words x pitch
        self.acc = [np.zeros((hw.acc_words, tm), np.int64) for _ in range(2)]
        # pump 2: the column parity of the COMPUTE that last wrote each ACC word (-1: none since reset)
        self.acc_par = [np.full(hw.acc_words, -1, np.int8) for _ in range(2)] if hw.pump == 2 else None
        self.obuf = np.zeros(h8.obuf_words * tm, np.int64)
        self.pbuf = np.zeros(hw.pbuf_index, PARAM_DTYPE)                         # rows x lane pitch (isa)
        self.tbuf = np.zeros((isa.TBUF_ROWS * hw.tm_pitch, 2 * isa.TABLE_PER_RECORD), np.int64)   # (base, delta) x 4
        self.configured = False

    # ---- DDR access -------------------------------------------------------------------------------------
    def _ddr_view(self, k, base_reg, off, rows, cols, nbytes, rs, ps):
        name = isa.BASE_REG_NAMES[base_reg]
        end = off + (rows - 1) * rs + (cols - 1) * ps + nbytes      # one past the last byte, from the base
        if end > self.size[base_reg]:
            raise SimError(f"instruction {k}: DDR access [{off:#x}, {end:#x}) from base register {name} outside its "
                           f"{self.size[base_reg]}-byte buffer", "OUT_OF_RANGE", k)
        start = self.base[base_reg] + off
        if start < 0 or start + end - off > self.ddr.size:
            raise SimError(f"instruction {k}: DDR access [{start:#x}, {start + end - off:#x}) outside the "
                           f"{self.ddr.size}-byte image", "OUT_OF_RANGE", k)
        return as_strided(self.ddr[start:], shape=(rows, cols, nbytes), strides=(rs, ps, 1), writeable=True)

    def _at(self, f) -> HwConfig:
        """The configuration at the instruction's ``prec`` (its element size, bank words, accumulator width)."""
        return self.hw.at_prec(f["prec"])

    @staticmethod
    def _elem_dtype(hw: HwConfig):
        return np.dtype("<i1") if hw.elem_bytes == 1 else np.dtype("<i2")

    # ---- instructions -----------------------------------------------------------------------------------
    def _config(self, k, f):
        hw = self.hw
        if f["isa_version"] != isa.ISA_VERSION:
            raise SimError(f"instruction {k}: CONFIG ISA version {f['isa_version']}, hardware implements "
                           f"{isa.ISA_VERSION}", "ISA_VERSION_MISMATCH", k)
        if (f["tn"], f["tm"], f["config_id"]) != (hw.tn, hw.tm, hw.config_id):
            raise SimError(f"instruction {k}: CONFIG for a Tn={f['tn']} Tm={f['tm']} id={f['config_id']:#x} "
                           f"accelerator, this one is Tn={hw.tn} Tm={hw.tm} id={hw.config_id:#x}", "CONFIG_MISMATCH", k)
        self.configured = True

    def _load(self, k, f):
        hw = self.hw
        rows, cols, elems = f["rows"], f["cols"], f["elems"]
        if rows * cols * elems == 0:      # an empty transfer: no access, nothing checked (as in the hardware)
            return
        if f["buf"] == isa.BUFFERS["TBUF"]:
            v = self._ddr_view(k, f["base_reg"], f["ddr_offset"], rows, cols, elems * isa.PARAM_RECORD_BYTES,
                               f["row_stride"], f["pix_stride"])
            recs = np.ascontiguousarray(v).view("<i2").reshape(-1, 2 * isa.TABLE_PER_RECORD)
            lo, n = f["dst_word"], self.tbuf.shape[0]
            if recs.size and lo + recs.shape[0] > n:
                raise SimError(f"instruction {k}: TBUF load of {recs.shape[0]} records at {lo} exceeds {n}",
                               "OUT_OF_RANGE", k)
            self.tbuf[lo:lo + recs.shape[0]] = recs
            return
        if f["buf"] == isa.BUFFERS["PBUF"]:
            v = self._ddr_view(k, f["base_reg"], f["ddr_offset"], rows, cols, elems * isa.PARAM_RECORD_BYTES,
                               f["row_stride"], f["pix_stride"])
            recs = np.ascontiguousarray(v).view(PARAM_DTYPE).reshape(-1)
            lo = f["dst_word"]
            if recs.size and lo + recs.size > hw.pbuf_index:
                raise SimError(f"instruction {k}: PBUF load of {recs.size} records at {lo} exceeds {hw.pbuf_index}",
                               "OUT_OF_RANGE", k)
            self.pbuf[lo:lo + recs.size] = recs
            return
        hp = self._at(f)
        eb = hp.elem_bytes
        v = self._ddr_view(k, f["base_reg"], f["ddr_offset"], rows, cols, elems * eb, f["row_stride"], f["pix_stride"])
        data = np.ascontiguousarray(v).view(self._elem_dtype(hp)).reshape(rows, cols, elems).astype(np.int64)
        if f["buf"] == isa.BUFFERS["IBUF"]:
            buf, lanes, size = self.ibuf[f["bank"]], hw.tn, hp.ibuf_words * hw.tn
        elif f["buf"] == isa.BUFFERS["WBUF"]:
            buf, lanes, size = self.wbuf[f["bank"]], hw.wbuf_pitch, hp.wbuf_words * hw.wbuf_pitch
        else:
            raise SimError(f"instruction {k}: LOAD into unknown buffer {f['buf']}", "OUT_OF_RANGE", k)
        pix = np.arange(rows * cols).reshape(rows, cols)
        start = (f["dst_word"] + pix * f["dst_pitch"]) * lanes + f["dst_elem"]
        idx = start[:, :, None] + np.arange(elems)
        if idx.size and (idx.max() >= size):
            raise SimError(f"instruction {k}: LOAD writes element {int(idx.max())} of a {size}-element "
                           f"int{hp.bits} {isa.BUFFER_NAMES[f['buf']]} bank", "OUT_OF_RANGE", k)
        buf[idx] = data

    def _pre(self, k, f):
        """PRE: host.pre.pre_run (the band of rows y0 .. y0 + rows - 1) on the frame the registers describe,
        written as the instruction says; the checks before any byte is written."""
        fr = self.frame
        if f["rows"] == 0:
            return
        g = fr.geometry(f["net_w"], f["net_h"])
        why = pre_violation(g, fr.pitch, fr.size)
        if f["y0"] + f["rows"] > f["net_h"]:
            why = f"band of rows {f['y0']} .. {f['y0'] + f['rows'] - 1} beyond the {f['net_h']}-row input"
        if why is not None:
            raise SimError(f"instruction {k}: PRE: {why}", "OUT_OF_RANGE", k)
        if not 1 <= f["shift"] <= isa.MAX_SHIFT:
            raise SimError(f"instruction {k}: PRE with a quantization shift of {f['shift']}, outside [1, "
                           f"{isa.MAX_SHIFT}]", "ARITH_OVERFLOW", k)
        n = frame_bytes(g, fr.pitch)
        if fr.addr < 0 or fr.addr + n > self.ddr.size:
            raise SimError(f"instruction {k}: PRE frame [{fr.addr:#x}, {fr.addr + n:#x}) outside the "
                           f"{self.ddr.size}-byte image", "OUT_OF_RANGE", k)
        hp = self._at(f)
        q = PreQuant(f["mult"], f["shift"], f["zp"], hp.bits, bool(f["model_bgr"]) != fr.bgr)
        y0, rows = f["y0"], f["rows"]
        if f["pix_stride"] < 3 * hp.elem_bytes:
            raise SimError(f"instruction {k}: PRE pixel stride {f['pix_stride']} below a pixel's {3 * hp.elem_bytes} "
                           f"bytes", "OUT_OF_RANGE", k)
        v = self._ddr_view(k, f["base_reg"], f["ddr_offset"], rows, g.net_w,
                           3 * hp.elem_bytes, f["row_stride"], f["pix_stride"])
        out = pre_run(self.ddr[fr.addr:fr.addr + n], g, q, pitch=fr.pitch, y0=y0, rows=rows)
        v[...] = out.view(np.uint8).reshape(rows, g.net_w, 3 * hp.elem_bytes)

    def _compute(self, k, f):
        hw = self._at(f)
        tn, tm = hw.tn, hw.tm
        oh, ow, og, ig, kh, kw, s = f["oh"], f["ow"], f["og"], f["ig"], f["kh"], f["kw"], f["stride"]
        if oh * ow * og == 0:
            return
        rows_in = (oh - 1) * s + kh
        cols_in = f["in_cols"]
        if (ow - 1) * s + kw > cols_in:
            raise SimError(f"instruction {k}: COMPUTE window needs {(ow - 1) * s + kw} ifmap columns, tile has "
                           f"{cols_in}", "OUT_OF_RANGE", k)
        n_i = rows_in * cols_in * ig * tn
        i0 = f["ibuf_word"] * tn
        ib = self.ibuf[f["ibuf_bank"]][:hw.ibuf_words * tn]
        if i0 + n_i > ib.size:
            raise SimError(f"instruction {k}: COMPUTE reads IBUF beyond its {ib.size} int{hw.bits} elements",
                           "OUT_OF_RANGE", k)
        ifm = ib[i0:i0 + n_i].reshape(rows_in, cols_in, ig * tn)
        acc = self.acc[f["acc_bank"]]
        nw = oh * ow * og
        if nw > acc.shape[0]:
            raise SimError(f"instruction {k}: COMPUTE tile of {nw} accumulator words exceeds {acc.shape[0]}",
                           "OUT_OF_RANGE", k)
        if f["bypass"]:
            b0 = f["b_word"] * tn if f["emul"] else 0
            if b0 + og * tm > ig * tn:
                raise SimError(f"instruction {k}: bypass of {og * tm} channels from {ig * tn} ifmap lanes"
                               + (f" (operand B at lane {b0})" if f["emul"] else ""), "OUT_OF_RANGE", k)
            pix = ifm[0:(oh - 1) * s + 1:s, 0:(ow - 1) * s + 1:s]
            part = pix[..., :og * tm].reshape(nw, tm).astype(np.int64)
            if f["emul"]:   # (A - za) * (B - zb), A at lane o*Tm + m, B at b_word*Tn + o*Tm + m
                part = (part - f["za"]) * (pix[..., b0:b0 + og * tm].reshape(nw, tm).astype(np.int64) - f["zb"])
        else:
            n_w, w0 = og * ig * kh * kw, f["wbuf_word"]
            wb = self.wbuf[f["wbuf_bank"]][:hw.wbuf_words * hw.wbuf_pitch].reshape(hw.wbuf_words, hw.wbuf_pitch)
            if w0 + n_w > wb.shape[0]:
                raise SimError(f"instruction {k}: COMPUTE reads WBUF beyond its {wb.shape[0]} words", "OUT_OF_RANGE", k)
            w = wb[w0:w0 + n_w, :tm * tn].reshape(og, ig, kh, kw, tm, tn).astype(np.float64)
            out = np.zeros((oh * ow, og * tm), np.float64)
            ifm64 = ifm.astype(np.float64)
            for ky in range(kh):
                for kx in range(kw):
                    sub = ifm64[ky:ky + (oh - 1) * s + 1:s, kx:kx + (ow - 1) * s + 1:s].reshape(oh * ow, ig * tn)
                    wk = w[:, :, ky, kx].transpose(0, 2, 1, 3).reshape(og * tm, ig * tn)
                    out += sub @ wk.T
            part = out.astype(np.int64).reshape(nw, tm)
        self._acc_layout(k, f, "COMPUTE", write=True)
        if f["acc_init"]:
            acc[:nw] = part
        else:
            acc[:nw] += part
        lim = 1 << (hw.acc_bits - 1)
        if np.abs(acc[:nw]).max(initial=0) >= lim:
            raise SimError(f"instruction {k}: accumulator overflow ({hw.acc_bits}-bit)", "ARITH_OVERFLOW", k)

    def _acc_layout(self, k, f, op, write):
        """pump 2: :func:`generator.exec.acc_layout.check` on the ACC bank instruction ``k`` uses."""
        if self.acc_par is not None:
            acc_layout.check(self.acc_par[f["acc_bank"]], k, f, op, write)

    def _post(self, k, f):
        hw = self._at(f)
        tm = hw.tm
        qmin, qmax = -(1 << (hw.bits - 1)), (1 << (hw.bits - 1)) - 1
        oh, ow, og = f["oh"], f["ow"], f["og"]
        C = og * tm
        if C == 0 or oh * ow == 0:
            return
        if oh * ow * og > hw.acc_words:
            raise SimError(f"instruction {k}: POST reads {oh * ow * og} accumulator words of {hw.acc_words}",
                           "OUT_OF_RANGE", k)
        self._acc_layout(k, f, "POST", write=False)
        acc = self.acc[f["acc_bank"]][:oh * ow * og].reshape(oh, ow, C)
        if f["pbuf_oc"] % hw.tm_pitch:
            raise SimError(f"instruction {k}: POST pbuf_oc {f['pbuf_oc']} is not a multiple of the PBUF row pitch "
                           f"{hw.tm_pitch}", "OUT_OF_RANGE", k)
        oc = (f["pbuf_oc"] + np.arange(og)[:, None] * hw.tm_pitch + np.arange(tm)).reshape(-1)   # record of o, m
        if oc[-1] >= hw.pbuf_index:
            raise SimError(f"instruction {k}: POST reads PBUF entry {oc[-1]} of {hw.pbuf_index}", "OUT_OF_RANGE", k)
        p = self.pbuf[oc]
        pre = p["pre_shift"].astype(np.int64)
        if (pre > isa.MAX_SHIFT).any():
            raise SimError(f"instruction {k}: POST with a requantization pre-shift over {isa.MAX_SHIFT}",
                           "ARITH_OVERFLOW", k)
        v = (acc + p["bias"].astype(np.int64)) >> pre
        lim = 1 << (isa.REQUANT_OPERAND_BITS - 1)
        bad = (v < -lim) | (v >= lim)
        if bad.any():
            j = np.argwhere(bad)[0]
            raise SimError(f"instruction {k}: POST requantization operand (acc + bias) >> pre_shift = {int(v[tuple(j)])}"
                           f" (PBUF record {int(oc[j[-1]])}, pre_shift {int(pre[j[-1]])}) outside "
                           f"{isa.REQUANT_OPERAND_BITS} signed bits", "ARITH_OVERFLOW", k)
        neg = (v < 0) & bool(f["act"] & isa.ACTIVATIONS["neg_mult"])
        m = np.where(neg, p["mult_neg"].astype(np.int64), p["mult_pos"].astype(np.int64))
        sh = np.where(neg, p["shift_neg"].astype(np.int64), p["shift_pos"].astype(np.int64))
        if (sh < 1).any() or (sh > isa.MAX_SHIFT).any():
            raise SimError(f"instruction {k}: POST with a requantization shift outside [1, {isa.MAX_SHIFT}]",
                           "ARITH_OVERFLOW", k)
        p0 = (v * m + (np.int64(1) << (sh - 1))) >> sh
        q = np.clip(p0 + f["zp_out"], qmin, qmax)
        if f["act"] & isa.ACTIVATIONS["table"]:
            q = self._table(q, hw.bits)
            if f["id_above"]:   # above the table's window: the identity onto the output grid
                r = (1 << (f["id_shift"] - 1)) if f["id_shift"] else 0
                q = np.where(p0 + f["zp_out"] > qmax,
                             np.clip(((p0 + r) >> f["id_shift"]) + f["zp_id"], qmin, qmax), q)
        up = max(f["up"], 1)
        prow, pcol = f["out_rows"] // up, f["out_cols"] // up
        pk, ps = max(f["pool_k"], 1), max(f["pool_s"], 1)
        if pk > 1 or ps > 1:
            res = None
            for dy in range(pk):
                ys = np.minimum(np.arange(prow) * ps + dy, oh - 1)
                for dx in range(pk):
                    xs = np.minimum(np.arange(pcol) * ps + dx, ow - 1)
                    t = q[ys][:, xs]
                    res = t if res is None else np.maximum(res, t)
            q = res
        else:
            q = q[:prow, :pcol]
        if up > 1:
            q = q.repeat(up, axis=0).repeat(up, axis=1)
        n = q.size
        if n > hw.obuf_words * tm:
            raise SimError(f"instruction {k}: POST output of {n} elements exceeds the int{hw.bits} OBUF "
                           f"({hw.obuf_words * tm})", "OUT_OF_RANGE", k)
        self.obuf[:n] = q.reshape(-1)

    def _table(self, q: np.ndarray, bits: int) -> np.ndarray:
        """The activation table of TBUF applied to q [oh, ow, C] of precision ``bits`` (lane m = channel % Tm reads
        its own lane memory; every lane holds the same table when the compiler wrote it): see
        :data:`isa.TABLE_ENTRIES`."""
        fb, qmin, qmax = bits - 8, -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        u = q - qmin
        i, fr = u >> fb, u & ((1 << fb) - 1)
        lane = np.arange(q.shape[-1]) % self.hw.tm
        per = isa.TABLE_PER_RECORD
        rec = self.tbuf[(i // per) * self.hw.tm_pitch + lane]          # [oh, ow, C, 2 * per]
        j = (i % per)[..., None]
        base = np.take_along_axis(rec, 2 * j, -1)[..., 0]
        delta = np.take_along_axis(rec, 2 * j + 1, -1)[..., 0]
        r = base + ((delta * fr + (1 << (isa.TABLE_FRAC_BITS - 1))) >> isa.TABLE_FRAC_BITS)
        return np.clip(r, qmin, qmax)

    def _store(self, k, f):
        hw = self._at(f)
        rows, cols, elems, pitch = f["rows"], f["cols"], f["elems"], f["src_pitch"] * hw.tm
        if rows * cols * elems == 0:
            return
        need = (rows * cols - 1) * pitch + elems
        if need > hw.obuf_words * hw.tm:
            raise SimError(f"instruction {k}: STORE reads OBUF beyond its {hw.obuf_words * hw.tm} int{hw.bits} "
                           f"elements", "OUT_OF_RANGE", k)
        src = self.obuf[:rows * cols * pitch].reshape(rows, cols, pitch)[:, :, :elems]
        v = self._ddr_view(k, f["base_reg"], f["ddr_offset"], rows, cols, elems * hw.elem_bytes,
                           f["row_stride"], f["pix_stride"])
        v[...] = src.astype(self._elem_dtype(hw)).view(np.uint8).reshape(rows, cols, elems * hw.elem_bytes)

    # ---- scheduler ----------------------------------------------------------------------------------------
    def run(self, program: bytes, functional: bool = True, progress: bool = False) -> SimResult:
        """Execute the program (an encoded blob, as fetched); returns cycle counts. With ``functional=False`` only
        timing is simulated.

        The whole program is checked before anything runs, in this order: PARTIAL_INSN (not a whole number of
        instructions), ILLEGAL_OPCODE (up to the first END; what follows END is never fetched), CONFIG_MISSING
        (instruction 0 is not CONFIG), NO_END (no END: the fetch would run off the program's end). Then
        :meth:`run_insns`. Raises SimError with the status bit of the first error (see
        :data:`generator.spec.isa.STATUS_BITS`).
        """
        st = isa.partial_insn_status(len(program))
        if st:
            raise SimError(f"the program is {len(program)} bytes, not a whole number of {isa.INSN_BYTES}-byte "
                           f"instructions", st)
        n = len(program) // isa.INSN_BYTES
        insns = []
        for k in range(n):
            try:
                ins = isa.decode(program[k * isa.INSN_BYTES:(k + 1) * isa.INSN_BYTES])
            except isa.IsaError as e:
                raise SimError(f"instruction {k}: {e}", "ILLEGAL_OPCODE", k) from None
            bad = [fl for fl in ("pop_prev", "pop_next", "push_prev", "push_next")
                   if ins.f[fl] and fl not in isa.MODULE_FLAGS[ins.module]]
            if bad:
                raise SimError(f"instruction {k}: {ins.op} cannot {'/'.join(bad)} (the {ins.module} module has no "
                               f"such neighbour)", "ILLEGAL_OPCODE", k)
            insns.append(ins)
            if ins.op == "END":
                break
        if insns and insns[0].op != "CONFIG":
            raise SimError(f"instruction 0: a program must start with CONFIG, not {insns[0].op}", "CONFIG_MISSING", 0)
        if not insns or insns[-1].op != "END":
            raise SimError(f"no END instruction in the {n}-instruction program (the fetch runs off its end)",
                           "NO_END")
        return self.run_insns(insns, functional, progress)

    def run_insns(self, insns, functional=True, progress=False, check_end_tokens=True, cost=None,
                  issue=None, cmd_depth="rtl", overlap=None) -> SimResult:
        """Execute decoded instructions up to the first END (see :meth:`run`; here the instructions are not
        checked for CONFIG first or END last), timed by :class:`generator.spec.timing_engine.ModuleTimer`.
        ``cost(hw, insn)``: cycles an instruction occupies its module (default
        :func:`generator.spec.timing.insn_cycles`; :mod:`generator.estimate.hls_cycles` passes the kernel's loop
        estimate, with ``functional=False``); ``issue``: earliest start cycle of each instruction (default k: fetch
        issues one instruction per cycle); ``cmd_depth``: depth of each module's command queue (None: unbounded;
        a full queue stops the fetch, see :mod:`generator.spec.timing_engine`; default ``"rtl"``: the RTL's
        ``RTL_QUEUES["MQ_DEPTH"]`` with the default cost, as the compiler's frame timing counts, else unbounded); ``overlap``: a STORE runs beside the
        POST before it (default: with the default cost only; the HLS kernel's estimate passes True). Raises SimError: a module error
        (its status bit), WATCHDOG (deadlock: every module waits for a token), TOKEN_OVERFLOW (a push onto a FIFO
        holding :data:`generator.spec.isa.TOKEN_QUEUE_DEPTH` tokens), TOKENS_LEFT (tokens remain when every module
        is done; not checked with ``check_end_tokens=False``, for timing program fragments)."""
        if cmd_depth == "rtl":
            cmd_depth = RTL_QUEUES["MQ_DEPTH"] if cost is None else None
        timer = ModuleTimer(self.hw, insns, cost, issue, cmd_depth, overlap, frame=self.frame)
        handlers = {"CONFIG": self._config, "LOAD": self._load, "COMPUTE": self._compute, "POST": self._post,
                    "STORE": self._store, "PRE": self._pre}
        bar = None
        if progress:
            from tqdm import tqdm
            bar = tqdm(total=timer.total, desc="golden sim", unit="insn")

        def on_start(k, ins):   # the instruction's data effect, when the timing engine starts it
            if not self.configured and ins.op not in ("CONFIG", "NOP"):
                raise SimError(f"instruction {k}: {ins.op} before CONFIG", "CONFIG_MISSING", k)
            if functional or ins.op == "CONFIG":
                h = handlers.get(ins.op)
                if h is not None:
                    h(k, ins.f)
            if bar is not None:
                bar.update(1)
        try:
            cycles = timer.run(on_start, check_end_tokens)
        except TokenError as e:
            raise SimError(str(e), e.status, e.insn) from None
        finally:
            if bar is not None:
                bar.close()
        return SimResult(cycles, timer.start, timer.end, timer.busy, timer.stall)
