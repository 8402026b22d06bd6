// accel_kernel_post.h -- static (not rendered), part of accel_kernel.h (the parts include each other in order: base
// <- load <- compute <- post <- store <- fetch): POST: requantization, the activation table, pooling and upsampling.
#ifndef ACCEL_KERNEL_POST_H
#define ACCEL_KERNEL_POST_H

#include "accel_kernel_compute.h"

// ------------------------------------------------------------------------------------------ POST
// q = clamp(((v*M + 2^(s-1)) >> s) + zp), v = (acc + bias) >> pre_shift in REQUANT_OPERAND_BITS (27) bits, (M, s)
// of the negative side when act (bit 0) and v < 0: one 27 x 18 multiply (one DSP48E2, as rtl/requant.sv)
// a PBUF record's fields (isa.PARAM_RECORD offsets): bit slices, no logic
static inline param_t param_of(const prec_t &rec) {
    param_t p;
    p.bias = (ap_int<PARAM_BIAS_BYTES * 8>)PARAM_FIELD(rec, BIAS);
    p.mult_pos = (ap_int<PARAM_MULT_POS_BYTES * 8>)PARAM_FIELD(rec, MULT_POS);
    p.mult_neg = (ap_int<PARAM_MULT_NEG_BYTES * 8>)PARAM_FIELD(rec, MULT_NEG);
    p.shift_pos = PARAM_FIELD(rec, SHIFT_POS);
    p.shift_neg = PARAM_FIELD(rec, SHIFT_NEG);
    p.pre_shift = PARAM_FIELD(rec, PRE_SHIFT);
    return p;
}

// p = ((v*M + 2^(s-1)) >> s) + zp before the clamp (full width: the identity above a table's window needs it);
// 0 with ARITH_OVERFLOW on a shift or operand out of range
static sum_t requant(const acc_t &a, const param_t &p, bool act, const ap_int<17> &zp, ap_uint<32> &err) {
    const sum_t w = ((sum_t)a + p.bias) >> (p.pre_shift & 63);
    const sum_t lim = (sum_t)1 << (REQUANT_OPERAND_BITS - 1);
    const bool neg = act && w < 0;
    const ap_int<18> m = neg ? p.mult_neg : p.mult_pos;
    const ap_uint<8> s = neg ? p.shift_neg : p.shift_pos;
    if (s < 1 || s > MAX_SHIFT || p.pre_shift > MAX_SHIFT || w < -lim || w >= lim) {
        err |= STATUS_ARITH_OVERFLOW;
        return 0;
    }
    const ap_int<REQUANT_OPERAND_BITS> v = (ap_int<REQUANT_OPERAND_BITS>)w;
    const sum_t prod = (sum_t)(ap_int<45>)(v * m);
    const sum_t rnd = prod + ((sum_t)1 << (s - 1));
    return (rnd >> s) + zp;
}

// saturation to int8 / int16
static inline elem_t clamp_q(const sum_t &q, bool i8) {
    const sum_t qmax = i8 ? 127 : 32767, qmin = i8 ? -128 : -32768;
    return q > qmax ? (elem_t)qmax : q < qmin ? (elem_t)qmin : (elem_t)q;
}

// the identity above a table's window (POST id_above, isa.py ID_SHIFT_MAX): p0 = p - zp_out onto the output grid,
// clamp(((p0 + r) >> id_shift) + zp_id), r = 2^(id_shift-1) (0 for id_shift 0): adds and a shift; p0 within 43
// bits (v*M of 27 x 16 bits, shifted by s >= 1)
typedef ap_int<45> ident_t;
static inline elem_t id_above(const ident_t &p0, const ap_uint<4> &sh, const ap_int<17> &zp_id, bool i8) {
    ident_t r = 0;
    if (sh != 0) r = (ident_t)1 << (sh - 1);
    const ident_t t = (p0 + r) >> sh;
    return clamp_q((sum_t)t + zp_id, i8);
}

// The activation table (isa.py TABLE_ENTRIES) at q: entry i = u >> (bits - 8) of u = q - qmin (lane m's copy, in
// lane m's own memory: tbuf[i / TABLE_PER_RECORD][m]), linear interpolation by the low bits f (int16; none in int8):
// clamp(base + ((delta * f + 2^(TABLE_FRAC_BITS-1)) >> TABLE_FRAC_BITS))
static elem_t table_lookup(const trec_t tbuf[TBUF_ROWS][TM], int m, const elem_t q, bool i8) {
    const ap_uint<16> u = i8 ? (ap_uint<16>)(ap_uint<8>)(q + 128) : (ap_uint<16>)(q + 32768);
    const ap_uint<8> i = i8 ? (ap_uint<8>)u : (ap_uint<8>)(u >> 8);
    const ap_uint<8> f = i8 ? (ap_uint<8>)0 : (ap_uint<8>)u;
    const trec_t rec = tbuf[i / TABLE_PER_RECORD][m];   // (a power of two: a shift)
    const int j = (int)(i % TABLE_PER_RECORD);
    const ap_int<16> base = (ap_int<16>)rec.range(32 * j + 15, 32 * j);
    const ap_int<16> delta = (ap_int<16>)rec.range(32 * j + 31, 32 * j + 16);
    const ap_int<26> r = (ap_int<26>)base + (((ap_int<26>)delta * (ap_int<10>)(ap_uint<9>)f + (1 << (TABLE_FRAC_BITS - 1))) >> TABLE_FRAC_BITS);
    const ap_int<26> qmax = i8 ? 127 : 32767, qmin = i8 ? -128 : -32768;
    return r > qmax ? (elem_t)qmax : r < qmin ? (elem_t)qmin : (elem_t)r;
}

// a POST's fields (bit slices of the instruction) and the output tile's size (R x C pixels) they give, once per
// instruction
struct post_args_t {
    int ab;                        // ACC bank
    bool act, table, ida, i8;      // negative-side multiplier, activation table, identity above it, int8 (prec)
    ap_int<17> zp, zp_id;          // output zero point, the identity's
    ap_uint<4> id_sh;              // the identity's shift
    i64 oh, ow, og, oc0, pk, ps, up, R, C;
};

// POST: the fields and checks; false when it writes nothing (an empty tile, or refused: OUT_OF_RANGE in err)
static bool post_args(const insn_t &x, ap_uint<1> prec, post_args_t &a, ap_uint<32> &err) {
    const int ab = (int)F(x, POST, ACC_BANK);
    const i64 oh = F(x, POST, OH), ow = F(x, POST, OW), og = F(x, POST, OG), oc0 = F(x, POST, PBUF_OC);
    const bool act = (F(x, POST, ACT) & ACT_NEG_MULT) != 0, table = (F(x, POST, ACT) & ACT_TABLE) != 0;
    const i64 pool_k = F(x, POST, POOL_K), pool_s = F(x, POST, POOL_S), up_f = F(x, POST, UP);
    const ap_int<17> zp = (ap_int<ISA_POST_ZP_OUT_W>)fld<ISA_POST_ZP_OUT_LO, ISA_POST_ZP_OUT_W>(x);
    const bool ida = table && F(x, POST, ID_ABOVE) != 0;   // the identity above the table's window
    const ap_uint<4> id_sh = F(x, POST, ID_SHIFT);
    const ap_int<17> zp_id = (ap_int<ISA_POST_ZP_ID_W>)fld<ISA_POST_ZP_ID_LO, ISA_POST_ZP_ID_W>(x);
    const i64 out_rows = F(x, POST, OUT_ROWS), out_cols = F(x, POST, OUT_COLS);
    const bool i8 = prec == PREC_INT8;
    if (oh * ow * og == 0) return false;
    if (oh * ow * og > ACC_WORDS || (oc0 & (TM_PITCH - 1)) != 0 || oc0 + (og - 1) * TM_PITCH + TM - 1 >= PBUF_INDEX) {
        err |= STATUS_OUT_OF_RANGE;
        return false;
    }
    const i64 up = up_f > 1 ? up_f : 1, pk = pool_k > 1 ? pool_k : 1, ps = pool_s > 1 ? pool_s : 1;
    const bool pool = pk > 1 || ps > 1;
    i64 prow = out_rows / up, pcol = out_cols / up;  // (once per instruction, outside the loop)
    if (!pool) {  // no pooling: the top-left prow x pcol pixels of the tile
        prow = prow < oh ? prow : oh;
        pcol = pcol < ow ? pcol : ow;
    }
    const i64 R = prow * up, C = pcol * up;
    if (R * C * og > (i8 ? OBUF_WORDS_INT8 : OBUF_WORDS_INT16)) {
        err |= STATUS_OUT_OF_RANGE;
        return false;
    }
    if (R * C == 0) return false;
    const post_args_t r = {ab, act, table, ida, i8, zp, zp_id, id_sh, oh, ow, og, oc0, pk, ps, up, R, C};
    a = r;
    return true;
}

// POST's pool-window walk inside a window: the next element (dx fastest, then dy) at ACC offsets c_off (column,
// from the window's x_base) and r_off (row); additions only
static inline void next_window_elem(ap_uint<3> &dx, ap_uint<3> &dy, baddr_t &c_off, baddr_t &r_off, i64 pk, i64 og,
                                    baddr_t owog, baddr_t x_base) {
    if (++dx == pk) {
        dx = 0;
        dy++;
        c_off = x_base;
        r_off += owog;
    } else {
        c_off += og;
    }
}

// POST's output walk after a pixel's last group: the next output pixel (X, then Y), a new source pixel every `up`
// outputs (nearest upsampling: xc, yc count to up) at the window bases x_base / y_base; additions only
static inline void next_post_pixel(ap_uint<12> &X, ap_uint<3> &xc, baddr_t &x_base, ap_uint<12> &Y, ap_uint<3> &yc,
                                   baddr_t &y_base, i64 C, i64 up, baddr_t x_step, baddr_t y_step) {
    if (++X != C) {
        if (++xc == up) {
            xc = 0;
            x_base += x_step;
        }
    } else {
        X = 0;
        xc = 0;
        x_base = 0;
        Y++;
        if (++yc == up) {
            yc = 0;
            y_base += y_step;
        }
    }
}

// the OBUF row and place of the next output word (OBUF_K words of TM lanes per row, config.h)
static inline void obuf_next(baddr_t &orow, ap_uint<8> &oblk) {
    if (oblk == OBUF_K - 1) {
        oblk = 0;
        orow++;
    } else {
        oblk++;
    }
}

// POST: one flattened loop over output pixels (Y, X), groups o and the pool window (dy, dx), TM lanes per cycle;
// nearest upsampling and pooling by counters, the window clipped to the tile by min() on running offsets
static void post_tile(const post_args_t &a, const acc_t acc[2][ACC_WORDS][TM], const prec_t pbuf[PBUF_ROWS][TM],
                      const trec_t tbuf[TBUF_ROWS][TM], elem_t obuf[OBUF_ROWS][OBUF_LANES], fifo<post_msg_t> &p2s,
                      ap_uint<32> &err, ap_uint<32> &iters, ap_uint<24> &words) {
    const int ab = a.ab;
    const bool act = a.act, table = a.table, ida = a.ida, i8 = a.i8;
    const ap_int<17> zp = a.zp, zp_id = a.zp_id;
    const ap_uint<4> id_sh = a.id_sh;
    const i64 oh = a.oh, ow = a.ow, og = a.og, oc0 = a.oc0, pk = a.pk, ps = a.ps, up = a.up, R = a.R, C = a.C;
    const trip_t n = R * C * og * pk * pk;
    const baddr_t owog = ow * og, row_max = (oh - 1) * ow * og, col_max = (ow - 1) * og;
    const baddr_t y_step = ps * ow * og, x_step = ps * og;
    ap_uint<12> Y = 0, X = 0;
    ap_uint<3> yc = 0, xc = 0, dy = 0, dx = 0;
    ap_uint<8> o = 0;
    const ap_uint<16> pb0 = oc0 >> LOG2_TM_PITCH;  // PBUF row of group 0 (lane m's record in lane m's memory)
    ap_uint<16> pb = pb0;                           // of group o
    baddr_t y_base = 0, x_base = 0, r_off = 0, c_off = 0, ob = 0;
    baddr_t orow = 0;                               // OBUF row of word ob (ob >> LOG2_OBUF_K), counted
    ap_uint<8> oblk = 0;                            //   and its place in the row (ob & (OBUF_K - 1))
    elem_t best[TM];
#pragma HLS ARRAY_PARTITION variable=best complete
POST_TILE:
    for (trip_t t = 0; t < n; t++) {
#pragma HLS LOOP_TRIPCOUNT min=1 max=36864
#pragma HLS PIPELINE II=1
#pragma HLS DEPENDENCE variable=obuf inter false
        const bool first = dy == 0 && dx == 0, last = dy == pk - 1 && dx == pk - 1;
        const baddr_t aw = (r_off < row_max ? r_off : row_max) + (c_off < col_max ? c_off : col_max) + o;
    POST_LANES:
        for (int m = 0; m < TM; m++) {
#pragma HLS UNROLL
            const sum_t p = requant(acc[ab][aw][m], param_of(pbuf[pb][m]), act, zp, err);
            const elem_t q0 = clamp_q(p, i8);
            const bool above = ida && p > (i8 ? 127 : 32767);
            const elem_t q = !table ? q0
                           : above ? id_above((ident_t)(p - zp), id_sh, zp_id, i8) : table_lookup(tbuf, m, q0, i8);
            const elem_t b = (first || q > best[m]) ? q : best[m];
            best[m] = b;
        }
    POST_OBUF:
        for (int l = 0; l < OBUF_LANES; l++) {   // lane memory l takes lane l % TM of the words at place l / TM
#pragma HLS UNROLL
            if (last && oblk == l / TM) obuf[orow][l] = best[l % TM];
        }
        iters++;
        // next window element, group, output pixel (upsampling: a new source pixel every `up` outputs)
        if (!last) {
            next_window_elem(dx, dy, c_off, r_off, pk, og, owog, x_base);
            continue;
        }
        dx = 0;
        dy = 0;
        ob++;
        words = ob;
        obuf_next(orow, oblk);
#if !defined(ACCEL_SYNTH) && defined(ACCEL_CSIM_SLOW_POST_US)
        // C-simulation stress: a slow POST, so that the STORE beside it must wait at its words gate
        std::this_thread::sleep_for(std::chrono::microseconds(ACCEL_CSIM_SLOW_POST_US));
#endif
        if ((ob & (POST_MSG_WORDS - 1)) == 0) {   // progress: the OBUF words [0, ob) are written
            post_msg_t m;
            m.words = ob;
            m.done = 0;
            m.err = 0;
            m.iters = 0;
            p2s.write(m);
        }
        if (++o != og) {
            pb++;
        } else {
            o = 0;
            pb = pb0;
            next_post_pixel(X, xc, x_base, Y, yc, y_base, C, up, x_step, y_step);
        }
        r_off = y_base;
        c_off = x_base;
    }
}

// POST: checks and sizes (post_args), then the tile (post_tile)
static void exec_post(const insn_t &x, ap_uint<1> prec, const acc_t acc[2][ACC_WORDS][TM], const prec_t pbuf[PBUF_ROWS][TM],
                      const trec_t tbuf[TBUF_ROWS][TM], elem_t obuf[OBUF_ROWS][OBUF_LANES], fifo<post_msg_t> &p2s,
                      ap_uint<32> &err, ap_uint<32> &iters, ap_uint<24> &words) {
    post_args_t a;
    if (post_args(x, prec, a, err)) post_tile(a, acc, pbuf, tbuf, obuf, p2s, err, iters, words);
}

#endif  // ACCEL_KERNEL_POST_H
