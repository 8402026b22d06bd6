// accel_kernel_fetch.h -- static (not rendered), part of accel_kernel.h (the parts include each other in order: base
// <- load <- compute <- post <- store <- fetch): dependency tokens and the fetch / control block (validate,
// dispatch).
#ifndef ACCEL_KERNEL_FETCH_H
#define ACCEL_KERNEL_FETCH_H

#include "accel_kernel_store.h"

// ------------------------------------------------------------------------------------------ tokens
// push a dependency token: a blocking write (axis streams take blocking accesses only). TOKEN_OVERFLOW is found
// before anything runs, by validate() counting the tokens in program order; a program it accepts never needs more
// than TOKEN_QUEUE_DEPTH tokens in a FIFO, so a push waits at most for the consumer's pops. (err: unused, the
// callers' error bits)
static inline void tok_push(fifo<token_t> &s, ap_uint<32> &err) {
    (void)err;
    s.write(1);
}

// ------------------------------------------------------------------------------------------ fetch
// The program is read in order, one instruction per pipelined iteration: from the ROM, or from DDR as one manual
// burst over its beats (hls::burst_maxi read_request of every beat the pass reads, then read() per beat; the
// adapter cuts it into AXI bursts of max_read_burst_length). An instruction is INSN_BEATS beats (INSN_BITS >
// AXI_BITS: the 128-bit boards take two beats, so the fetch loops run at II = INSN_BEATS, the one read channel's
// rate) or a beat holds INSNS_PER_BEAT instructions (held between them). INSN_BITS and AXI_BITS are powers of two.
#define INSN_BEATS (INSN_BITS > AXI_BITS ? INSN_BITS / AXI_BITS : 1)
#define INSNS_PER_BEAT (AXI_BITS > INSN_BITS ? AXI_BITS / INSN_BITS : 1)
#if INSN_BEATS != 1 && INSN_BEATS != 2 && INSN_BEATS != 4
#error "an instruction is 1, 2 or 4 m_axi beats (the fetch loops' II)"
#endif
// the fetch loops' II: one instruction per INSN_BEATS reads of the one read channel (a constant the PIPELINE
// pragmas name: UG1399, "Using Constants with Pragmas")
static constexpr int FETCH_II = INSN_BEATS;

// beats of the first n instructions
static inline ap_uint<32> insn_beats(ap_uint<32> n) {
    return INSN_BEATS > 1 ? (ap_uint<32>)(n * INSN_BEATS) : (ap_uint<32>)((n + INSNS_PER_BEAT - 1) / INSNS_PER_BEAT);
}

// instruction k of a pass that reads k = 0, 1, 2, ... in order (held: the beat of the instructions that share one)
static inline insn_t next_insn(maxi<axi_t> &insns, bool from_ddr, ap_uint<32> k, axi_t &held) {
    if (!from_ddr) return INSN_ROM[k];
#if INSN_BEATS > 1
    (void)held;
    insn_t x = 0;
FETCH_BEATS:
    for (int b = 0; b < INSN_BEATS; b++) {
#pragma HLS UNROLL
        x.range((b + 1) * AXI_BITS - 1, b * AXI_BITS) = insns.read();
    }
    return x;
#else
    const int sub = (int)(k % INSNS_PER_BEAT);
    if (sub == 0) held = insns.read();
    return (insn_t)held.range(sub * INSN_BITS + INSN_BITS - 1, sub * INSN_BITS);
#endif
}

// Whole-program check before anything runs (as the golden simulator decodes the program first), up to the first
// END: ILLEGAL_OPCODE (opcode, non-zero unused bits, a token flag towards a neighbour the module does not have),
// then CONFIG_MISSING, NO_END, the first CONFIG's ISA_VERSION_MISMATCH / CONFIG_MISMATCH, then TOKEN_OVERFLOW: each
// token FIFO's pushes minus pops counted in program order (each instruction's pops, then its pushes; a pop may come
// before its push: the count goes negative, the module then waits), as generator/codegen/program.py check_tokens
// counts them; a push that finds TOKEN_QUEUE_DEPTH tokens is TOKEN_OVERFLOW. (The modules push with blocking writes:
// the count bounds what a FIFO must hold.)
// The pass reads all n instructions (the burst it requested), checking up to the first END (kend: its index).
static ap_uint<32> validate(maxi<axi_t> insns, bool from_ddr, ap_uint<32> n, ap_uint<32> &kend) {
    bool illegal = false, ended = false, first_config = false, overflow = false;
    ap_uint<32> cfg = 0;
    ap_int<33> l2c = 0, c2l = 0, c2s = 0, s2c = 0;   // tokens in each FIFO, in program order
    axi_t held = 0;
    kend = 0;
    if (from_ddr && n > 0) insns.read_request(0, (size_t)insn_beats(n));
VALIDATE:
    for (ap_uint<32> k = 0; k < n; k++) {
#pragma HLS LOOP_TRIPCOUNT min=1 max=65536
#pragma HLS PIPELINE II=FETCH_II
        const insn_t x = next_insn(insns, from_ddr, k, held);
        if (illegal || ended) continue;   // (the rest of the burst is read, not checked)
        const int op = opcode_of(x);
        const int used = isa_used_bits((unsigned)op);
        const int mod = isa_module((unsigned)op);
        if (used < 0 || (used < INSN_BITS && (x >> used) != 0) ||
            (mod == ISA_MODULE_LOAD && (FH(x, POP_PREV) || FH(x, PUSH_PREV))) ||
            (mod == ISA_MODULE_STORE && (FH(x, POP_NEXT) || FH(x, PUSH_NEXT)))) {
            illegal = true;
            continue;
        }
        const bool pop_p = FH(x, POP_PREV) != 0, pop_n = FH(x, POP_NEXT) != 0;
        const bool push_p = FH(x, PUSH_PREV) != 0, push_n = FH(x, PUSH_NEXT) != 0;
        if (mod == ISA_MODULE_LOAD) {            // pops c2l, pushes l2c
            if (pop_n) c2l--;
            if (push_n) {
                overflow |= l2c >= TOKEN_QUEUE_DEPTH;
                l2c++;
            }
        } else if (mod == ISA_MODULE_COMPUTE) {  // pops l2c and s2c, pushes c2l and c2s
            if (pop_p) l2c--;
            if (pop_n) s2c--;
            if (push_p) {
                overflow |= c2l >= TOKEN_QUEUE_DEPTH;
                c2l++;
            }
            if (push_n) {
                overflow |= c2s >= TOKEN_QUEUE_DEPTH;
                c2s++;
            }
        } else {                                 // store module: pops c2s, pushes s2c
            if (pop_p) c2s--;
            if (push_p) {
                overflow |= s2c >= TOKEN_QUEUE_DEPTH;
                s2c++;
            }
        }
        if (k == 0) first_config = op == OP_CONFIG;
        if (op == OP_CONFIG && cfg == 0) {
            if (F(x, CONFIG, ISA_VERSION) != ISA_VERSION)
                cfg = STATUS_ISA_VERSION_MISMATCH;
            else if (F(x, CONFIG, TN) != TN || F(x, CONFIG, TM) != TM || F(x, CONFIG, CONFIG_ID) != (i64)CONFIG_ID)
                cfg = STATUS_CONFIG_MISMATCH;
        }
        if (op == OP_END) {
            ended = true;
            kend = k;
        }
    }
    if (illegal) return STATUS_ILLEGAL_OPCODE;
    if (n > 0 && !first_config) return STATUS_CONFIG_MISSING;
    if (!ended) return STATUS_NO_END;
    if (cfg != 0) return cfg;
    return overflow ? (ap_uint<32>)STATUS_TOKEN_OVERFLOW : (ap_uint<32>)0;
}

static insn_t strip_flags(const insn_t &x) {
    insn_t y = x;
    y[ISA_NOP_POP_PREV_LO] = 0;
    y[ISA_NOP_POP_NEXT_LO] = 0;
    y[ISA_NOP_PUSH_PREV_LO] = 0;
    y[ISA_NOP_PUSH_NEXT_LO] = 0;
    return y;
}

// The overlap mark of a POST on the store module's command queue: set by fetch_run when the next instruction in
// program order is a STORE without pop_prev (the STORE the store module then runs beside the POST, as rtl/store.sv
// dispatches it); the instruction word's top bit, above the POST format's used bits (validate() refuses a program
// with any of those set), cleared before the POST reaches the post module. Internal to the kernel: no ISA field.
#define POST_OVERLAP_BIT (INSN_BITS - 1)
#if ISA_POST_USED_BITS > POST_OVERLAP_BIT
#error "the POST overlap mark needs an unused bit above the POST format"
#endif

// the body of the fetch / control top: one run. DISPATCH reads the program up to its END (kend, from validate) as a
// second burst, one instruction per iteration, one ahead of the one it dispatches (x: instruction k, nx: k + 1), so
// that a POST goes out with its overlap mark.
static void fetch_run(const run_t &r, maxi<axi_t> insns, ap_uint<32> n_insns, ap_uint<32> fetch_ddr,
                      fifo<insn_t> &lq, fifo<insn_t> &cq, fifo<insn_t> &sq, fifo<run_t> &lrun, fifo<run_t> &srun,
                      fifo<done_t> &ldone, fifo<done_t> &cdone, fifo<done_t> &sdone, ap_uint<32> &err,
                      ap_uint<32> &cycles) {
    const bool from_ddr = fetch_ddr != 0;
    const ap_uint<32> n = from_ddr ? n_insns : (ap_uint<32>)INSN_ROM_LEN;
    ap_uint<32> kend;
    const ap_uint<32> e = validate(insns, from_ddr, n, kend);
    lrun.write(r);
    srun.write(r);
    const insn_t end = (insn_t)OP_END;
    bool ended = false;
    if (e == 0) {   // (validate found an END at kend: instructions 0 .. kend are dispatched)
        axi_t held = 0;
        if (from_ddr) insns.read_request(0, (size_t)insn_beats(kend + 1));
        insn_t x = next_insn(insns, from_ddr, 0, held);
    DISPATCH:
        for (ap_uint<32> k = 0; k <= kend; k++) {
#pragma HLS LOOP_TRIPCOUNT min=1 max=65536
#pragma HLS PIPELINE II=FETCH_II
            const insn_t nx = k + 1 <= kend ? next_insn(insns, from_ddr, k + 1, held) : (insn_t)0;
            const int op = opcode_of(x);
            if (op == OP_CONFIG) {  // the load module owns CONFIG (and its tokens); the others see it too
                lq.write(x);
                cq.write(strip_flags(x));
                sq.write(strip_flags(x));
            } else if (op == OP_END) {  // the store module runs it; load and compute get a stop command
                sq.write(x);
                ended = true;
            } else if (isa_module((unsigned)op) == ISA_MODULE_LOAD) {
                lq.write(x);
            } else if (isa_module((unsigned)op) == ISA_MODULE_COMPUTE) {
                cq.write(x);
            } else if (op == OP_POST) {
                insn_t y = x;
                y[POST_OVERLAP_BIT] = opcode_of(nx) == OP_STORE && FH(nx, POP_PREV) == 0;
                sq.write(y);
            } else {
                sq.write(x);
            }
            x = nx;
        }
    }
    lq.write(end);
    cq.write(end);
    if (!ended) sq.write(end);
    const done_t dl = ldone.read(), dc = cdone.read(), ds = sdone.read();
    err = e | dl.err | dc.err | ds.err;
    const ap_uint<32> il = dl.iters, ic = dc.iters, is = ds.iters;
    cycles = il > ic ? (il > is ? il : is) : (ic > is ? ic : is);
}

#endif  // ACCEL_KERNEL_FETCH_H
