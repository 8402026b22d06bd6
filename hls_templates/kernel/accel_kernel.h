// accel_kernel.h -- static (not rendered): the accelerator's five modules, shared by synthesis and C-simulation.
// Needs the rendered accel.h (isa.h from generator/spec/isa.py, config.h from the board file).
//
// Structure (after TVM-VTA, hardware/xilinx/src/vta.cc): five top functions, each its own IP in Vivado.
//   accel          fetch + control (ap_ctrl_hs, the isa.REGISTERS s_axilite map): checks the program (validate),
//                  sends each module a run descriptor (base registers, buffer sizes), dispatches every instruction
//                  to the command queue of its module, then waits for the three done reports and writes status
//                  and cycles. m_axi: insns only.
//   accel_load     LOAD (DDR -> IBUF / WBUF / PBUF / TBUF), CONFIG; m_axi: its own read port.
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

#include "accel.h"
#include "insn_rom.h"
#if !defined(ACCEL_SYNTH) && defined(ACCEL_CSIM_SLOW_POST_US)
#include <chrono>
#include <thread>
#endif

typedef long long i64;

// ------------------------------------------------------------------------------------------ instruction fields
template <int LO, int W>
static inline ap_uint<W> fld(const insn_t &x) {
    return x.range(LO + W - 1, LO);
}
#define F(x, OP, NAME) ((i64)fld<ISA_##OP##_##NAME##_LO, ISA_##OP##_##NAME##_W>(x).to_uint64())
#define FH(x, NAME) F(x, NOP, NAME)  // header fields sit at the same bits in every format

static inline int opcode_of(const insn_t &x) { return (int)FH(x, OPCODE); }

// ------------------------------------------------------------------------------------------ DDR access
// a LOAD / STORE touching bytes [off, end) of base register sel: inside its buffer?
static inline bool ddr_in_range(const run_t &r, int sel, i64 end) { return end <= (i64)r.size[sel].to_uint64(); }

static inline i64 ddr_base(const run_t &r, int sel) { return (i64)r.base[sel].to_uint64(); }

#define PARAM_FIELD(rec, NAME) \
    (rec).range(PARAM_##NAME##_OFFSET * 8 + PARAM_##NAME##_BYTES * 8 - 1, PARAM_##NAME##_OFFSET * 8)

// ------------------------------------------------------------------------------------------ LOAD
typedef ap_int<34> rel_t;     // byte of a beat relative to the start of a segment (negative before it)
typedef ap_uint<32> nbytes_t;  // bytes of one segment
typedef ap_uint<32> flat_t;    // element index into a bank (word * lanes + lane)

static inline ap_uint<8> beat_byte(const axi_t &w, int j) { return w.range((j << 3) + 7, j << 3); }

#if AXI_BYTES < PARAM_RECORD_BYTES
#error "the LOAD beat window holds two beats: a parameter record must fit in one"
#endif

// The segments of a LOAD / STORE walked beat by beat in one flattened loop (one iteration per beat of every
// segment): the segment start (byte address, buffer flat index) and the beat counters advance by additions only
// (pixel stride / row stride, the buffer steps precomputed by the caller), the beat span of the next segment by
// shifts; no division, modulo or multiply in the loop.
struct seg_walk {
    addr_t src_row, src;       // DDR byte address of the current row's first segment / of the current segment
    flat_t f_row, f;           // buffer flat index of the same
    addr_t b, b_last;          // current beat, last beat of the current segment
    rel_t rel;                 // byte of the current beat's lane 0 relative to the segment start
    ap_uint<32> q, r;          // segment column / row
};

static inline void seg_start(seg_walk &w, nbytes_t nbytes) {
    w.b = w.src >> AXI_LOG2_BYTES;
    w.b_last = (w.src + nbytes - 1) >> AXI_LOG2_BYTES;
    w.rel = -(rel_t)(w.src & (AXI_BYTES - 1));
}

static inline void seg_init(seg_walk &w, addr_t base, flat_t f0, nbytes_t nbytes) {
    w.src_row = base;
    w.src = base;
    w.f_row = f0;
    w.f = f0;
    w.q = 0;
    w.r = 0;
    seg_start(w, nbytes);
}

// advance one beat; returns false after the last beat of the last segment
static inline bool seg_next(seg_walk &w, nbytes_t nbytes, ap_uint<32> seg_cols, ap_uint<32> seg_rows, addr_t ps,
                            addr_t rs, flat_t step, flat_t row_step) {
    if (w.b != w.b_last) {
        w.b++;
        w.rel += AXI_BYTES;
        return true;
    }
    if (w.q + 1 != seg_cols) {
        w.q++;
        w.src += ps;
        w.f += step;
    } else {
        if (w.r + 1 == seg_rows) return false;
        w.r++;
        w.q = 0;
        w.src_row += rs;
        w.f_row += row_step;
        w.src = w.src_row;
        w.f = w.f_row;
    }
    seg_start(w, nbytes);
    return true;
}

// The read requests of a LOAD: one burst request (hls::burst_maxi read_request) per segment, issued by a second walk
// over the segments ahead of the beats: LOAD_AHEAD requests before the first beat is read (the prologue), then one
// more each time the beat walk finishes a segment, so up to LOAD_AHEAD segments are in flight and the DDR read
// latency is paid once per LOAD, as the RTL's 32 bursts in flight (rtl/load_rd.sv). LOAD_AHEAD stays below the
// port's num_read_outstanding (accel.cpp), so a request never waits for the adapter's queue while the beat loop
// (the only reader) waits for it.
#define LOAD_AHEAD 32
struct req_walk {
    seg_walk w;
    bool more;                // segments left to request
    ap_uint<8> in_flight;     // requested, not yet fully read
};

static inline void req_issue(maxi<axi_t> &ddr, req_walk &q, nbytes_t nbytes, ap_uint<32> seg_cols,
                             ap_uint<32> seg_rows, addr_t ps, addr_t rs) {
    ddr.read_request((size_t)q.w.b, (size_t)(q.w.b_last - q.w.b + 1));
    q.in_flight++;
    q.w.b = q.w.b_last;   // (the next seg_next moves to the next segment)
    q.more = seg_next(q.w, nbytes, seg_cols, seg_rows, ps, rs, 0, 0);
}

// the prologue: the first LOAD_AHEAD segments' requests (or all of them)
static inline void req_prime(maxi<axi_t> &ddr, req_walk &q, const seg_walk &w, nbytes_t nbytes, ap_uint<32> seg_cols,
                             ap_uint<32> seg_rows, addr_t ps, addr_t rs) {
    q.w = w;
    q.more = true;
    q.in_flight = 0;
REQ_PRIME:
    for (int k = 0; k < LOAD_AHEAD; k++) {
#pragma HLS PIPELINE II=1
        if (!q.more) break;
        req_issue(ddr, q, nbytes, seg_cols, seg_rows, ps, rs);
    }
}

// the beat walk finished a segment: one more request if any is left
static inline void req_refill(maxi<axi_t> &ddr, req_walk &q, nbytes_t nbytes, ap_uint<32> seg_cols,
                              ap_uint<32> seg_rows, addr_t ps, addr_t rs) {
    q.in_flight--;
    if (q.more) req_issue(ddr, q, nbytes, seg_cols, seg_rows, ps, rs);
}

#if (TN & (TN - 1)) != 0
#error "TN must be a power of two (IBUF lanes, WBUF lane groups)"
#endif
// LOAD takes a beat's complete elements in chunks of at most TN (one chunk per cycle), so each lane memory takes
// at most one element per cycle: one chunk per beat when AXI_BYTES <= TN (every board file), else up to LOAD_CHUNKS
#define LOAD_CHUNKS ((AXI_BYTES + TN - 1) / TN)
#if TM < 2
#error "WBUF: a beat touches at most two lane groups, which must be different memories (TM >= 2)"
#endif
#if TM > 2 * TN
#error "bypass COMPUTE: Tm channels of a pixel must lie in at most two rows of each IBUF lane memory (TM <= 2 TN)"
#endif
#define LOAD_RECS (AXI_BYTES / PARAM_RECORD_BYTES)   // parameter records a beat completes (at most)

// The elements a beat completes, chunk `done / TN` of them, in lane order: the beat (with the previous one: an int16
// element's low byte may sit in it) shifted so that the chunk's first element starts at bit 0 (one barrel shift of
// the two-beat window), then rotated by that element's lane l0 (lane j takes element (j - l0) mod TN): slot[j] is
// lane j's value, ok[j] whether lane j takes an element. f_lo is the buffer flat index of the chunk's first element;
// `left` is true when the beat has elements after this chunk. rtl/load_wr.sv does the same rotation.
static inline void load_lanes(const axi_t &cur, const axi_t &prev, rel_t rel, nbytes_t nbytes, flat_t f0, bool i16,
                              ap_uint<8> done, flat_t &f_lo, elem_t slot[TN], bool ok[TN], bool &left) {
    const rel_t lo = rel < 0 ? (rel_t)0 : rel;                                          // first byte of the segment in the beat
    const rel_t end = rel + AXI_BYTES < (rel_t)nbytes ? (rel_t)(rel + AXI_BYTES) : (rel_t)nbytes;   // past its last
    const rel_t e_lo = (i16 ? (rel_t)(lo >> 1) : lo) + done, e_end = i16 ? (rel_t)(end >> 1) : end;   // this chunk's
    const ap_int<8> all = e_end > e_lo ? (ap_int<8>)(e_end - e_lo) : (ap_int<8>)0;           // (<= AXI_BYTES)
    const ap_int<8> cnt = all > TN ? (ap_int<8>)TN : all;
    left = LOAD_CHUNKS > 1 && all > TN;
    // the window's byte of element e_lo's low byte: int8 AXI_BYTES + e_lo - rel, int16 AXI_BYTES + 2 e_lo - rel (>= AXI_BYTES - 1)
    const ap_uint<AXI_LOG2_BYTES + 2> at = (ap_uint<AXI_LOG2_BYTES + 2>)(AXI_BYTES + (i16 ? (rel_t)(e_lo << 1) : e_lo) - rel);
    const ap_uint<2 * AXI_BITS> win = (cur, prev);
    const ap_uint<2 * AXI_BITS> al = win >> ((ap_uint<16>)at << 3);
    f_lo = f0 + (flat_t)e_lo;
    const ap_uint<8> l0 = (ap_uint<8>)(f_lo % TN);
    elem_t el[TN];
#pragma HLS ARRAY_PARTITION variable=el complete
LOAD_SLOTS:
    for (int k = 0; k < TN; k++) {
#pragma HLS UNROLL
        if (k < AXI_BYTES)   // (int16: elements k < AXI_BYTES / 2 + 1 only are ever complete)
            el[k] = i16 ? (elem_t)(ap_int<16>)al.range(16 * k + 15, 16 * k) : (elem_t)(ap_int<8>)al.range(8 * k + 7, 8 * k);
        else
            el[k] = 0;
    }
LOAD_ROTATE:
    for (int j = 0; j < TN; j++) {
#pragma HLS UNROLL
        const ap_uint<8> k = (ap_uint<8>)((j - l0) & (TN - 1));
        slot[j] = el[k];
        ok[j] = (ap_int<8>)k < cnt;
    }
}

// LOAD into IBUF / WBUF: every beat of every segment in one pipelined loop on the module's fixed pointer (a read
// request per beat, consecutive within a segment: num_read_outstanding = 64 in flight across segments, so
// the read latency is paid once per instruction, as with the RTL's 32 bursts in flight), a whole beat per cycle
// unpacked into the lanes of the elements it completes (an int16 element straddling two beats takes its low byte
// from the previous beat: a two-beat window; never across segments, whose first element starts in their first
// beat). The beat's elements (at most TN, consecutive from f_lo) are rotated into lane order (load_lanes), so each
// lane memory is written at most once per beat: IBUF lane j at row f_lo / TN, or the next row for the lanes before
// f_lo's lane; WBUF lane group m (one memory per bank and group) at the row of the group f_lo falls in, or of the
// group after it (the next word when f_lo's group is the last of its word), with the lanes of each as a mask.
static void load_beats(maxi<axi_t> ddr, seg_walk w, ap_uint<32> max_beats, nbytes_t nbytes, ap_uint<32> seg_cols,
                       ap_uint<32> seg_rows, addr_t ps, addr_t rs, flat_t step, flat_t row_step, bool i16, bool is_w,
                       ap_uint<1> bank,
                       elem_t ibuf[2][IBUF_DEPTH][TN], elem_t wbuf[2][WBUF_DEPTH][TM][TN], ap_uint<32> &iters) {
    axi_t prev = 0, cur = 0;
    ap_uint<8> done = 0;   // elements of the current beat written by its earlier chunks
    bool more = true;
    req_walk q;
    req_prime(ddr, q, w, nbytes, seg_cols, seg_rows, ps, rs);
LOAD_BEATS:
    for (ap_uint<32> n = 0; n < max_beats && more; n++) {
#pragma HLS LOOP_TRIPCOUNT min=1 max=16384
#pragma HLS PIPELINE II=1
#pragma HLS DEPENDENCE variable=ibuf inter false
#pragma HLS DEPENDENCE variable=wbuf inter false
        if (done == 0) cur = ddr.read();
        elem_t v[TN];
        bool ok[TN], left;
#pragma HLS ARRAY_PARTITION variable=v complete
#pragma HLS ARRAY_PARTITION variable=ok complete
        flat_t f_lo;
        load_lanes(cur, prev, w.rel, nbytes, w.f, i16, done, f_lo, v, ok, left);
        const ap_uint<8> l0 = (ap_uint<8>)(f_lo % TN);
        if (!is_w) {
            const flat_t r0 = f_lo / TN;
        LOAD_IBUF:
            for (int j = 0; j < TN; j++) {
#pragma HLS UNROLL
                if (ok[j]) ibuf[bank][j >= l0 ? r0 : (flat_t)(r0 + 1)][j] = v[j];
            }
        } else {
            // f_lo's word and lane group; the group after it (elements >= TN * TM of a word: none, dropped)
            const flat_t w0 = f_lo >> LOG2_WBUF_PITCH;
            const ap_uint<LOG2_WBUF_PITCH + 1> g0 = (f_lo & (WBUF_PITCH - 1)) / TN;
            const bool wrap = g0 + 1 == WBUF_PITCH / TN;
            const ap_uint<LOG2_WBUF_PITCH + 1> g1 = wrap ? (ap_uint<LOG2_WBUF_PITCH + 1>)0 : (ap_uint<LOG2_WBUF_PITCH + 1>)(g0 + 1);
            const flat_t w1 = wrap ? (flat_t)(w0 + 1) : w0;
        LOAD_WBUF:
            for (int m = 0; m < TM; m++) {
#pragma HLS UNROLL
                const bool at0 = g0 == m, at1 = g1 == m;
                const flat_t row = at0 ? w0 : w1;
            LOAD_WBUF_LANES:
                for (int j = 0; j < TN; j++) {
#pragma HLS UNROLL
                    if (ok[j] && ((at0 && j >= l0) || (at1 && j < l0))) wbuf[bank][row][m][j] = v[j];
                }
            }
        }
        iters++;
        if (left) {   // (never when AXI_BYTES <= TN)
            done += TN;
            continue;
        }
        done = 0;
        prev = cur;
        if (w.b == w.b_last) req_refill(ddr, q, nbytes, seg_cols, seg_rows, ps, rs);
        more = seg_next(w, nbytes, seg_cols, seg_rows, ps, rs, step, row_step);
    }
}

// LOAD into PBUF (TBUF): 16-byte records into lane memory e % TM_PITCH, row e / TM_PITCH, of record e = f, f + 1, ...
// of each segment (lanes >= TM: none), every beat of every segment in one pipelined loop as load_beats. A beat
// completes at most LOAD_RECS consecutive records (the first at the beat's byte jf, its last byte); the window
// shifted to the first one's first byte gives them side by side; lane m takes the record whose lane is m (at most
// one: LOAD_RECS < TM), so each lane memory is written at most once per beat.
static void load_param_beats(maxi<axi_t> ddr, seg_walk w, ap_uint<32> max_beats, nbytes_t nbytes, ap_uint<32> seg_cols,
                             ap_uint<32> seg_rows, addr_t ps, addr_t rs, flat_t step, flat_t row_step, bool is_t,
                             prec_t pbuf[PBUF_ROWS][TM], trec_t tbuf[TBUF_ROWS][TM], ap_uint<32> &iters) {
    axi_t prev = 0;
    bool more = true;
    req_walk q;
    req_prime(ddr, q, w, nbytes, seg_cols, seg_rows, ps, rs);
PBUF_BEATS:
    for (ap_uint<32> n = 0; n < max_beats && more; n++) {
#pragma HLS LOOP_TRIPCOUNT min=1 max=1024
#pragma HLS PIPELINE II=1
#pragma HLS DEPENDENCE variable=pbuf inter false
#pragma HLS DEPENDENCE variable=tbuf inter false
        const axi_t cur = ddr.read();
        const ap_uint<2 * AXI_BITS> win = (cur, prev);
        // the beat's first record-completing byte jf (rel = 15 mod 16), and the window shifted to its record's start
        const ap_uint<4> jf = (ap_uint<4>)(PARAM_RECORD_BYTES - 1 - (w.rel & (PARAM_RECORD_BYTES - 1)));
        const ap_uint<AXI_LOG2_BYTES + 2> at = (ap_uint<AXI_LOG2_BYTES + 2>)(AXI_BYTES + jf - (PARAM_RECORD_BYTES - 1));
        const ap_uint<2 * AXI_BITS> al = win >> ((ap_uint<16>)at << 3);
        const rel_t rel0 = w.rel + jf;                             // segment byte of the first record's last byte
        const ap_uint<16> e0 = (ap_uint<16>)w.f + (ap_uint<16>)(rel0 >> 4);   // its record: row * TM_PITCH + lane
        bool ok[LOAD_RECS];
        ap_uint<16> row[LOAD_RECS], lane[LOAD_RECS];
#pragma HLS ARRAY_PARTITION variable=ok complete
#pragma HLS ARRAY_PARTITION variable=row complete
#pragma HLS ARRAY_PARTITION variable=lane complete
    PBUF_RECS:
        for (int r = 0; r < LOAD_RECS; r++) {
#pragma HLS UNROLL
            const rel_t rel = rel0 + r * PARAM_RECORD_BYTES;
            const ap_uint<16> e = e0 + r;
            ok[r] = rel >= 0 && rel < (rel_t)nbytes;
            row[r] = e >> LOG2_TM_PITCH;
            lane[r] = e & (TM_PITCH - 1);
        }
    PBUF_LANES:
        for (int m = 0; m < TM; m++) {
#pragma HLS UNROLL
            bool hit = false;
            ap_uint<16> at_row = 0;
            trec_t rec = 0;
            for (int r = 0; r < LOAD_RECS; r++) {
#pragma HLS UNROLL
                if (ok[r] && lane[r] == m) {
                    hit = true;
                    at_row = row[r];
                    rec = al.range(128 * r + 127, 128 * r);
                }
            }
            if (hit) {
                if (is_t)
                    tbuf[at_row][m] = rec;
                else
                    pbuf[at_row][m] = rec;
            }
        }
        prev = cur;
        iters++;
        if (w.b == w.b_last) req_refill(ddr, q, nbytes, seg_cols, seg_rows, ps, rs);
        more = seg_next(w, nbytes, seg_cols, seg_rows, ps, rs, step, row_step);
    }
}

// LOAD: checks, then the transfer cut into segments: the whole transfer when rows and pixels are contiguous in
// DDR and in the buffer, else one segment per contiguous row, else one per pixel run; all segments' beats in one
// flattened pipelined loop (load_beats / load_param_beats)
static void exec_load(const insn_t &x, ap_uint<1> prec, maxi<axi_t> ddr, const run_t &run,
                      elem_t ibuf[2][IBUF_DEPTH][TN], elem_t wbuf[2][WBUF_DEPTH][TM][TN], prec_t pbuf[PBUF_ROWS][TM],
                      trec_t tbuf[TBUF_ROWS][TM], ap_uint<32> &err, ap_uint<32> &iters) {
    const int buf = (int)F(x, LOAD, BUF), bank = (int)F(x, LOAD, BANK), sel = (int)F(x, LOAD, BASE_REG);
    const i64 off0 = F(x, LOAD, DDR_OFFSET), rows = F(x, LOAD, ROWS), cols = F(x, LOAD, COLS);
    const i64 elems = F(x, LOAD, ELEMS), rs = F(x, LOAD, ROW_STRIDE), ps = F(x, LOAD, PIX_STRIDE);
    const i64 dst_word = F(x, LOAD, DST_WORD), dst_elem = F(x, LOAD, DST_ELEM), pitch = F(x, LOAD, DST_PITCH);
    if (rows * cols * elems == 0) return;  // an empty transfer: no access, nothing checked
    const bool is_t = buf == BUF_TBUF, is_p = buf == BUF_PBUF || is_t, is_w = buf == BUF_WBUF, i16 = prec != PREC_INT8;
    const i64 run_bytes = is_p ? elems * PARAM_RECORD_BYTES : (i16 ? 2 * elems : elems);
    if (!ddr_in_range(run, sel, off0 + (rows - 1) * rs + (cols - 1) * ps + run_bytes)) {
        err |= STATUS_OUT_OF_RANGE;
        return;
    }
    // elements each pixel advances in the buffer
    i64 lanes = 1, step = elems;
    if (is_p) {
        if (dst_word + rows * cols * elems > (is_t ? TBUF_INDEX : PBUF_INDEX)) {
            err |= STATUS_OUT_OF_RANGE;
            return;
        }
    } else if (buf == BUF_IBUF || is_w) {
        lanes = is_w ? WBUF_PITCH : TN;
        step = pitch * lanes;
        const i64 words = !is_w ? (i16 ? IBUF_WORDS_INT16 : IBUF_WORDS_INT8) : (i16 ? WBUF_WORDS_INT16 : WBUF_WORDS_INT8);
        if ((dst_word + (rows * cols - 1) * pitch) * lanes + dst_elem + elems > words * lanes) {
            err |= STATUS_OUT_OF_RANGE;
            return;
        }
    } else {
        err |= STATUS_OUT_OF_RANGE;
        return;
    }
    const bool whole_px = ps == run_bytes && step == elems;           // a row is one contiguous run
    const bool whole_rows = whole_px && rs == cols * ps;               // the transfer is one contiguous run
    const i64 seg_rows = whole_rows ? 1 : rows, seg_cols = whole_px ? 1 : cols;
    const i64 seg_bytes = run_bytes * (whole_px ? cols : 1) * (whole_rows ? rows : 1);
    const i64 base = ddr_base(run, sel) + off0;
    // the loop's bound: at most ceil(bytes / beat) + 1 beats per segment (it ends after the last segment's last beat)
    // (IBUF / WBUF: times the chunks of a beat)
    const i64 mb = seg_rows * seg_cols * (((seg_bytes + AXI_BYTES - 1) >> AXI_LOG2_BYTES) + 1) * (is_p ? 1 : LOAD_CHUNKS);
    const ap_uint<32> max_beats = mb > 0xFFFFFFFFLL ? (ap_uint<32>)0xFFFFFFFFu : (ap_uint<32>)mb;
    seg_walk w;
    seg_init(w, (addr_t)base, (flat_t)(is_p ? dst_word : dst_word * lanes + dst_elem), (nbytes_t)seg_bytes);
    if (is_p)
        load_param_beats(ddr, w, max_beats, (nbytes_t)seg_bytes, (ap_uint<32>)seg_cols, (ap_uint<32>)seg_rows,
                         (addr_t)ps, (addr_t)rs, (flat_t)step, (flat_t)(step * cols), is_t, pbuf, tbuf, iters);
    else
        load_beats(ddr, w, max_beats, (nbytes_t)seg_bytes, (ap_uint<32>)seg_cols, (ap_uint<32>)seg_rows, (addr_t)ps,
                   (addr_t)rs, (flat_t)step, (flat_t)(step * cols), i16, is_w, (ap_uint<1>)bank, ibuf, wbuf, iters);
}

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

// COMPUTE: the whole tile as one flattened loop, one PE-array step (TN x TM multiplies: TN x TM MACs in int16,
// twice that in int8) per cycle; the loop indices (oy, ox pair, o, i, ky, kx) and every address are counters
// (no multiply or division in the loop). The sums stay in registers across a pixel's ig x kh x kw taps and are
// written to ACC (= or +=) at its last tap; each ACC word is written once per instruction, so there is no
// dependence between iterations through acc, ibuf or wbuf.
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
    if (bypass) {
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
        return;
    }
    if (ww0 + og * ig * kh * kw > (i8 ? WBUF_WORDS_INT8 : WBUF_WORDS_INT16)) {
        err |= STATUS_OUT_OF_RANGE;
        return;
    }
    const i64 P = i8 ? 2 : 1;  // output pixels per DSP per cycle
    const i64 nxp = (ow + P - 1) >> (P - 1);
    const i64 K = ig * kh * kw;
    const trip_t n = oh * nxp * og * K;
    const baddr_t step_xp = P * step_x, acc_xp = P * og, acc_row = ow * og;
    const baddr_t ky_step = row_in - (kw - 1) * ig;  // tap offset: from (ky, kw-1) to (ky+1, 0)
    ap_uint<13> ox0 = 0;
    ap_uint<8> o = 0, i = 0;
    ap_uint<4> ky = 0, kx = 0;
    ap_uint<24> tap = 0;
    baddr_t row = iw0, pix = iw0, toff = 0, wa = ww0, acc_r = 0, acc_p = 0;
    if (!init && K == 1) {   // every output's one tap reads and writes its ACC words: pe_rmw
        pe_rmw(ibuf, ib, wbuf, wb, acc, ab, i8, oh, ow, og, ww0, iw0, step_x, step_y, lim, err, iters);
        return;
    }
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
        // next tap (kx fastest, then ky, then i), next group o, next pixel pair, next row
        wa++;
        if (last) {
            tap = 0;
            kx = 0;
            ky = 0;
            i = 0;
            toff = 0;
            if (++o == og) {
                o = 0;
                wa = ww0;
                next_pixels(ox0, pix, row, acc_p, acc_r, P, ow, step_xp, acc_xp, step_y, acc_row);
            }
        } else {
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
    }
}

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

static elem_t requant(const acc_t &a, const param_t &p, bool act, const ap_int<17> &zp, bool i8, ap_uint<32> &err) {
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
    const sum_t q = (rnd >> s) + zp;
    const sum_t qmax = i8 ? 127 : 32767, qmin = i8 ? -128 : -32768;
    return q > qmax ? (elem_t)qmax : q < qmin ? (elem_t)qmin : (elem_t)q;
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

// POST: one flattened loop over output pixels (Y, X), groups o and the pool window (dy, dx), TM lanes per cycle;
// nearest upsampling and pooling by counters, the window clipped to the tile by min() on running offsets
static void exec_post(const insn_t &x, ap_uint<1> prec, const acc_t acc[2][ACC_WORDS][TM], const prec_t pbuf[PBUF_ROWS][TM],
                      const trec_t tbuf[TBUF_ROWS][TM], elem_t obuf[OBUF_DEPTH][TM], fifo<post_msg_t> &p2s,
                      ap_uint<32> &err, ap_uint<32> &iters, ap_uint<24> &words) {
    const int ab = (int)F(x, POST, ACC_BANK);
    const i64 oh = F(x, POST, OH), ow = F(x, POST, OW), og = F(x, POST, OG), oc0 = F(x, POST, PBUF_OC);
    const bool act = (F(x, POST, ACT) & ACT_NEG_MULT) != 0, table = (F(x, POST, ACT) & ACT_TABLE) != 0;
    const i64 pool_k = F(x, POST, POOL_K), pool_s = F(x, POST, POOL_S), up_f = F(x, POST, UP);
    const ap_int<17> zp = (ap_int<ISA_POST_ZP_OUT_W>)fld<ISA_POST_ZP_OUT_LO, ISA_POST_ZP_OUT_W>(x);
    const i64 out_rows = F(x, POST, OUT_ROWS), out_cols = F(x, POST, OUT_COLS);
    const bool i8 = prec == PREC_INT8;
    if (oh * ow * og == 0) return;
    if (oh * ow * og > ACC_WORDS || (oc0 & (TM_PITCH - 1)) != 0 || oc0 + (og - 1) * TM_PITCH + TM - 1 >= PBUF_INDEX) {
        err |= STATUS_OUT_OF_RANGE;
        return;
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
        return;
    }
    if (R * C == 0) return;
    const trip_t n = R * C * og * pk * pk;
    const baddr_t owog = ow * og, row_max = (oh - 1) * ow * og, col_max = (ow - 1) * og;
    const baddr_t y_step = ps * ow * og, x_step = ps * og;
    ap_uint<12> Y = 0, X = 0;
    ap_uint<3> yc = 0, xc = 0, dy = 0, dx = 0;
    ap_uint<8> o = 0;
    const ap_uint<16> pb0 = oc0 >> LOG2_TM_PITCH;  // PBUF row of group 0 (lane m's record in lane m's memory)
    ap_uint<16> pb = pb0;                           // of group o
    baddr_t y_base = 0, x_base = 0, r_off = 0, c_off = 0, ob = 0;
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
            const elem_t q0 = requant(acc[ab][aw][m], param_of(pbuf[pb][m]), act, zp, i8, err);
            const elem_t q = table ? table_lookup(tbuf, m, q0, i8) : q0;
            const elem_t b = (first || q > best[m]) ? q : best[m];
            best[m] = b;
            if (last) obuf[ob][m] = b;
        }
        iters++;
        // next window element, group, output pixel (upsampling: a new source pixel every `up` outputs)
        if (!last) {
            if (++dx == pk) {
                dx = 0;
                dy++;
                c_off = x_base;
                r_off += owog;
            } else {
                c_off += og;
            }
            continue;
        }
        dx = 0;
        dy = 0;
        ob++;
        words = ob;
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
        r_off = y_base;
        c_off = x_base;
    }
}

// ------------------------------------------------------------------------------------------ STORE
// A beat is built from OBUF as rtl/store.sv builds it: every lane memory read once (lane m: a constant after
// unrolling, no runtime index into the partitioned lane dimension), then the TM lane values rotated into the beat's
// element order (a barrel rotation by the start lane: muxes on registers). A beat spans at most AXI_BYTES elements
// (int8) or AXI_BYTES / 2 + 1 (int16 starting at an odd byte): with AXI_BYTES <= TM (every board synthesized) that
// is at most TM consecutive (word, lane) positions, one per lane memory, in row gw (lanes >= the start lane gl) or
// gw + 1 (lanes below it). The small test boards (AXI_BYTES > TM: C-simulation and the estimator's tests) read each
// lane memory OBUF_WRAPS times per beat, rows gw + c (or gw + 1 + c), c < OBUF_WRAPS, each round rotated alike: the
// port analysis then finds STORE_BEATS at II=OBUF_WRAPS there (no #error: those boards are parsed as for synthesis).
// An OBUF position (word, lane) of an element, kept without a division by Tm (Tm need not be a power of two:
// 24, 40, 48, 56): advanced by less than OBUF_WRAPS x Tm lanes at a time, each wrap one compare (as the RTL's
// STORE walks (row, byte) incrementally)
#define OBUF_WRAPS (1 + (AXI_BYTES - 1) / TM)
typedef ap_int<34> oword_t;   // OBUF word (negative before a segment's first element)
typedef ap_int<16> olane_t;   // lane, in [0, TM) after obuf_wrap

// STORE's write bursts, as rtl/store.sv's (seg_gen.sv): a write request per segment and 4 KB page (an AXI4 burst
// never crosses a 4 KB boundary), so each request is one burst of at most STORE_BURST_BEATS = min(4096 / AXI_BYTES,
// 256) beats (256 of 128 bits, 128 of 256 bits): the store port's max_write_burst_length (accel.cpp.j2), nothing for
// the m_axi adapter to split. STORE_WR_OUTSTANDING bursts in flight, the RTL's ST_OUTST (generator/spec/arch.py
// RTL_QUEUES), the port's num_write_outstanding. Long bursts rather than 16-beat ones: the kernel's bursts go to
// accel_hp.v's splitter (two HP ports) or a SmartConnect (one), which take the RTL's 256-beat bursts; whatever the
// PS does behind an HP port (UG1085: the HP ports' AXI FIFO interface) does not change the one beat per cycle the
// kernel streams, while 16-beat bursts with 16 in flight would keep only 256 beats in flight.
#define STORE_PAGE_BYTES 4096
#define STORE_BURST_BEATS (STORE_PAGE_BYTES / AXI_BYTES < 256 ? STORE_PAGE_BYTES / AXI_BYTES : 256)
#define STORE_WR_OUTSTANDING 16

// ceil(log2(n)): the barrel rotator's stages
static constexpr int store_clog2(int n) { return n <= 1 ? 0 : 1 + store_clog2((n + 1) / 2); }
#define STORE_ROT_STAGES store_clog2(TM)

static inline void obuf_wrap(oword_t &w, olane_t &l) {
OBUF_WRAP:
    for (int c = 0; c < OBUF_WRAPS; c++) {
#pragma HLS UNROLL
        if (l >= TM) {
            l -= TM;
            w++;
        } else if (l < 0) {
            l += TM;
            w--;
        }
    }
}

// the beat of a STORE segment whose byte 0 is rel0 bytes after the segment's start: OBUF elements packed into
// their byte lanes, strb = the bytes inside the segment [0, nbytes). (gw, gl): the OBUF position of the element at
// the beat's byte 0; odd: rel0 is odd (int16: byte 0 is that element's high byte, byte j is in element (odd + j) >> 1
// from it). Lane m holds the beat's element d = (m - gl) mod TM; it is read only if the beat needs it (a byte of it in
// the beat and in the segment), so STORE reads no OBUF word outside the segment (the POST may still be writing those).
static void store_build_beat(rel_t rel0, nbytes_t nbytes, bool i16, oword_t gw, olane_t gl, bool odd,
                             const elem_t obuf[OBUF_DEPTH][TM], axi_t &w, ap_uint<AXI_BYTES> &strb) {
    elem_t e[OBUF_WRAPS][TM];   // lane values, then (rotated) the beat's elements: e[c][k] = element c * TM + k
#pragma HLS ARRAY_PARTITION variable=e complete dim=0
STORE_LANES:
    for (int m = 0; m < TM; m++) {
#pragma HLS UNROLL
        const bool wrap = m < gl;
        const int dm = wrap ? m - (int)gl + TM : m - (int)gl;   // lane m's element in round 0
        const oword_t r0 = wrap ? (oword_t)(gw + 1) : gw;
        int d = dm;   // the element of round c: c * TM + dm (a constant step: no multiply)
    STORE_ROUNDS:
        for (int c = 0; c < OBUF_WRAPS; c++) {
#pragma HLS UNROLL
            const rel_t first = i16 ? (rel_t)(rel0 - (odd ? 1 : 0) + 2 * d) : (rel_t)(rel0 + d);   // its first byte
            const bool in_beat = i16 ? 2 * d - (odd ? 1 : 0) < AXI_BYTES : d < AXI_BYTES;
            const bool need = in_beat && first >= 0 && first < (rel_t)nbytes;
            e[c][m] = need ? obuf[r0 + c][m] : (elem_t)0;
            d += TM;
        }
    }
STORE_ROTATE:
    for (int st = 0; st < STORE_ROT_STAGES; st++) {   // stage st: rotate by 2^st lanes (mod TM) if bit st of gl
#pragma HLS UNROLL
        const int by = (1 << st) % TM;
    STORE_ROTATE_ROUNDS:
        for (int c = 0; c < OBUF_WRAPS; c++) {
#pragma HLS UNROLL
            elem_t r[TM];
#pragma HLS ARRAY_PARTITION variable=r complete
        STORE_ROTATE_LANES:
            for (int k = 0; k < TM; k++) {
#pragma HLS UNROLL
                r[k] = e[c][k + by < TM ? k + by : k + by - TM];
            }
            if (gl[st]) {
            STORE_ROTATE_TAKE:
                for (int k = 0; k < TM; k++) {
#pragma HLS UNROLL
                    e[c][k] = r[k];
                }
            }
        }
    }
    w = 0;
    strb = 0;
STORE_PACK:
    for (int j = 0; j < AXI_BYTES; j++) {
#pragma HLS UNROLL
        const rel_t rel = rel0 + j;
        const int ja = j >> 1, jb = (j + 1) >> 1;   // int16: the element of byte j (odd: jb)
        const ap_uint<16> v8 = (ap_uint<16>)e[j / TM][j % TM];
        const ap_uint<16> v16 = odd ? (ap_uint<16>)e[jb / TM][jb % TM] : (ap_uint<16>)e[ja / TM][ja % TM];
        const bool hi = ((j & 1) != 0) != odd;
        const ap_uint<8> byte = !i16 ? (ap_uint<8>)v8.range(7, 0) : hi ? (ap_uint<8>)v16.range(15, 8)
                                                                      : (ap_uint<8>)v16.range(7, 0);
        if (rel >= 0 && rel < (rel_t)nbytes) {
            w.range((j << 3) + 7, j << 3) = byte;
            strb[j] = 1;
        }
    }
}

// the OBUF position of the element at byte 0 of a segment's first beat: the segment's first element is lane 0 of
// word fw (STORE segments start at pixels, src_pitch words apart), byte 0 is -rel0 bytes before it
static inline void store_seg_pos(flat_t fw, rel_t rel0, bool i16, oword_t &gw, olane_t &gl) {
    const ap_uint<AXI_LOG2_BYTES + 1> back = (ap_uint<AXI_LOG2_BYTES + 1>)(-rel0);   // (0 <= -rel0 < AXI_BYTES)
    gw = (oword_t)fw;
    const olane_t b = (olane_t)back;
    gl = i16 ? (olane_t)(-((b + 1) >> 1)) : (olane_t)(-b);
    obuf_wrap(gw, gl);
}

// The store module's view of the POST running in the post module beside it: its progress, its token push at its
// end, and the error bits and loop iterations of the POSTs that have ended (the store module reports them)
struct post_link_t {
    bool run;             // a POST was handed over and has not reported its end
    bool push;            // it pushes an s2c token at its end
    ap_uint<24> words;    // the OBUF words [0, words) are written
    ap_uint<32> err, iters;
};

static inline void post_take(post_link_t &pl, const post_msg_t &m) {
    pl.words = m.words;
    if (m.done) {
        pl.run = false;
        pl.err |= m.err;
        pl.iters += m.iters;
    }
}

// STORE: every beat of every segment in one pipelined loop, streamed back to back through the store port's manual
// bursts (maxi, accel_maxi.h): at a segment's first beat, and at each 4 KB page start inside a segment, a
// write_request of the beats up to the segment's or the page's end, whichever comes first (one AXI burst); then a
// write per beat with its byte strobes (a partial first / last beat of a segment: only its bytes). The responses
// are taken STORE_WR_OUTSTANDING requests behind (a new request beyond that first takes the oldest one's, whose
// beats were all written long before; a pipelined loop that never took them would stall the adapter once it holds
// as many as it can track, while write() waits: a deadlock), the rest after the loop. The walk's element index w.f
// counts OBUF words (lane 0 of a pixel); (gw, gl) follows the beat's byte 0 by AXI_BYTES / element bytes lanes per
// beat. Beside a running POST (pl.run), a segment's first beat whose OBUF words [w.f, w.f + seg_w) are not all
// reported written takes the POST's next progress report instead (a blocking read, no beat); otherwise p2s is not
// touched (post_finish takes the remaining reports). A refused POST stops the STORE. The post module's blocking p2s
// writes cannot deadlock with this: the STORE waits only for a report while the POST has not written its words,
// and a POST blocked on a full p2s has POST_MSG_DEPTH reports waiting, so the STORE's read finds one; a STORE that
// needs no report writes on (its m_axi writes depend on nothing the POST does) and post_finish then empties p2s.
static void store_beats(maxi<axi_t> ddr, seg_walk w, ap_uint<32> max_beats, nbytes_t nbytes, ap_uint<32> seg_cols,
                        ap_uint<32> seg_rows, addr_t ps, addr_t rs, flat_t step, flat_t row_step, flat_t seg_w,
                        bool i16, const elem_t obuf[OBUF_DEPTH][TM], fifo<post_msg_t> &p2s, post_link_t &pl,
                        ap_uint<32> &iters) {
    bool more = true, first = true;   // first: the next beat is its segment's first
    ap_uint<8> resp = 0;              // write requests whose response is not taken yet (<= STORE_WR_OUTSTANDING)
    oword_t gw;
    olane_t gl;
    store_seg_pos(w.f, w.rel, i16, gw, gl);
STORE_BEATS:
    for (ap_uint<32> n = 0; n < max_beats && more;) {
#pragma HLS LOOP_TRIPCOUNT min=1 max=16384
#pragma HLS PIPELINE II=1
        if (pl.run && first && (flat_t)pl.words < w.f + seg_w) {
            const post_msg_t m = p2s.read();
            post_take(pl, m);
            if (m.done && m.err != 0) more = false;   // the POST refused or failed: nothing more is written
            continue;
        }
#ifndef ACCEL_SYNTH
        if (pl.run) accel_beats_beside_post++;
#endif
        if (first || (w.b & (addr_t)(STORE_BURST_BEATS - 1)) == 0) {   // a burst: to the segment's or page's end
            const addr_t page_last = w.b | (addr_t)(STORE_BURST_BEATS - 1);
            const addr_t last = w.b_last < page_last ? w.b_last : page_last;
            if (resp == STORE_WR_OUTSTANDING)
                ddr.write_response();
            else
                resp++;
            ddr.write_request((size_t)w.b, (size_t)(last - w.b + 1));
        }
        axi_t v;
        ap_uint<AXI_BYTES> strb;
        store_build_beat(w.rel, nbytes, i16, gw, gl, w.rel[0], obuf, v, strb);
        ddr.write(v, strb);
        iters++;
        n++;
        const bool in_seg = w.b != w.b_last;
        first = !in_seg;
        more = seg_next(w, nbytes, seg_cols, seg_rows, ps, rs, step, row_step);
        if (in_seg) {
            gl += (olane_t)(i16 ? AXI_BYTES / 2 : AXI_BYTES);
            obuf_wrap(gw, gl);
        } else {
            store_seg_pos(w.f, w.rel, i16, gw, gl);
        }
    }
STORE_RESPONSES:
    for (; resp > 0; resp--) {   // the last requests' write responses
#pragma HLS LOOP_TRIPCOUNT min=0 max=16
        ddr.write_response();
    }
}

// STORE: checks, then segments as LOAD cuts them (whole transfer / contiguous row / pixel run), all their beats in
// one flattened pipelined loop (store_beats), beside the running POST (pl)
static void exec_store(const insn_t &x, ap_uint<1> prec, maxi<axi_t> ddr, const run_t &run,
                       const elem_t obuf[OBUF_DEPTH][TM], fifo<post_msg_t> &p2s, post_link_t &pl, ap_uint<32> &err,
                       ap_uint<32> &iters) {
    const int sel = (int)F(x, STORE, BASE_REG);
    const i64 off0 = F(x, STORE, DDR_OFFSET), rows = F(x, STORE, ROWS), cols = F(x, STORE, COLS);
    const i64 elems = F(x, STORE, ELEMS), rs = F(x, STORE, ROW_STRIDE), ps = F(x, STORE, PIX_STRIDE);
    const i64 pitch_w = F(x, STORE, SRC_PITCH), pitch = pitch_w * TM;   // OBUF words / elements per pixel
    const bool i16 = prec != PREC_INT8;
    const i64 run_bytes = i16 ? 2 * elems : elems;
    if (rows * cols * elems == 0) return;  // an empty transfer: no access, nothing checked
    if ((rows * cols - 1) * pitch + elems > (i16 ? OBUF_WORDS_INT16 : OBUF_WORDS_INT8) * TM ||
        !ddr_in_range(run, sel, off0 + (rows - 1) * rs + (cols - 1) * ps + run_bytes)) {
        err |= STATUS_OUT_OF_RANGE;
        return;
    }
    const bool whole_px = ps == run_bytes && pitch == elems;
    const bool whole_rows = whole_px && rs == cols * ps;
    const i64 seg_rows = whole_rows ? 1 : rows, seg_cols = whole_px ? 1 : cols;
    const i64 seg_bytes = run_bytes * (whole_px ? cols : 1) * (whole_rows ? rows : 1);
    const i64 seg_w = pitch_w * (whole_px ? cols : 1) * (whole_rows ? rows : 1);   // OBUF words of a segment
    // the loop's bound: at most ceil(bytes / beat) + 1 beats per segment (it ends after the last segment's last beat)
    const i64 mb = seg_rows * seg_cols * (((seg_bytes + AXI_BYTES - 1) >> AXI_LOG2_BYTES) + 1);
    const ap_uint<32> max_beats = mb > 0xFFFFFFFFLL ? (ap_uint<32>)0xFFFFFFFFu : (ap_uint<32>)mb;
    seg_walk w;
    seg_init(w, (addr_t)(ddr_base(run, sel) + off0), 0, (nbytes_t)seg_bytes);
    // (the walk counts OBUF words: a pixel is src_pitch words, a row cols pixels)
    store_beats(ddr, w, max_beats, (nbytes_t)seg_bytes, (ap_uint<32>)seg_cols, (ap_uint<32>)seg_rows,
                (addr_t)ps, (addr_t)rs, (flat_t)pitch_w, (flat_t)(pitch_w * cols), (flat_t)seg_w, i16, obuf, p2s, pl,
                iters);
}

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
#if INSN_BEATS == 1
#pragma HLS PIPELINE II=1
#elif INSN_BEATS == 2
#pragma HLS PIPELINE II=2
#else
#pragma HLS PIPELINE II=4
#endif
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
            else if (F(x, CONFIG, TN) != TN || F(x, CONFIG, TM) != TM || F(x, CONFIG, CONFIG_ID) != (i64)CONFIG_ID ||
                     F(x, CONFIG, PRECISION) > 1)
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
#if INSN_BEATS == 1
#pragma HLS PIPELINE II=1
#elif INSN_BEATS == 2
#pragma HLS PIPELINE II=2
#else
#pragma HLS PIPELINE II=4
#endif
            const insn_t nx = k + 1 <= kend ? next_insn(insns, from_ddr, k + 1, held) : (insn_t)0;
            const int op = opcode_of(x);
            if (op == OP_CONFIG) {  // the load module owns CONFIG (and its tokens); the others latch the precision
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

// ------------------------------------------------------------------------------------------ modules
// Each module's state lives across invocations (one instruction per invocation): the run descriptor, the
// precision latched by CONFIG, its sticky error bits and its loop iterations. An instruction pops the tokens it
// waits for, executes unless an error is set anywhere (the error wire), publishes its errors, pushes its tokens.
struct module_state_t {
    bool active;
    run_t run;
    ap_uint<1> prec;
    ap_uint<32> err, iters;
};

// start of a run (the first command after a done report): latch the run descriptor
static inline void module_begin(module_state_t &s, fifo<run_t> *run) {
    if (s.active) return;
    if (run) s.run = run->read();
    s.active = true;
    s.prec = 0;
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
    if (op == OP_CONFIG)
        s.prec = (ap_uint<1>)F(x, CONFIG, PRECISION);
    else if (op == OP_LOAD && s.err == 0 && err_peek(err_in) == 0)
        exec_load(x, s.prec, ddr, s.run, ibuf, wbuf, pbuf, tbuf, s.err, s.iters);
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
    if (op == OP_CONFIG)
        s.prec = (ap_uint<1>)F(x, CONFIG, PRECISION);
    else if (op == OP_COMPUTE && s.err == 0 && err_peek(err_in) == 0)
        exec_compute(x, s.prec, ibuf, wbuf, acc, s.err, s.iters);
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
                       const elem_t obuf[OBUF_DEPTH][TM], err_in_t err_in, err_out_t err_out) {
    const int op = opcode_of(x);
    if (op != OP_STORE || FH(x, POP_PREV)) post_finish(s, pl, p2s, s2c);
    if (FH(x, POP_PREV)) c2s.read();
    const bool go = s.err == 0 && err_peek(err_in) == 0;
    bool handed = false;   // a POST handed to the post module: it pushes its token at its end
    if (op == OP_CONFIG || op == OP_END) {
        if (op == OP_CONFIG) s.prec = (ap_uint<1>)F(x, CONFIG, PRECISION);
        post_q.write(x);   // the post module latches the precision / ends its run
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
        exec_store(x, s.prec, ddr, s.run, obuf, p2s, pl, s.err, s.iters);
    }
    if (op == OP_STORE) post_finish(s, pl, p2s, s2c);   // the STORE ends after the POST beside it
    s.iters++;
    if (s.err) err_publish(err_out, s.err);
    if (FH(x, PUSH_PREV) && !handed) tok_push(s2c, s.err);
    if (s.err) err_publish(err_out, s.err);
}

// the post module: CONFIG latches the precision, END ends its run, a POST runs and reports its end
static void post_insn(module_state_t &s, const insn_t &x, fifo<post_msg_t> &p2s,
                      const acc_t acc[2][ACC_WORDS][TM], const prec_t pbuf[PBUF_ROWS][TM],
                      const trec_t tbuf[TBUF_ROWS][TM], elem_t obuf[OBUF_DEPTH][TM], err_out_t err_out) {
    const int op = opcode_of(x);
    if (op == OP_END) {
        s.active = false;
        return;
    }
    if (op == OP_CONFIG) {
        s.prec = (ap_uint<1>)F(x, CONFIG, PRECISION);
        return;
    }
    ap_uint<32> err = 0, iters = 0;
    ap_uint<24> words = 0;
    exec_post(x, s.prec, acc, pbuf, tbuf, obuf, p2s, err, iters, words);
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
