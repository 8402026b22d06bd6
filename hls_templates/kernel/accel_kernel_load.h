// accel_kernel_load.h -- static (not rendered), part of accel_kernel.h (the parts include each other in order: base
// <- pre_exec <- load <- compute <- post <- store <- fetch): LOAD (DDR -> IBUF / WBUF / PBUF / TBUF): the segment
// walk, the request walk of the manual read bursts, the beat rotated into lane order.
#ifndef ACCEL_KERNEL_LOAD_H
#define ACCEL_KERNEL_LOAD_H

#include "accel_kernel_pre_exec.h"   // (PRE, the load module's other DDR instruction; includes accel_kernel_base.h)

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

#endif  // ACCEL_KERNEL_LOAD_H
