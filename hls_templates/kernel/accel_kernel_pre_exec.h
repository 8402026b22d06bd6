// accel_kernel_pre_exec.h -- static (not rendered), part of accel_kernel.h (the parts include each other in order:
// base <- pre_exec <- load <- compute <- post <- store <- fetch): the PRE instruction of the load module. exec_pre
// decodes it, checks it with the run descriptor's frame registers (isa.PRE_REGISTERS) exactly as the golden simulator
// does (generator/exec/golden.py _pre: a band of 0 rows does nothing and is not checked; host.pre.pre_violation's
// conditions and a band beyond net_h rows (y0 + rows > net_h) -> OUT_OF_RANGE, a shift outside
// [1, MAX_SHIFT] -> ARITH_OVERFLOW, a destination byte outside its base register's buffer -> OUT_OF_RANGE; nothing is
// read or written on an error), then runs the PRE unit (accel_kernel_pre.h, accel_pre) on the load module's m_axi
// port: the frame at the frame register's absolute byte address, the band's rows y0 .. y0 + rows - 1 of the network
// input at base[base_reg] + ddr_offset (row y0), row_stride apart.
// accel_pre takes its last write responses before it returns, so PRE completes before the load module's next
// instruction (as the ISA states). The checks are scalar 64-bit arithmetic once per instruction, outside the loops.
#ifndef ACCEL_KERNEL_PRE_EXEC_H
#define ACCEL_KERNEL_PRE_EXEC_H

#include "accel_kernel_base.h"
#include "accel_kernel_pre.h"

#if PRE_AXI_BYTES != AXI_BYTES
#error "PRE runs on the load module's m_axi port: its beat must be the kernel's"
#endif

static inline bool pre_within(i64 v, i64 lo, i64 hi) { return v >= lo && v <= hi; }

// host.pre.pre_violation for the run's frame registers and a net_w x net_h network input: true when PRE refuses it
static inline bool pre_frame_bad(const run_t &r, i64 net_w, i64 net_h) {
    const i64 fw = (i64)r.frame_w.to_uint64(), fh = (i64)r.frame_h.to_uint64(), pitch = (i64)r.frame_pitch.to_uint64();
    const i64 ow = (i64)r.pre_out_w.to_uint64(), oh = (i64)r.pre_out_h.to_uint64();
    const i64 left = (i64)r.pre_left.to_uint64(), top = (i64)r.pre_top.to_uint64();
    if (!pre_within(fw, 1, PRE_MAX_FRAME) || !pre_within(fh, 1, PRE_MAX_FRAME)) return true;
    if (!pre_within(net_w, 1, PRE_MAX_FRAME) || !pre_within(net_h, 1, PRE_MAX_FRAME)) return true;
    if (!pre_within(pitch, 3 * fw, PRE_MAX_PITCH)) return true;
    if (!(ow >= 1 && ow <= net_w - left && oh >= 1 && oh <= net_h - top)) return true;
    return (fh - 1) * pitch + 3 * fw > (i64)r.frame_size.to_uint64();   // host.pre.frame_bytes beyond frame_size
}

// PRE: checks (header comment), then the unit. iters: the unit's loop iterations (fetch beats + pixel steps).
static void exec_pre(const insn_t &x, maxi<axi_t> ddr, const run_t &run, ap_uint<32> &err, ap_uint<32> &iters) {
    const int sel = (int)F(x, PRE, BASE_REG);
    const i64 off = F(x, PRE, DDR_OFFSET), rs = F(x, PRE, ROW_STRIDE), ps = F(x, PRE, PIX_STRIDE);
    const i64 net_w = F(x, PRE, NET_W), net_h = F(x, PRE, NET_H), shift = F(x, PRE, SHIFT);
    const i64 y0 = F(x, PRE, Y0), rows = F(x, PRE, ROWS);
    const ap_uint<1> prec = (ap_uint<1>)F(x, PRE, PREC);
    if (rows == 0) return;   // an empty band: nothing read or written, nothing checked
    if (pre_frame_bad(run, net_w, net_h) || y0 + rows > net_h) {
        err |= STATUS_OUT_OF_RANGE;
        return;
    }
    if (shift < 1 || shift > MAX_SHIFT) {
        err |= STATUS_ARITH_OVERFLOW;
        return;
    }
    if (!ddr_in_range(run, sel, off + (rows - 1) * rs + (net_w - 1) * ps + 3 * (1 + (i64)prec))) {
        err |= STATUS_OUT_OF_RANGE;
        return;
    }
    pre_args_t a;
    a.src_addr = (pre_addr_t)run.frame;
    a.src_pitch = (ap_uint<16>)run.frame_pitch;
    a.frame_w = (pre_dim_t)run.frame_w;
    a.frame_h = (pre_dim_t)run.frame_h;
    a.net_w = (pre_dim_t)net_w;
    a.net_h = (pre_dim_t)net_h;
    a.out_w = (pre_dim_t)run.pre_out_w;
    a.out_h = (pre_dim_t)run.pre_out_h;
    a.left = (pre_dim_t)run.pre_left;
    a.top = (pre_dim_t)run.pre_top;
    a.step_x = run.pre_step_x;
    a.step_y = run.pre_step_y;
    a.mult = (ap_uint<16>)F(x, PRE, MULT);
    a.shift = (ap_uint<6>)shift;
    a.zero_point = (ap_int<ISA_PRE_ZP_W>)fld<ISA_PRE_ZP_LO, ISA_PRE_ZP_W>(x);
    a.prec = prec;
    a.swap = (ap_uint<1>)(F(x, PRE, MODEL_BGR) ^ (i64)run.frame_bgr[0]);
    a.dst_addr = (pre_addr_t)(ddr_base(run, sel) + off);
    a.dst_row = (ap_uint<32>)rs;
    a.dst_pix = (ap_uint<8>)ps;
    a.y0 = (pre_dim_t)y0;
    a.rows = (pre_dim_t)rows;
    pre_stats_t st;
    if (!accel_pre(ddr, a, st)) {   // (a pixel stride below its 3 elements: the unit writes nothing)
        err |= STATUS_OUT_OF_RANGE;
        return;
    }
    iters += st.fetch_beats + st.pixel_steps;
}

#endif  // ACCEL_KERNEL_PRE_EXEC_H
