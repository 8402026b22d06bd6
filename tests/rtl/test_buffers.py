"""rtl/buffers.sv (the IBUF / WBUF / ACC / OBUF / PBUF lane memories and their port multiplexing) against a Python
model of the documented port use: LOAD writes (IBUF ports A and B, WBUF, PBUF byte enables) reach only bank ld_bank,
COMPUTE reads both banks at its addresses when LOAD does not write the lane, ACC port A serves the COMPUTE write of
pixel x0 / the POST read (while POST reads that bank) / the COMPUTE read, port B the other pixel; OBUF port A POST
writes, port B STORE reads; every read one cycle after its address, a port's read data kept while it writes
(no-change mode). Random traffic that never lets both ports touch one address in a cycle (as the units guarantee)."""
from __future__ import annotations

import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, Timer

from generator.rtl import package_context
from rtl_unit import UnitBuild, unit_args


def pack(vals, bits):
    out = 0
    for k, v in enumerate(vals):
        out |= (int(v) & ((1 << bits) - 1)) << (bits * k)
    return out


def merge(old, new, en, granule, n):
    m = sum(((1 << granule) - 1) << (granule * k) for k in range(n) if en >> k & 1)
    return (old & ~m) | (new & m)


@cocotb.test()
async def buffers_match_model(dut):
    args = unit_args()
    P = args["pkg"]
    tn, tm, ol, wl, acc_w = P["tn"], P["tm"], P["ol"], P["tn"] * P["tm"], P["acc_w"]
    ib_d, wb_d, acc_d, ob_d, pb_d = P["ib_d"], P["wb_d"], P["acc_words"], P["ob_d"], P["pb_d"]
    rng = random.Random(args["seed"])
    Clock(dut.clk, 10, unit="ns").start()
    R = lambda bits: rng.getrandbits(bits)                               # noqa: E731
    ib = [[[0] * ib_d for _ in range(tn)] for _ in range(2)]             # [bank][lane][word] 16 bits
    wb = [[[0] * wb_d for _ in range(tm)] for _ in range(2)]             # [bank][m][word] 16*TN bits
    acc = [[[0] * acc_d for _ in range(tm)] for _ in range(2)]
    ob = [[0] * ob_d for _ in range(ol)]
    pb = [[0] * pb_d for _ in range(tm)]
    out = {k: 0 for k in ("ib_a", "ib_b", "wb", "acc_a", "acc_b", "ob", "pb")}   # model read registers
    out_ib = [[[0, 0] for _ in range(tn)] for _ in range(2)]
    out_wb = [[0] * tm for _ in range(2)]
    out_acc = [[[0, 0] for _ in range(tm)] for _ in range(2)]
    out_ob = [0] * ol
    out_pb = [0] * tm
    checked = 0
    for cyc in range(args["cycles"]):
        ld_bank = rng.randint(0, 1)
        cp_a, cp_b = rng.sample(range(ib_d), 2)
        ibw_we = [[R(2) if rng.random() < 0.4 else 0 for _ in range(tn)] for _ in range(2)]
        ibw_row = [[rng.choice([r for r in range(ib_d) if r not in (cp_a, cp_b)] or [0]) for _ in range(tn)]
                   for _ in range(2)]
        for n in range(tn):                                           # ports A / B never on one address
            if ibw_row[1][n] == ibw_row[0][n]:
                ibw_we[1][n] = 0
            if ibw_we[1][n] == 0 and ibw_we[0][n] and ibw_row[0][n] == cp_b:
                ibw_we[0][n] = 0
            if ibw_we[0][n] == 0 and ibw_we[1][n] and ibw_row[1][n] == cp_a:
                ibw_we[1][n] = 0
        ibw_data = [[R(16) for _ in range(tn)] for _ in range(2)]
        wbw_we = [R(2 * tn) if rng.random() < 0.4 else 0 for _ in range(tm)]
        wbw_row, cp_wb = rng.sample(range(wb_d), 2)
        wbw_data = [R(16 * tn) for _ in range(tm)]
        cp_bank, cp_wr, two, pp_rd, pp_bank = (rng.randint(0, 1) for _ in range(5))
        s2a0, s2a1, s3a0, s3a1, pp_aw = rng.sample(range(acc_d), 5)
        wd0, wd1 = [R(acc_w) for _ in range(tm)], [R(acc_w) for _ in range(tm)]
        obw_we = [int(rng.random() < 0.5) for _ in range(ol)]
        obw_row, obr_row = [], []
        for _ in range(ol):
            a, b = rng.sample(range(ob_d), 2)
            obw_row.append(a)
            obr_row.append(b)
        obw_data = [R(16) for _ in range(ol)]
        pbw_we = [R(16) if rng.random() < 0.4 else 0 for _ in range(tm)]
        pbw_row = [rng.randrange(pb_d) for _ in range(tm)]
        pp_prow = rng.choice([r for r in range(pb_d) if r not in pbw_row] or [0])
        pbw_data = [R(128) for _ in range(tm)]
        drive = dict(
            ld_bank=ld_bank, ibw_we=pack([w for pt in range(2) for w in ibw_we[pt]], 2),
            ibw_data=pack([d for pt in range(2) for d in ibw_data[pt]], 16),
            ibw_row=pack([r for pt in range(2) for r in ibw_row[pt]], P["ib_aw"]),
            wbw_we=pack(wbw_we, 2 * tn), wbw_data=pack(wbw_data, 16 * tn), wbw_row=wbw_row,
            pbw_we=pack(pbw_we, 16), pbw_data=pack(pbw_data, 128), pbw_row=pack(pbw_row, P["pb_aw"]),
            cp_ib_a=cp_a, cp_ib_b=cp_b, cp_wb_a=cp_wb, cp_acc_bank=cp_bank, cp_wr=cp_wr, cp_s3_two=two,
            cp_s2_aw0=s2a0, cp_s2_aw1=s2a1, cp_s3_aw0=s3a0, cp_s3_aw1=s3a1, cp_wd0=pack(wd0, acc_w),
            cp_wd1=pack(wd1, acc_w), pp_acc_rd=pp_rd, pp_acc_bank=pp_bank, pp_aw=pp_aw, pp_prow=pp_prow,
            obw_we=pack(obw_we, 1), obw_data=pack(obw_data, 16), obw_row=pack(obw_row, P["ob_aw"]),
            obr_row=pack(obr_row, P["ob_aw"]))
        for k, v in drive.items():
            getattr(dut, k).value = v
        await RisingEdge(dut.clk)
        await Timer(1, unit="ns")
        # the model: the same cycle's writes and registered reads
        for b in range(2):
            here = ld_bank == b
            for n in range(tn):
                for pt, addr in ((0, cp_a), (1, cp_b)):
                    we = ibw_we[pt][n] if here else 0
                    row = ibw_row[pt][n] if we else addr
                    if we:
                        ib[b][n][row] = merge(ib[b][n][row], ibw_data[pt][n], we, 8, 2)
                    else:
                        out_ib[b][n][pt] = ib[b][n][row]
            for m in range(tm):
                we = wbw_we[m] if here else 0
                if we:
                    wb[b][m][wbw_row] = merge(wb[b][m][wbw_row], wbw_data[m], we, 8, 2 * tn)
                out_wb[b][m] = wb[b][m][cp_wb]
            cw = cp_wr and cp_bank == b
            post_here = pp_rd and pp_bank == b
            for m in range(tm):
                a_we = cw and two
                a_addr = s3a0 if a_we else (pp_aw if post_here else s2a0)
                b_addr = (s3a1 if two else s3a0) if cw else s2a1
                if a_we:
                    acc[b][m][a_addr] = wd0[m]
                else:
                    out_acc[b][m][0] = acc[b][m][a_addr]
                if cw:
                    acc[b][m][b_addr] = wd1[m] if two else wd0[m]
                else:
                    out_acc[b][m][1] = acc[b][m][b_addr]
        for lane in range(ol):
            if obw_we[lane]:
                ob[lane][obw_row[lane]] = obw_data[lane]
            out_ob[lane] = ob[lane][obr_row[lane]]
        for lane in range(tm):
            if pbw_we[lane]:
                pb[lane][pbw_row[lane]] = merge(pb[lane][pbw_row[lane]], pbw_data[lane], pbw_we[lane], 8, 16)
            out_pb[lane] = pb[lane][pp_prow]
        want = dict(
            ib_rd_a=pack([out_ib[b][n][0] for b in range(2) for n in range(tn)], 16),
            ib_rd_b=pack([out_ib[b][n][1] for b in range(2) for n in range(tn)], 16),
            wb_rd=pack([out_wb[b][m] for b in range(2) for m in range(tm)], 16 * tn),
            acc_rd_a=pack([out_acc[b][m][0] for b in range(2) for m in range(tm)], acc_w),
            acc_rd_b=pack([out_acc[b][m][1] for b in range(2) for m in range(tm)], acc_w),
            ob_rd=pack(out_ob, 16), pb_rd=pack(out_pb, 128))
        if cyc > 0:
            for k, v in want.items():
                assert int(getattr(dut, k).value) == v, f"cycle {cyc}: {k}"
            checked += 1
    assert checked == args["cycles"] - 1


@pytest.fixture(scope="module")
def buf_build():
    return UnitBuild("buffers")


def test_buffers(buf_build):
    p = package_context(buf_build.board)
    tn, tm = p["tn"], p["tm"]
    aw = lambda d: max((d - 1).bit_length(), 1)                        # noqa: E731
    ol = max(tm, p["axi_dw"] // 8)
    ib_d, wb_d, ob_d, pb_d = (-(-p["ibuf_elems"] // tn), -(-p["wbuf_elems"] // (tn * tm)), -(-p["obuf_elems"] // ol),
                              -(-p["pbuf_entries"] // tm))
    pkg = dict(tn=tn, tm=tm, ol=ol, acc_w=p["acc_w"], acc_words=p["acc_words"], ib_d=ib_d, wb_d=wb_d, ob_d=ob_d,
               pb_d=pb_d, ib_aw=aw(ib_d), pb_aw=aw(pb_d), ob_aw=aw(ob_d))
    buf_build.run("test_buffers", "buffers_match_model", {"seed": 37, "cycles": 300, "pkg": pkg})
