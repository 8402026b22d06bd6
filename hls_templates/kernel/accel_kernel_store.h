// accel_kernel_store.h -- static (not rendered), part of accel_kernel.h (the parts include each other in order: base
// <- load <- compute <- post <- store <- fetch): STORE (OBUF -> DDR): lane reads rotated into beats, manual write
// bursts with byte strobes; the store module's view of the POST beside it.
#ifndef ACCEL_KERNEL_STORE_H
#define ACCEL_KERNEL_STORE_H

#include "accel_kernel_post.h"

// ------------------------------------------------------------------------------------------ STORE
// A beat is built from OBUF as rtl/store.sv builds it: every lane memory read once (lane l: a constant after
// unrolling, no runtime index into the partitioned lane dimension), then the OBUF_LANES lane values rotated into the
// beat's element order (a barrel rotation by the start lane: muxes on registers). A beat spans at most AXI_BYTES
// elements (int8) or AXI_BYTES / 2 + 1 (int16 starting at an odd byte): with OBUF_LANES >= AXI_BYTES (config.h) that
// is at most OBUF_LANES consecutive (row, lane) positions, one per lane memory, in row gw (lanes >= the start lane
// gl) or gw + 1 (lanes below it). An OBUF position (row, lane) of an element, kept without a division by Tm (Tm
// need not be a power of two: 24, 40, 48, 56): advanced by at most OBUF_LANES lanes at a time, each wrap one
// compare (as the RTL's STORE walks (row, byte) incrementally)
typedef ap_int<34> oword_t;   // OBUF row (negative before a segment's first element)
typedef ap_int<16> olane_t;   // lane, in [0, OBUF_LANES) after obuf_wrap

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
#define STORE_ROT_STAGES store_clog2(OBUF_LANES)

static inline void obuf_wrap(oword_t &w, olane_t &l) {
    if (l >= OBUF_LANES) {
        l -= OBUF_LANES;
        w++;
    } else if (l < 0) {
        l += OBUF_LANES;
        w--;
    }
}

// the beat of a STORE segment whose byte 0 is rel0 bytes after the segment's start: OBUF elements packed into
// their byte lanes, strb = the bytes inside the segment [0, nbytes). (gw, gl): the OBUF position of the element at
// the beat's byte 0; odd: rel0 is odd (int16: byte 0 is that element's high byte, byte j is in element (odd + j) >> 1
// from it). Lane m holds the beat's element d = (m - gl) mod OBUF_LANES; it is read only if the beat needs it (a
// byte of it in the beat and in the segment), so STORE reads no OBUF word outside the segment (the POST may still be
// writing those).
static void store_build_beat(rel_t rel0, nbytes_t nbytes, bool i16, oword_t gw, olane_t gl, bool odd,
                             const elem_t obuf[OBUF_ROWS][OBUF_LANES], axi_t &w, ap_uint<AXI_BYTES> &strb) {
    elem_t e[OBUF_LANES];   // lane values, then (rotated) the beat's elements: e[k] = element k
#pragma HLS ARRAY_PARTITION variable=e complete
STORE_LANES:
    for (int m = 0; m < OBUF_LANES; m++) {
#pragma HLS UNROLL
        const bool wrap = m < gl;
        const int d = wrap ? m - (int)gl + OBUF_LANES : m - (int)gl;   // lane m's element
        const oword_t r = wrap ? (oword_t)(gw + 1) : gw;
        const rel_t first = i16 ? (rel_t)(rel0 - (odd ? 1 : 0) + 2 * d) : (rel_t)(rel0 + d);   // its first byte
        const bool in_beat = i16 ? 2 * d - (odd ? 1 : 0) < AXI_BYTES : d < AXI_BYTES;
        const bool need = in_beat && first >= 0 && first < (rel_t)nbytes;
        e[m] = need ? obuf[r][m] : (elem_t)0;
    }
STORE_ROTATE:
    for (int st = 0; st < STORE_ROT_STAGES; st++) {   // stage st: rotate by 2^st lanes (mod OBUF_LANES) if bit st of gl
#pragma HLS UNROLL
        const int by = (1 << st) % OBUF_LANES;
        elem_t r[OBUF_LANES];
#pragma HLS ARRAY_PARTITION variable=r complete
    STORE_ROTATE_LANES:
        for (int k = 0; k < OBUF_LANES; k++) {
#pragma HLS UNROLL
            r[k] = e[k + by < OBUF_LANES ? k + by : k + by - OBUF_LANES];
        }
        if (gl[st]) {
        STORE_ROTATE_TAKE:
            for (int k = 0; k < OBUF_LANES; k++) {
#pragma HLS UNROLL
                e[k] = r[k];
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
        const ap_uint<16> v8 = (ap_uint<16>)e[j];
        const ap_uint<16> v16 = odd ? (ap_uint<16>)e[jb] : (ap_uint<16>)e[ja];
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
// word fw (STORE segments start at pixels, src_pitch words apart), i.e. row fw >> LOG2_OBUF_K, lane
// (fw & (OBUF_K - 1)) x TM; byte 0 is -rel0 bytes before it
static inline void store_seg_pos(flat_t fw, rel_t rel0, bool i16, oword_t &gw, olane_t &gl) {
    const ap_uint<AXI_LOG2_BYTES + 1> back = (ap_uint<AXI_LOG2_BYTES + 1>)(-rel0);   // (0 <= -rel0 < AXI_BYTES)
    gw = (oword_t)(fw >> LOG2_OBUF_K);
    const olane_t b = (olane_t)back;
    olane_t l0 = 0;   // (fw & (OBUF_K - 1)) x TM, by the bits of fw's place in its row (constant adds)
STORE_SEG_LANE:
    for (int i = 0; i < LOG2_OBUF_K; i++) {
#pragma HLS UNROLL
        if (fw[i]) l0 += (olane_t)(TM << i);
    }
    gl = i16 ? (olane_t)(l0 - ((b + 1) >> 1)) : (olane_t)(l0 - b);
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
                        bool i16, const elem_t obuf[OBUF_ROWS][OBUF_LANES], fifo<post_msg_t> &p2s, post_link_t &pl,
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
                       const elem_t obuf[OBUF_ROWS][OBUF_LANES], fifo<post_msg_t> &p2s, post_link_t &pl, ap_uint<32> &err,
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

#endif  // ACCEL_KERNEL_STORE_H
