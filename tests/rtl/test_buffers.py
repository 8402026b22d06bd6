"""rtl/buffers.sv (the IBUF / WBUF / ACC / OBUF / PBUF / TBUF lane memories and their port multiplexing) against a
Python model of the documented port use: LOAD writes (IBUF ports A and B, WBUF, PBUF byte enables) reach only bank
ld_bank, COMPUTE reads both IBUF banks at its addresses when LOAD does not write the lane and WBUF's bank
cp_wb_bank (both banks in one memory; or both banks' words, a memory per bank), ACC port A serves the COMPUTE write of pixel x0 / the POST read (while POST
reads that bank) / the COMPUTE read, port B the other pixel; OBUF port A POST writes, port B STORE reads; TBUF
written as PBUF (its own byte enables, the same rows and data), each lane read at its own row; every read one cycle
after its address, a port's read data kept while it writes (no-change mode). Random traffic that never lets both
ports touch one address in a cycle (as the units guarantee)."""
from __future__ import annotations

import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, Timer

from generator.backends.rtl import package_context
from rtl_unit import UnitBuild, tiny_board, unit_args


def pack(vals, bits):
    out = 0
    for k, v in enumerate(vals):
        out |= (int(v) & ((1 << bits) - 1)) << (bits * k)
    return out


def merge(old, new, en, granule, n):
    m = sum(((1 << granule) - 1) << (granule * k) for k in range(n) if en >> k & 1)
    return (old & ~m) | (new & m)


def _stimulus(rng, P) -> dict:
    """One cycle's random port activity, within the units' contracts (ports A / B never on one address)."""
    tn, tm, ol = P["tn"], P["tm"], P["ol"]
    ib_d, wb_d, acc_d, ob_d, pb_d = P["ib_d"], P["wb_d"], P["acc_words"], P["ob_d"], P["pb_d"]
    R = rng.getrandbits
    s = dict(ld_bank=rng.randint(0, 1))
    s["cp_a"], s["cp_b"] = cp_a, cp_b = rng.sample(range(ib_d), 2)
    ibw_we = [[R(2) if rng.random() < 0.4 else 0 for _ in range(tn)] for _ in range(2)]
    ibw_row = [[rng.choice([r for r in range(ib_d) if r not in (cp_a, cp_b)] or [0]) for _ in range(tn)]
               for _ in range(2)]
    for n in range(tn):
        if ibw_row[1][n] == ibw_row[0][n]:
            ibw_we[1][n] = 0
        if ibw_we[1][n] == 0 and ibw_we[0][n] and ibw_row[0][n] == cp_b:
            ibw_we[0][n] = 0
        if ibw_we[0][n] == 0 and ibw_we[1][n] and ibw_row[1][n] == cp_a:
            ibw_we[1][n] = 0
    s.update(ibw_we=ibw_we, ibw_row=ibw_row, ibw_data=[[R(16) for _ in range(tn)] for _ in range(2)])
    s["wbw_we"] = [R(2 * tn) if rng.random() < 0.4 else 0 for _ in range(tm)]
    s["wbw_row"], s["cp_wb"] = rng.sample(range(wb_d), 2)
    s["cp_wb_bank"] = rng.randint(0, 1)                 # (either bank: the rows differ)
    s["wbw_data"] = [R(16 * tn) for _ in range(tm)]
    s["cp_bank"], s["cp_wr"], s["two"], s["pp_rd"], s["pp_bank"] = (rng.randint(0, 1) for _ in range(5))
    s["s2a0"], s["s2a1"], s["s3a0"], s["s3a1"], s["pp_aw"] = rng.sample(range(acc_d), 5)
    s["wd0"], s["wd1"] = [R(P["acc_w"]) for _ in range(tm)], [R(P["acc_w"]) for _ in range(tm)]
    s["obw_we"] = [int(rng.random() < 0.5) for _ in range(ol)]
    rows = [rng.sample(range(ob_d), 2) for _ in range(ol)]
    s["obw_row"], s["obr_row"] = [a for a, _ in rows], [b for _, b in rows]
    s["obw_data"] = [R(16) for _ in range(ol)]
    s["pbw_we"] = [R(16) if rng.random() < 0.4 else 0 for _ in range(tm)]
    s["pbw_row"] = [rng.randrange(pb_d) for _ in range(tm)]
    s["pp_prow"] = rng.choice([r for r in range(pb_d) if r not in s["pbw_row"]] or [0])
    s["pbw_data"] = [R(128) for _ in range(tm)]
    s["tbw_we"] = [R(16) if rng.random() < 0.4 and not s["pbw_we"][m] else 0 for m in range(tm)]
    s["pp_trow"] = [rng.choice([r for r in range(P["tb_d"]) if not (s["tbw_we"][m] and r == s["pbw_row"][m] % P["tb_d"])])
                    for m in range(tm)]
    return s


def _drive(s, P) -> dict:
    """The unit's input signals for stimulus ``s``."""
    tn, acc_w = P["tn"], P["acc_w"]
    return dict(
        ld_bank=s["ld_bank"], ibw_we=pack([w for pt in range(2) for w in s["ibw_we"][pt]], 2),
        ibw_data=pack([d for pt in range(2) for d in s["ibw_data"][pt]], 16),
        ibw_row=pack([r for pt in range(2) for r in s["ibw_row"][pt]], P["ib_aw"]),
        wbw_we=pack(s["wbw_we"], 2 * tn), wbw_data=pack(s["wbw_data"], 16 * tn), wbw_row=s["wbw_row"],
        pbw_we=pack(s["pbw_we"], 16), pbw_data=pack(s["pbw_data"], 128), pbw_row=pack(s["pbw_row"], P["pw_aw"]),
        tbw_we=pack(s["tbw_we"], 16), pp_trow=pack(s["pp_trow"], P["tb_aw"]),
        cp_ib_a=s["cp_a"], cp_ib_b=s["cp_b"], cp_wb_a=s["cp_wb"], cp_wb_bank=s["cp_wb_bank"], cp_acc_bank=s["cp_bank"], cp_wr=s["cp_wr"],
        cp_s3_two=s["two"], cp_s2_aw0=s["s2a0"], cp_s2_aw1=s["s2a1"], cp_s3_aw0=s["s3a0"], cp_s3_aw1=s["s3a1"],
        cp_wd0=pack(s["wd0"], acc_w), cp_wd1=pack(s["wd1"], acc_w), pp_acc_rd=s["pp_rd"],
        pp_acc_bank=s["pp_bank"], pp_aw=s["pp_aw"], pp_prow=s["pp_prow"],
        obw_we=pack(s["obw_we"], 1), obw_data=pack(s["obw_data"], 16), obw_row=pack(s["obw_row"], P["ob_aw"]),
        obr_row=pack(s["obr_row"], P["ob_aw"]))


class _Model:
    """The buffers as lists of words with registered reads: the same cycle's writes, then the read registers."""

    def __init__(self, P):
        self.P = P
        tn, tm, ol = P["tn"], P["tm"], P["ol"]
        self.ib = [[[0] * P["ib_d"] for _ in range(tn)] for _ in range(2)]      # [bank][lane][word] 16 bits
        self.wb = [[[0] * P["wb_d"] for _ in range(tm)] for _ in range(2)]      # [bank][m][word] 16*TN bits
        self.acc = [[[0] * P["acc_words"] for _ in range(tm)] for _ in range(2)]
        self.ob = [[0] * P["ob_d"] for _ in range(ol)]
        self.pb = [[0] * P["pb_d"] for _ in range(tm)]
        self.tb = [[0] * P["tb_d"] for _ in range(tm)]
        self.out_ib = [[[0, 0] for _ in range(tn)] for _ in range(2)]
        self.out_wb = [[0] * tm for _ in range(2)]     # WB_ONE: bank cp_wb_bank's at [0] (and 0), else [bank]
        self.out_acc = [[[0, 0] for _ in range(tm)] for _ in range(2)]
        self.out_ob, self.out_pb, self.out_tb = [0] * ol, [0] * tm, [0] * tm

    def _ibuf_wbuf(self, s, b):
        here = s["ld_bank"] == b
        for n in range(self.P["tn"]):
            for pt, addr in ((0, s["cp_a"]), (1, s["cp_b"])):
                we = s["ibw_we"][pt][n] if here else 0
                row = s["ibw_row"][pt][n] if we else addr
                if we:
                    self.ib[b][n][row] = merge(self.ib[b][n][row], s["ibw_data"][pt][n], we, 8, 2)
                else:
                    self.out_ib[b][n][pt] = self.ib[b][n][row]
        for m in range(self.P["tm"]):
            we = s["wbw_we"][m] if here else 0
            if we:
                self.wb[b][m][s["wbw_row"]] = merge(self.wb[b][m][s["wbw_row"]], s["wbw_data"][m], we, 8,
                                                    2 * self.P["tn"])
            if not self.P["wb_one"]:
                self.out_wb[b][m] = self.wb[b][m][s["cp_wb"]]
            elif s["cp_wb_bank"] == b:
                self.out_wb[0][m] = self.wb[b][m][s["cp_wb"]]

    def _acc(self, s, b):
        cw = s["cp_wr"] and s["cp_bank"] == b
        post_here = s["pp_rd"] and s["pp_bank"] == b
        two = s["two"]
        for m in range(self.P["tm"]):
            a_we = cw and two
            a_addr = s["s3a0"] if a_we else (s["pp_aw"] if post_here else s["s2a0"])
            b_addr = (s["s3a1"] if two else s["s3a0"]) if cw else s["s2a1"]
            if a_we:
                self.acc[b][m][a_addr] = s["wd0"][m]
            else:
                self.out_acc[b][m][0] = self.acc[b][m][a_addr]
            if cw:
                self.acc[b][m][b_addr] = s["wd1"][m] if two else s["wd0"][m]
            else:
                self.out_acc[b][m][1] = self.acc[b][m][b_addr]

    def step(self, s):
        """One clock edge with stimulus ``s``."""
        for b in range(2):
            self._ibuf_wbuf(s, b)
            self._acc(s, b)
        for lane in range(self.P["ol"]):
            if s["obw_we"][lane]:
                self.ob[lane][s["obw_row"][lane]] = s["obw_data"][lane]
            self.out_ob[lane] = self.ob[lane][s["obr_row"][lane]]
        for lane in range(self.P["tm"]):
            if s["pbw_we"][lane]:
                row = s["pbw_row"][lane]
                self.pb[lane][row] = merge(self.pb[lane][row], s["pbw_data"][lane], s["pbw_we"][lane], 8, 16)
            self.out_pb[lane] = self.pb[lane][s["pp_prow"]]
            if s["tbw_we"][lane]:
                row = s["pbw_row"][lane] % self.P["tb_d"]
                self.tb[lane][row] = merge(self.tb[lane][row], s["pbw_data"][lane], s["tbw_we"][lane], 8, 16)
            self.out_tb[lane] = self.tb[lane][s["pp_trow"][lane]]

    def reads(self) -> dict:
        """The read ports' expected values (registered: valid after the edge)."""
        tn, tm, acc_w = self.P["tn"], self.P["tm"], self.P["acc_w"]
        return dict(
            ib_rd_a=pack([self.out_ib[b][n][0] for b in range(2) for n in range(tn)], 16),
            ib_rd_b=pack([self.out_ib[b][n][1] for b in range(2) for n in range(tn)], 16),
            wb_rd=pack([self.out_wb[b][m] for b in range(2) for m in range(tm)], 16 * tn),
            acc_rd_a=pack([self.out_acc[b][m][0] for b in range(2) for m in range(tm)], acc_w),
            acc_rd_b=pack([self.out_acc[b][m][1] for b in range(2) for m in range(tm)], acc_w),
            ob_rd=pack(self.out_ob, 16), pb_rd=pack(self.out_pb, 128), tb_rd=pack(self.out_tb, 128))


@cocotb.test()
async def buffers_match_model(dut):
    args = unit_args()
    P = args["pkg"]
    rng = random.Random(args["seed"])
    Clock(dut.clk, 10, unit="ns").start()
    model = _Model(P)
    checked = 0
    for cyc in range(args["cycles"]):
        s = _stimulus(rng, P)
        for k, v in _drive(s, P).items():
            getattr(dut, k).value = v
        await RisingEdge(dut.clk)
        await Timer(1, unit="ns")
        model.step(s)
        if cyc > 0:
            for k, v in model.reads().items():
                assert int(getattr(dut, k).value) == v, f"cycle {cyc}: {k}"
            checked += 1
    assert checked == args["cycles"] - 1


@pytest.fixture(scope="module")
def buf_build():
    return UnitBuild("buffers")


def _check(build):
    p = package_context(build.board)
    tn, tm = p["tn"], p["tm"]
    aw = lambda d: max((d - 1).bit_length(), 1)                        # noqa: E731
    ol = max(tm, p["axi_bits"] // 8)
    ib_d, wb_d, ob_d, pb_d = (-(-p["ibuf_elems"] // tn), -(-p["wbuf_elems"] // (tn * tm)), -(-p["obuf_elems"] // ol),
                              -(-p["pbuf_entries"] // tm))
    pkg = dict(tn=tn, tm=tm, ol=ol, acc_w=p["acc_w"], acc_words=p["acc_words"], ib_d=ib_d, wb_d=wb_d, ob_d=ob_d,
               pb_d=pb_d, ib_aw=aw(ib_d), pb_aw=aw(pb_d), ob_aw=aw(ob_d), tb_d=p["tbuf_rows"], tb_aw=aw(p["tbuf_rows"]),
               pw_aw=max(aw(pb_d), aw(p["tbuf_rows"])), wb_one=p["wb_one"])
    build.run("test_buffers", "buffers_match_model", {"seed": 37, "cycles": 300, "pkg": pkg})


def test_buffers(buf_build):
    """TINY: WBUF's banks in one memory per row (72 words a bank: block RAM)."""
    assert package_context(buf_build.board)["wb_one"] == 1
    _check(buf_build)


def test_buffers_wbuf_two_memories():
    """WBUF banks of 48 words (LUTRAM, generator.spec.memories.wbuf_one_memory): a memory per bank and row, both
    banks' words out."""
    b = tiny_board(wbuf_bank_bytes=48 * 8 * 8)
    assert package_context(b)["wb_one"] == 0
    _check(UnitBuild("buffers", b, name="buffers-wb2"))
