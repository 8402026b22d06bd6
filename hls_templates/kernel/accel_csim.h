// accel_csim.h -- static (not rendered), C-simulation only: the block design in software. The five tops run as
// std::threads over bounded FIFOs of the depths the ISA and the block design state (accel_stream.h): fetch once
// (the host's ap_start), load / compute / store / post free-running (called again and again, as ap_ctrl_none blocks
// restart), stopped when fetch has returned (csim::quit) or when every thread is blocked for good (deadlock:
// WATCHDOG). The buffers are the dual-port memories of the block design, shared by their two modules. The load module's
// port reaches ddr_load, which PRE also writes (the testbench passes one image behind every port).
#ifndef ACCEL_CSIM_H
#define ACCEL_CSIM_H

#include <functional>
#include <thread>

#include "accel_kernel.h"

template <class Body>
static void csim_module_thread(int id, Body body) {
    csim::register_thread(id);
    try {
        for (;;) body();
    } catch (const csim::stop &) {
    }
}

void accel_system(const axi_t *insn_mem, const axi_t *ddr_load, axi_t *ddr_store, const unsigned long long base[4],
                  ap_uint<32> n_insns, ap_uint<32> fetch_ddr, const ap_uint<32> size[4],
                  const unsigned long long pre[ACCEL_PRE_REGS], ap_uint<32> &status, ap_uint<32> &hw_info,
                  ap_uint<32> &config_id, ap_uint<32> &cycles) {
    // on-chip memories of the block design (static: too large for a thread's stack)
    static elem_t ibuf[2][IBUF_DEPTH][TN];
    static elem_t wbuf[2][WBUF_DEPTH][TM][TN];
    static acc_t acc[2][ACC_WORDS][TM];
    static prec_t pbuf[PBUF_ROWS][TM];
    static trec_t tbuf[TBUF_ROWS][TM];
    static elem_t obuf[OBUF_ROWS][OBUF_LANES];
    fifo<insn_t> lq(CMD_QUEUE_DEPTH), cq(CMD_QUEUE_DEPTH), sq(CMD_QUEUE_DEPTH);
    fifo<run_t> lrun(RUN_QUEUE_DEPTH), srun(RUN_QUEUE_DEPTH);
    fifo<done_t> ldone(RUN_QUEUE_DEPTH), cdone(RUN_QUEUE_DEPTH), sdone(RUN_QUEUE_DEPTH);
    fifo<token_t> l2c(TOKEN_QUEUE_DEPTH), c2l(TOKEN_QUEUE_DEPTH), c2s(TOKEN_QUEUE_DEPTH), s2c(TOKEN_QUEUE_DEPTH);
    fifo<insn_t> pq(POST_QUEUE_DEPTH);
    fifo<post_msg_t> p2s(POST_MSG_DEPTH);
    err_wire ew;
    csim::reset(5);
    ap_uint<32> st = 0, cyc = 0, hw = 0, cid = 0;
    bool fetched = false;
    std::thread tl(csim_module_thread<std::function<void()>>, 1, std::function<void()>([&] {
        accel_load(lq, lrun, c2l, l2c, ldone, maxi<axi_t>(const_cast<axi_t *>(ddr_load)), ibuf, wbuf, pbuf, tbuf, ew, ew);
    }));
    std::thread tc(csim_module_thread<std::function<void()>>, 2, std::function<void()>([&] {
        accel_compute(cq, l2c, c2l, s2c, c2s, cdone, ibuf, wbuf, acc, ew, ew);
    }));
    std::thread ts(csim_module_thread<std::function<void()>>, 3, std::function<void()>([&] {
        accel_store(sq, srun, c2s, s2c, sdone, pq, p2s, ddr_store, obuf, ew, ew);
    }));
    std::thread tp(csim_module_thread<std::function<void()>>, 4, std::function<void()>([&] {
        accel_post(pq, p2s, acc, pbuf, tbuf, obuf, ew, ew);
    }));
    std::thread tf([&] {
        csim::register_thread(0);
        try {
            accel((ap_uint<64>)base[0], (ap_uint<64>)base[1], (ap_uint<64>)base[2], (ap_uint<64>)base[3],
                  maxi<axi_t>(const_cast<axi_t *>(insn_mem)), n_insns, fetch_ddr, st, hw, cid, cyc, size[0], size[1], size[2], size[3],
                  ACCEL_PRE_ARGS(pre), lq, cq, sq, lrun, srun, ldone, cdone, sdone);
            fetched = true;
        } catch (const csim::stop &) {
        }
        csim::quit();  // the free-running modules wait for their next command: stop them
    });
    tf.join();
    tl.join();
    tc.join();
    ts.join();
    tp.join();
    hw_info = HW_INFO;  // (the fetch top writes these first; a deadlocked run may not have returned them)
    config_id = CONFIG_ID;
    if (!fetched) {  // every module waits for a token (or a command) that can never come
        status = ew.v.load() | STATUS_WATCHDOG;
        cycles = 0;
        return;
    }
    if (st == 0 && (l2c.harness_count() || c2l.harness_count() || c2s.harness_count() || s2c.harness_count()))
        st |= STATUS_TOKENS_LEFT;
    // (a POST ends before the store module takes its next instruction, END included: nothing is left between them)
    status = st;
    cycles = cyc;
}

#endif
