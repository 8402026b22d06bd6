// accel_kernel_compute.h -- static (not rendered), part of accel_kernel.h (the parts include each other in order:
// base <- load <- compute <- post <- store <- fetch): COMPUTE on the PE array (PE_TILE, PE_RMW, BYPASS).
#ifndef ACCEL_KERNEL_COMPUTE_H
#define ACCEL_KERNEL_COMPUTE_H

#include "accel_kernel_load.h"

// ------------------------------------------------------------------------------------------ COMPUTE (PE array)
// One DSP48E2 multiply: 27-bit A port x 18-bit B port -> 45-bit product. int16 mode: A = activation, B = weight.
// int8 mode: A = (x_hi << PACK_SHIFT) + x_lo (two adjacent output pixels), B = the shared weight.
#ifndef ACCEL_SYNTH
unsigned long long accel_dsp_mul_calls = 0;  // C-simulation instrumentation: DSP multiplies issued (compute thread only)
unsigned long long accel_beats_beside_post = 0;  // STORE beats written while the POST before it ran (store thread)
#endif
static inline ap_int<45> dsp_mul(ap_int<27> a, ap_int<18> b) {
#ifndef ACCEL_SYNTH
    accel_dsp_mul_calls++;
#endif
    return a * b;
}

typedef ap_uint<32> baddr_t;  // on-chip buffer word address (and running offsets)
typedef ap_uint<48> trip_t;   // trip count of a flattened loop
typedef ap_int<64> sum_t;     // a PE lane's running sum / a requantization operand (exact, checked for overflow)

// One PE-array step: the TN activations of IBUF word a0 (int8: packed with word a1's, the pair's second pixel,
// when has1) against weight row wa of every output lane: per lane the step's low / high pixel sums ls / hs (int16:
// hs = 0), the DSP48E2 products summed along cascades of PE_CHAIN (rtl/pe_array.sv's chains)
static inline void pe_sums(const elem_t ibuf[2][IBUF_DEPTH][TN], int ib, baddr_t a0, baddr_t a1, bool i8, bool has1,
                           const elem_t wbuf[2][WBUF_DEPTH][TM][TN], int wb, baddr_t wa, sum_t ls[TM], sum_t hs[TM]) {
    ap_int<27> a[TN];
#pragma HLS ARRAY_PARTITION variable=a complete
PE_OPERANDS:
    for (int nn = 0; nn < TN; nn++) {
#pragma HLS UNROLL
        const ap_int<27> x0 = ibuf[ib][a0][nn];
        if (i8) {
            const ap_int<27> x1 = has1 ? (ap_int<27>)ibuf[ib][a1][nn] : (ap_int<27>)0;
            a[nn] = (x1 << PACK_SHIFT) + x0;
        } else {
            a[nn] = x0;
        }
    }
PE_LANES:
    for (int m = 0; m < TM; m++) {
#pragma HLS UNROLL
        // the lane's TN / PE_CHAIN cascade outputs P summed by fields, as rtl/pe_array.sv's adder tree: hi = sum
        // P[47:S] (signed), lo = sum P[S-1:0] (unsigned), bw = sum P[S-1] (the low fields' signs); S = PACK_SHIFT
        ap_int<48> hi = 0;
        ap_uint<32> lo = 0;
        ap_uint<8> bw = 0;
    PE_CASCADES:
        for (int g = 0; g < TN; g += PE_CHAIN) {
#pragma HLS UNROLL
            ap_int<48> p = 0;  // DSP48E2 P register along a cascade of PE_CHAIN DSPs
        PE_DSP:
            for (int j = 0; j < PE_CHAIN; j++) {
#pragma HLS UNROLL
                if (g + j < TN) p += dsp_mul(a[g + j], (ap_int<18>)wbuf[wb][wa][m][g + j]);
            }
            hi += p >> PACK_SHIFT;
            lo += (ap_uint<PACK_SHIFT>)p.range(PACK_SHIFT - 1, 0);
            bw += p[PACK_SHIFT - 1];
        }
        if (i8) {
            // low pixel: the low fields sign-extended (sum lo - bw * 2^S); high pixel: the high fields plus each
            // low field's borrow (sum hi + bw)
            ls[m] = (sum_t)lo - ((sum_t)bw << PACK_SHIFT);
            hs[m] = (sum_t)hi + (sum_t)bw;
        } else {
            ls[m] = ((sum_t)hi << PACK_SHIFT) + (sum_t)lo;
            hs[m] = 0;
        }
    }
}

// COMPUTE's output walk after the last group of a pixel pair: the next P pixels of the row (IBUF word pix, ACC word
// acc_p), or the first of the next row (row, acc_r); additions only
static inline void next_pixels(ap_uint<13> &ox0, baddr_t &pix, baddr_t &row, baddr_t &acc_p, baddr_t &acc_r, i64 P,
                               i64 ow, baddr_t step_xp, baddr_t acc_xp, baddr_t step_y, baddr_t acc_row) {
    ox0 += P;
    pix += step_xp;
    acc_p += acc_xp;
    if (ox0 >= ow) {
        ox0 = 0;
        row += step_y;
        pix = row;
        acc_r += acc_row;
        acc_p = acc_r;
    }
}

// COMPUTE with one tap per output (ig x kh x kw = 1) accumulating into ACC (acc_init = 0): each output word is
// read and written in the same step, so one output pixel per iteration (one read and one write, one per ACC port):
// int8 takes a pair's two pixels in two iterations (the PE array in the first), as the RTL takes two cycles
static void pe_rmw(const elem_t ibuf[2][IBUF_DEPTH][TN], int ib, const elem_t wbuf[2][WBUF_DEPTH][TM][TN], int wb,
                   acc_t acc[2][ACC_WORDS][TM], int ab, bool i8, i64 oh, i64 ow, i64 og, i64 ww0, i64 iw0,
                   baddr_t step_x, baddr_t step_y, sum_t lim, ap_uint<32> &err, ap_uint<32> &iters) {
    const i64 P = i8 ? 2 : 1;
    const trip_t n = oh * ow * og;
    const baddr_t step_xp = P * step_x, acc_xp = P * og, acc_row = ow * og;
    ap_uint<13> ox0 = 0;
    ap_uint<8> o = 0;
    ap_uint<1> ph = 0;   // int8: 0 = the pair's first pixel (and the PE array), 1 = its second
    baddr_t row = iw0, pix = iw0, acc_r = 0, acc_p = 0;
    sum_t hold[TM];      // the second pixel's sums
#pragma HLS ARRAY_PARTITION variable=hold complete
PE_RMW:
    for (trip_t t = 0; t < n; t++) {
#pragma HLS LOOP_TRIPCOUNT min=1 max=65536
#pragma HLS PIPELINE II=1
#pragma HLS DEPENDENCE variable=acc inter false
        const bool has1 = i8 && ox0 + 1 < ow;
        const baddr_t w = acc_p + o + (ph ? (baddr_t)og : (baddr_t)0);
        sum_t ls[TM], hs[TM];
#pragma HLS ARRAY_PARTITION variable=ls complete
#pragma HLS ARRAY_PARTITION variable=hs complete
        if (ph == 0) pe_sums(ibuf, ib, pix, pix + step_x, i8, has1, wbuf, wb, (baddr_t)ww0 + o, ls, hs);
    PE_RMW_LANES:
        for (int m = 0; m < TM; m++) {
#pragma HLS UNROLL
            const sum_t v = ph ? hold[m] : ls[m];
            if (ph == 0) hold[m] = hs[m];
            const sum_t t0 = (sum_t)(acc[ab][w][m] + v);
            if (t0 >= lim || t0 <= -lim) err |= STATUS_ARITH_OVERFLOW;
            acc[ab][w][m] = t0;
        }
        iters++;
        if (ph == 0 && has1) {
            ph = 1;
            continue;
        }
        ph = 0;
        if (++o == og) {
            o = 0;
            next_pixels(ox0, pix, row, acc_p, acc_r, P, ow, step_xp, acc_xp, step_y, acc_row);
        }
    }
}

// a COMPUTE's fields (bit slices of the instruction) and what follows from them once per instruction: the address
// steps (products of fields) and the bound of its precision's accumulator
struct compute_args_t {
    int ab, ib, wb;                   // ACC, IBUF, WBUF banks
    bool init, i8;                    // acc_init (ACC = rather than +=), int8 (prec)
    i64 oh, ow, og, ig, kh, kw, iw0, ww0, K;   // K = ig x kh x kw taps per output
    baddr_t step_x, step_y, row_in;   // IBUF words from a pixel to the next (stride s), a row to the next, of a row
    sum_t lim;                        // an ACC word's bound: 2^(accumulator bits - 1), exclusive
};

// BYPASS's walk after an output word: the next group o (its first channel chb), the next pixel (IBUF word pix),
// the next row; additions only
static inline void next_bypass_word(ap_uint<8> &o, ap_uint<16> &chb, ap_uint<12> &ox, baddr_t &pix, baddr_t &row,
                                    i64 og, i64 ow, baddr_t step_x, baddr_t step_y) {
    chb += TM;
    if (++o == og) {
        o = 0;
        chb = 0;
        pix += step_x;
        if (++ox == ow) {
            ox = 0;
            row += step_y;
            pix = row;
        }
    }
}

// bypass COMPUTE (no PE array): each output word is TM consecutive channels of a pixel (a copy), or with emul the
// product of two operands' channels; one output word per iteration (emul: two)
static void pe_bypass(const insn_t &x, const compute_args_t &c, const elem_t ibuf[2][IBUF_DEPTH][TN],
                      acc_t acc[2][ACC_WORDS][TM], ap_uint<32> &err, ap_uint<32> &iters) {
    const int ab = c.ab, ib = c.ib;
    const bool init = c.init;
    const i64 oh = c.oh, ow = c.ow, og = c.og, ig = c.ig, iw0 = c.iw0;
    const baddr_t step_x = c.step_x, step_y = c.step_y;
    const sum_t lim = c.lim;
    // emul: each output word takes two iterations on the same read path, operand A's lanes (held, minus za),
    // then B's at element b_word * TN further (minus zb) into TM multipliers (18 x 18 bits: one DSP48E2 each)
    const bool emul = F(x, COMPUTE, EMUL) != 0;
    const i64 b0 = emul ? F(x, COMPUTE, B_WORD) * TN : 0;
    if (b0 + og * TM > ig * TN) {
        err |= STATUS_OUT_OF_RANGE;
        return;
    }
    const ap_int<17> za = (ap_int<ISA_COMPUTE_ZA_W>)fld<ISA_COMPUTE_ZA_LO, ISA_COMPUTE_ZA_W>(x);
    const ap_int<17> zb = (ap_int<ISA_COMPUTE_ZB_W>)fld<ISA_COMPUTE_ZB_LO, ISA_COMPUTE_ZB_W>(x);
    const trip_t n = oh * ow * og * (emul ? 2 : 1);
    ap_uint<12> ox = 0;
    ap_uint<8> o = 0;
    ap_uint<1> ph = 0;     // emul: 0 = operand A's iteration, 1 = B's
    ap_uint<16> chb = 0;  // o * TM, by a counter
    ap_int<18> a_lane[TM];
#pragma HLS ARRAY_PARTITION variable=a_lane complete
    baddr_t row = iw0, pix = iw0, aw = 0;
BYPASS:
    for (trip_t t = 0; t < n; t++) {
#pragma HLS LOOP_TRIPCOUNT min=1 max=8192
#pragma HLS PIPELINE II=1
#pragma HLS DEPENDENCE variable=acc inter false
        const bool hold = emul && ph == 0;
        // channels c0 .. c0 + TM - 1 of pixel pix: lane l's first one (row A: word c0 / TN, or the next for the
        // lanes before c0's) and, when TM > TN, its second (row B = A + 1): at most two reads per lane memory
        const ap_uint<18> c0 = chb + (ph ? b0 : 0);
        const baddr_t cw = pix + (baddr_t)(c0 / TN);
        const ap_uint<8> cl = (ap_uint<8>)(c0 % TN);
        elem_t va[TN], vb[TN];
#pragma HLS ARRAY_PARTITION variable=va complete
#pragma HLS ARRAY_PARTITION variable=vb complete
    BYP_READ:
        for (int l = 0; l < TN; l++) {
#pragma HLS UNROLL
            const baddr_t ra = cw + (l < cl ? 1 : 0), rb = ra + 1;   // (rows past the buffer: not used, not read)
            va[l] = ibuf[ib][ra < IBUF_DEPTH ? ra : (baddr_t)0][l];
            vb[l] = TM > TN ? ibuf[ib][rb < IBUF_DEPTH ? rb : (baddr_t)0][l] : (elem_t)0;
        }
    BYP_LANES:
        for (int m = 0; m < TM; m++) {
#pragma HLS UNROLL
            const ap_uint<8> l = (ap_uint<8>)((cl + m) % TN);
            const elem_t v = m < TN ? va[l] : vb[l];
            if (hold) {
                a_lane[m] = v - za;
            } else {
                const sum_t p = emul ? (sum_t)(a_lane[m] * (ap_int<18>)(v - zb)) : (sum_t)v;
                const sum_t tv = init ? p : (sum_t)(acc[ab][aw][m] + p);
                if (tv >= lim || tv <= -lim) err |= STATUS_ARITH_OVERFLOW;
                acc[ab][aw][m] = tv;
            }
        }
        iters++;
        if (hold) {
            ph = 1;
            continue;
        }
        ph = 0;
        aw++;
        next_bypass_word(o, chb, ox, pix, row, og, ow, step_x, step_y);
    }
}

// PE_TILE's tap walk over a pixel's ig x kh x kw taps (kx fastest, then ky, then the input group i), after its
// last back to the first: the IBUF offset toff of the next tap from the pixel's first; additions only
static inline void next_tap(bool last, ap_uint<24> &tap, ap_uint<4> &kx, ap_uint<4> &ky, ap_uint<8> &i, baddr_t &toff,
                            i64 kw, i64 kh, i64 ig, baddr_t ky_step) {
    if (last) {
        tap = 0;
        kx = 0;
        ky = 0;
        i = 0;
        toff = 0;
        return;
    }
    tap++;
    if (++kx == kw) {
        kx = 0;
        if (++ky == kh) {
            ky = 0;
            i++;
            toff = i;
        } else {
            toff += ky_step;
        }
    } else {
        toff += ig;
    }
}

// COMPUTE: the whole tile as one flattened loop, one PE-array step (TN x TM multiplies: TN x TM MACs in int16,
// twice that in int8) per cycle; the loop indices (oy, ox pair, o, i, ky, kx) and every address are counters
// (no multiply or division in the loop). The sums stay in registers across a pixel's ig x kh x kw taps and are
// written to ACC (= or +=) at its last tap; each ACC word is written once per instruction, so there is no
// dependence between iterations through acc, ibuf or wbuf.
static void pe_tile(const compute_args_t &c, const elem_t ibuf[2][IBUF_DEPTH][TN],
                    const elem_t wbuf[2][WBUF_DEPTH][TM][TN], acc_t acc[2][ACC_WORDS][TM], ap_uint<32> &err,
                    ap_uint<32> &iters) {
    const int ab = c.ab, ib = c.ib, wb = c.wb;
    const bool init = c.init, i8 = c.i8;
    const i64 oh = c.oh, ow = c.ow, og = c.og, ig = c.ig, kh = c.kh, kw = c.kw, iw0 = c.iw0, ww0 = c.ww0, K = c.K;
    const baddr_t step_x = c.step_x, step_y = c.step_y, row_in = c.row_in;
    const sum_t lim = c.lim;
    const i64 P = i8 ? 2 : 1;  // output pixels per DSP per cycle
    const i64 nxp = (ow + P - 1) >> (P - 1);
    const trip_t n = oh * nxp * og * K;
    const baddr_t step_xp = P * step_x, acc_xp = P * og, acc_row = ow * og;
    const baddr_t ky_step = row_in - (kw - 1) * ig;  // tap offset: from (ky, kw-1) to (ky+1, 0)
    ap_uint<13> ox0 = 0;
    ap_uint<8> o = 0, i = 0;
    ap_uint<4> ky = 0, kx = 0;
    ap_uint<24> tap = 0;
    baddr_t row = iw0, pix = iw0, toff = 0, wa = ww0, acc_r = 0, acc_p = 0;
    sum_t lo[TM], hi[TM];  // the sums of the low / high pixel, in registers
    sum_t r0[TM], r1[TM];  // the output's ACC words, read at its first tap
#pragma HLS ARRAY_PARTITION variable=lo complete
#pragma HLS ARRAY_PARTITION variable=hi complete
#pragma HLS ARRAY_PARTITION variable=r0 complete
#pragma HLS ARRAY_PARTITION variable=r1 complete
PE_TILE:
    for (trip_t t = 0; t < n; t++) {
#pragma HLS LOOP_TRIPCOUNT min=1 max=2359296
#pragma HLS PIPELINE II=1
#pragma HLS DEPENDENCE variable=acc inter false
        const bool first = tap == 0, last = tap == K - 1;
        const bool has1 = i8 && ox0 + 1 < ow;
        const baddr_t a0 = pix + toff, a1 = a0 + step_x, w0 = acc_p + o, w1 = w0 + og;
        sum_t ls[TM], hs[TM];
#pragma HLS ARRAY_PARTITION variable=ls complete
#pragma HLS ARRAY_PARTITION variable=hs complete
        pe_sums(ibuf, ib, a0, a1, i8, has1, wbuf, wb, wa, ls, hs);
    PE_ACC:
        for (int m = 0; m < TM; m++) {
#pragma HLS UNROLL
            const sum_t l_acc = (first ? (sum_t)0 : lo[m]) + ls[m], h_acc = (first ? (sum_t)0 : hi[m]) + hs[m];
            lo[m] = l_acc;
            hi[m] = h_acc;
            // ACC: the output's words read at its first tap (unless acc_init), written at its last: two accesses
            // per iteration at most, one per port of the true-dual-port ACC (K >= 2 here, or acc_init)
            if (last) {
                const sum_t t0 = (init ? (sum_t)0 : r0[m]) + l_acc;
                if (t0 >= lim || t0 <= -lim) err |= STATUS_ARITH_OVERFLOW;
                acc[ab][w0][m] = t0;
                if (has1) {
                    const sum_t t1 = (init ? (sum_t)0 : r1[m]) + h_acc;
                    if (t1 >= lim || t1 <= -lim) err |= STATUS_ARITH_OVERFLOW;
                    acc[ab][w1][m] = t1;
                }
            } else if (first && !init) {
                r0[m] = acc[ab][w0][m];
                if (has1) r1[m] = acc[ab][w1][m];
            }
        }
        iters++;
        // next tap, or after a pixel's last: next group o, next pixel pair, next row
        wa++;
        next_tap(last, tap, kx, ky, i, toff, kw, kh, ig, ky_step);
        if (last && ++o == og) {
            o = 0;
            wa = ww0;
            next_pixels(ox0, pix, row, acc_p, acc_r, P, ow, step_xp, acc_xp, step_y, acc_row);
        }
    }
}

// COMPUTE: the checks, then the instruction's kind: bypass (pe_bypass), one tap accumulating into ACC (pe_rmw) or
// the PE array over every tap (pe_tile)
static void exec_compute(const insn_t &x, ap_uint<1> prec, const elem_t ibuf[2][IBUF_DEPTH][TN],
                         const elem_t wbuf[2][WBUF_DEPTH][TM][TN], acc_t acc[2][ACC_WORDS][TM], ap_uint<32> &err,
                         ap_uint<32> &iters) {
    const int ab = (int)F(x, COMPUTE, ACC_BANK), ib = (int)F(x, COMPUTE, IBUF_BANK), wb = (int)F(x, COMPUTE, WBUF_BANK);
    const bool init = F(x, COMPUTE, ACC_INIT) != 0, bypass = F(x, COMPUTE, BYPASS) != 0;
    const i64 oh = F(x, COMPUTE, OH), ow = F(x, COMPUTE, OW), og = F(x, COMPUTE, OG), ig = F(x, COMPUTE, IG);
    const i64 kh = F(x, COMPUTE, KH), kw = F(x, COMPUTE, KW), s = F(x, COMPUTE, STRIDE);
    const i64 in_cols = F(x, COMPUTE, IN_COLS), iw0 = F(x, COMPUTE, IBUF_WORD), ww0 = F(x, COMPUTE, WBUF_WORD);
    const bool i8 = prec == PREC_INT8;
    if (oh * ow * og == 0) return;
    const i64 rows_in = (oh - 1) * s + kh;
    const i64 nw = oh * ow * og;
    if ((ow - 1) * s + kw > in_cols || iw0 + rows_in * in_cols * ig > (i8 ? IBUF_WORDS_INT8 : IBUF_WORDS_INT16) ||
        nw > ACC_WORDS) {
        err |= STATUS_OUT_OF_RANGE;
        return;
    }
    const sum_t lim = (sum_t)1 << ((i8 ? ACC_BITS_INT8 : ACC_BITS_INT16) - 1);
    // address steps (products of instruction fields, once per instruction)
    const baddr_t step_x = s * ig, step_y = s * in_cols * ig, row_in = in_cols * ig;
    const i64 K = ig * kh * kw;
    const compute_args_t c = {ab, ib, wb, init, i8, oh, ow, og, ig, kh, kw, iw0, ww0, K, step_x, step_y, row_in, lim};
    if (bypass) {
        pe_bypass(x, c, ibuf, acc, err, iters);
        return;
    }
    if (ww0 + og * ig * kh * kw > (i8 ? WBUF_WORDS_INT8 : WBUF_WORDS_INT16)) {
        err |= STATUS_OUT_OF_RANGE;
        return;
    }
    if (!init && K == 1) {   // every output's one tap reads and writes its ACC words: pe_rmw
        pe_rmw(ibuf, ib, wbuf, wb, acc, ab, i8, oh, ow, og, ww0, iw0, step_x, step_y, lim, err, iters);
        return;
    }
    pe_tile(c, ibuf, wbuf, acc, err, iters);
}

#endif  // ACCEL_KERNEL_COMPUTE_H
