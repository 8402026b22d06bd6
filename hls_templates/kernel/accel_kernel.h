// accel_kernel.h -- static (not rendered): the accelerator's five modules, shared by synthesis and C-simulation.
// Needs the rendered accel.h (isa.h from generator/spec/isa.py, config.h from the board file). The operations are
// in one header per module, each including the one before it: accel_kernel_base.h (instruction fields, DDR checks),
// accel_kernel_pre_exec.h (PRE: its checks, the PRE unit accel_kernel_pre.h), accel_kernel_load.h,
// accel_kernel_compute.h, accel_kernel_post.h, accel_kernel_store.h, accel_kernel_fetch.h
// (tokens, validate, dispatch); this file holds the modules' state and their instruction handlers.
//
// Structure (after TVM-VTA, hardware/xilinx/src/vta.cc): five top functions, each its own IP in Vivado.
//   accel          fetch + control (ap_ctrl_hs, the isa.REGISTERS s_axilite map): checks the program (validate),
//                  sends each module a run descriptor (base registers, buffer sizes), dispatches every instruction
//                  to the command queue of its module, then waits for the three done reports and writes status
//                  and cycles. m_axi: insns only.
//   accel_load     LOAD (DDR -> IBUF / WBUF / PBUF / TBUF), PRE (the camera frame in DDR -> the network input in DDR,
//                  accel_kernel_pre.h), CONFIG; m_axi: its own port (LOAD reads; PRE reads and writes).
//   accel_compute  COMPUTE (IBUF x WBUF -> ACC on the PE array), SYNC, NOP.
//   accel_store    STORE (OBUF -> DDR), END; m_axi: its own write port. Hands each POST (and CONFIG, END) to
//                  accel_post (post_q) and runs the STORE right after it (fetch marks such a POST:
//                  POST_OVERLAP_BIT) while the POST still writes OBUF: a STORE segment is taken only once the
//                  POST has reported its OBUF words written (p2s, every POST_MSG_WORDS words, and at its end), as
//                  rtl/store.sv gates on rtl/post.sv's words_done.
//   accel_post     POST (ACC + PBUF (+ TBUF) -> OBUF).
// load / compute / store / post are free-running (ap_ctrl_none, one instruction per invocation) and synchronise
// only through the four dependency-token streams l2c, c2l, c2s, s2c (depth TOKEN_QUEUE_DEPTH) and store <-> post's
// two streams. IBUF and WBUF (load -> compute), PBUF and TBUF (load -> post), ACC (compute -> post) and OBUF
// (post -> store) are memory ports (ap_memory) onto dual-port RAMs in the block design: exactly one writer module
// and one reader module each. The store module pops a POST's tokens before handing it over and pushes them when
// the post module reports its end, before any later push (program order, as the RTL's store module).
//
// Error status (generator/spec/isa.py STATUS_BITS): fetch's validate() refuses a bad program before anything is
// dispatched (TOKEN_OVERFLOW too: the tokens counted in program order; every stream access is a blocking one);
// each module checks its instructions (OUT_OF_RANGE, ARITH_OVERFLOW) and publishes its
// sticky error bits on the error wire, which every module reads after its pops: once any module has an error no
// instruction executes anywhere (tokens still flow, every module reaches END). A POST's errors reach the store
// module with its end report; a refused POST stops the STORE running beside it. C-simulation also detects a
// deadlock exactly (WATCHDOG, see accel_stream.h) and tokens left at the end (TOKENS_LEFT).
#ifndef ACCEL_KERNEL_H
#define ACCEL_KERNEL_H

#include "accel_kernel_base.h"

// ------------------------------------------------------------------------------------------ the modules' operations
// one header each, every one including the one before it (base <- load <- compute <- post <- store <- fetch), so
// each parses on its own (the rule checker checks each file's own functions)
#include "accel_kernel_fetch.h"

// ------------------------------------------------------------------------------------------ modules
// Each module's state lives across invocations (one instruction per invocation): the run descriptor, its sticky
// error bits and its loop iterations (no precision: each instruction runs at its own prec field's, so layers mix
// int8 and int16). An instruction pops the tokens it waits for, executes unless an error is set anywhere (the error
// wire), publishes its errors, pushes its tokens.
struct module_state_t {
    bool active;
    run_t run;
    ap_uint<32> err, iters;
};

// start of a run (the first command after a done report): latch the run descriptor
static inline void module_begin(module_state_t &s, fifo<run_t> *run) {
    if (s.active) return;
    if (run) s.run = run->read();
    s.active = true;
    s.err = 0;
    s.iters = 0;
}

static inline bool module_end(module_state_t &s, fifo<done_t> &done) {
    done_t d;
    d.err = s.err;
    d.iters = s.iters;
    done.write(d);
    s.active = false;
    return true;
}

static void load_insn(module_state_t &s, const insn_t &x, fifo<token_t> &c2l, fifo<token_t> &l2c,
                      maxi<axi_t> ddr, elem_t ibuf[2][IBUF_DEPTH][TN], elem_t wbuf[2][WBUF_DEPTH][TM][TN],
                      prec_t pbuf[PBUF_ROWS][TM], trec_t tbuf[TBUF_ROWS][TM], err_in_t err_in, err_out_t err_out) {
    if (FH(x, POP_NEXT)) c2l.read();
    const int op = opcode_of(x);
    if (op == OP_LOAD && s.err == 0 && err_peek(err_in) == 0)
        exec_load(x, (ap_uint<1>)F(x, LOAD, PREC), ddr, s.run, ibuf, wbuf, pbuf, tbuf, s.err, s.iters);
    else if (op == OP_PRE && s.err == 0 && err_peek(err_in) == 0)
        exec_pre(x, ddr, s.run, s.err, s.iters);   // (returns with its writes acknowledged)
    s.iters++;
    if (s.err) err_publish(err_out, s.err);
    if (FH(x, PUSH_NEXT)) tok_push(l2c, s.err);
    if (s.err) err_publish(err_out, s.err);
}

static void compute_insn(module_state_t &s, const insn_t &x, fifo<token_t> &l2c, fifo<token_t> &c2l,
                         fifo<token_t> &s2c, fifo<token_t> &c2s, const elem_t ibuf[2][IBUF_DEPTH][TN],
                         const elem_t wbuf[2][WBUF_DEPTH][TM][TN], acc_t acc[2][ACC_WORDS][TM], err_in_t err_in,
                         err_out_t err_out) {
    if (FH(x, POP_PREV)) l2c.read();
    if (FH(x, POP_NEXT)) s2c.read();
    const int op = opcode_of(x);
    if (op == OP_COMPUTE && s.err == 0 && err_peek(err_in) == 0)
        exec_compute(x, (ap_uint<1>)F(x, COMPUTE, PREC), ibuf, wbuf, acc, s.err, s.iters);
    s.iters++;
    if (s.err) err_publish(err_out, s.err);
    if (FH(x, PUSH_PREV)) tok_push(c2l, s.err);
    if (FH(x, PUSH_NEXT)) tok_push(c2s, s.err);
    if (s.err) err_publish(err_out, s.err);
}

// wait for the running POST's end (blocking reads of its remaining progress reports), then push its token (program
// order: before any later push of the store module) and take its errors and iterations
static void post_finish(module_state_t &s, post_link_t &pl, fifo<post_msg_t> &p2s, fifo<token_t> &s2c) {
POST_WAIT:
    while (pl.run) {   // one progress report per iteration (OBUF words / POST_MSG_WORDS, then the end)
#pragma HLS LOOP_TRIPCOUNT min=1 max=513
        const post_msg_t m = p2s.read();
        post_take(pl, m);
    }
    s.err |= pl.err;
    s.iters += pl.iters;
    pl.err = 0;
    pl.iters = 0;
    if (pl.push) tok_push(s2c, s.err);
    pl.push = false;
}

// One store-module instruction. A POST is handed to the post module; without its overlap mark (POST_OVERLAP_BIT,
// set by fetch_run) the store module waits for its end right away, with it the next command is the STORE that runs
// beside it (store_beats gates its segments on the POST's progress) and ends after it. A STORE with pop_prev never
// runs beside a POST (the POST's push may be what it waits for): fetch_run does not mark the POST before it (and a
// running POST is finished first here all the same, as before a POST or END).
static void store_insn(module_state_t &s, post_link_t &pl, const insn_t &x, fifo<token_t> &c2s,
                       fifo<token_t> &s2c, fifo<insn_t> &post_q, fifo<post_msg_t> &p2s, maxi<axi_t> ddr,
                       const elem_t obuf[OBUF_ROWS][OBUF_LANES], err_in_t err_in, err_out_t err_out) {
    const int op = opcode_of(x);
    if (op != OP_STORE || FH(x, POP_PREV)) post_finish(s, pl, p2s, s2c);
    if (FH(x, POP_PREV)) c2s.read();
    const bool go = s.err == 0 && err_peek(err_in) == 0;
    bool handed = false;   // a POST handed to the post module: it pushes its token at its end
    if (op == OP_CONFIG || op == OP_END) {
        post_q.write(x);   // the post module ignores CONFIG / ends its run at END
    } else if (op == OP_POST && go) {
        insn_t y = x;
        y[POST_OVERLAP_BIT] = 0;
        post_q.write(y);
        pl.run = true;
        pl.words = 0;
        pl.push = FH(x, PUSH_PREV) != 0;
        handed = true;
        if (x[POST_OVERLAP_BIT] == 0) post_finish(s, pl, p2s, s2c);   // nothing runs beside it
    } else if (op == OP_STORE && go) {
        exec_store(x, (ap_uint<1>)F(x, STORE, PREC), ddr, s.run, obuf, p2s, pl, s.err, s.iters);
    }
    if (op == OP_STORE) post_finish(s, pl, p2s, s2c);   // the STORE ends after the POST beside it
    s.iters++;
    if (s.err) err_publish(err_out, s.err);
    if (FH(x, PUSH_PREV) && !handed) tok_push(s2c, s.err);
    if (s.err) err_publish(err_out, s.err);
}

// the post module: END ends its run, a POST runs (at its prec field's precision) and reports its end
static void post_insn(module_state_t &s, const insn_t &x, fifo<post_msg_t> &p2s,
                      const acc_t acc[2][ACC_WORDS][TM], const prec_t pbuf[PBUF_ROWS][TM],
                      const trec_t tbuf[TBUF_ROWS][TM], elem_t obuf[OBUF_ROWS][OBUF_LANES], err_out_t err_out) {
    const int op = opcode_of(x);
    if (op == OP_END) {
        s.active = false;
        return;
    }
    if (op == OP_CONFIG) return;
    ap_uint<32> err = 0, iters = 0;
    ap_uint<24> words = 0;
    exec_post(x, (ap_uint<1>)F(x, POST, PREC), acc, pbuf, tbuf, obuf, p2s, err, iters, words);
    s.err |= err;
    if (s.err) err_publish(err_out, s.err);
    post_msg_t m;
    m.words = words;
    m.done = 1;
    m.err = err;
    m.iters = iters;
    p2s.write(m);
}

#endif
