// accel_kernel_pre.h -- static (not rendered), standalone: PRE, the camera frame in DDR to the network input in DDR
// (issue 45), exactly host/pre.py's integer arithmetic (its module docstring, steps 1-6; host.pre.pre_run is the
// bit-exact reference). The load module runs it for the PRE instruction (accel_kernel_pre_exec.h: the checks, the
// arguments from the instruction and the frame registers); it also builds on its own (needs only accel_maxi.h):
// tests/backends/test_hls_pre.py runs it alone (C-simulation against pre_run, the port analysis of its loops through
// the small top tests/data/hls_pre/pre_top.cpp), tests/backends/test_hls_pre_insn.py as the kernel's instruction.
//
// One m_axi port (maxi<pre_beat_t>, accel_maxi.h's manual bursts) reads the frame and writes the output: by the
// port rules (docs/hls-kernel.md) a bundle carries one read beat and one write beat per cycle, which is all PRE uses
// (the row fetch reads one beat per cycle, the pixel loop writes at most one), and one pointer read and written is
// no maxi-bundle violation; src_addr and dst_addr are byte addresses in the same DDR, as the unit interface states.
//
// Per output row y of the band y0 .. y0 + rows - 1 (the PRE instruction's rows of the net_h-row run; a non-pipelined
// loop; row y0 is written at dst_addr, the line buffers start empty):
//   * placed rows (top <= y < top + out_h): the source rows iy, iy1 of the vertical pass (row accumulator sy += step_y,
//     Q12.20) that neither line buffer holds are read: one read_request per row (its first 3 frame_w bytes, whole
//     beats), both requested before the first beat is taken (the read latency once per output row), then PRE_FETCH,
//     one beat per iteration into the line buffer the row goes to (a row already held is not read again);
//   * PRE_PIXELS writes the row's output bytes [dst_addr + y dst_row, + (net_w - 1) dst_pix + 3 elem_bytes): a window
//     of two beats; an iteration writes the window's low beat when the next pixel starts beyond it (or no pixel is
//     left), then inserts that pixel (its 3 elements, little-endian) if it starts in the window's low beat, with
//     its byte strobes. So a row is one burst per 4 KB page (write_request at the row's first beat and at each page
//     start, STORE's rule: at most PRE_WR_OUTSTANDING responses outstanding), bytes between pixels (dst_pix > 3
//     elem_bytes) are never written (strobes off; a beat inside the row no pixel touches is written with no strobe),
//     and the loop runs NB + net_w - D iterations (NB the row's beats, D the pixels starting in a later beat than
//     the pixel before): net_w + 1 or + 2 when dst_pix <= PRE_AXI_BYTES.
// The pixel datapath per iteration: the column accumulator s += step_x (placed columns), ix / ix1 / fx, pixels ix and
// ix1 of both held rows (two reads of each line buffer, ram_t2p: their beats k and k + 1), h per row and channel,
// v, the quantization, the channel order; a padding pixel is v = PAD << 16.
#ifndef ACCEL_KERNEL_PRE_H
#define ACCEL_KERNEL_PRE_H

#include <ap_int.h>
#include <cstddef>
#include "accel_maxi.h"

// the m_axi beat: the kernel's AXI_BYTES when built inside it, else 32 (zcu19eg's 256-bit m_axi); a power of two >= 8
#ifndef PRE_AXI_BYTES
#ifdef AXI_BYTES
#define PRE_AXI_BYTES AXI_BYTES
#else
#define PRE_AXI_BYTES 32
#endif
#endif
#define PRE_AXI_BITS (8 * PRE_AXI_BYTES)
static constexpr int pre_log2(int n) { return n <= 1 ? 0 : 1 + pre_log2(n / 2); }
#define PRE_LOG2_BYTES pre_log2(PRE_AXI_BYTES)
#if (PRE_AXI_BYTES & (PRE_AXI_BYTES - 1)) != 0 || PRE_AXI_BYTES < 8
#error "PRE_AXI_BYTES must be a power of two >= 8 (a pixel's 6 bytes spill into at most one next beat)"
#endif

#define PRE_MAX_FRAME 4096   // host.pre.MAX_FRAME: frame and network input sizes 1..4096
#define PRE_MAX_PITCH 65535  // host.pre.MAX_PITCH: bytes from one frame row to the next
#define PRE_PAD 114          // host.pre.PAD
#define PRE_POS_BITS 20      // Q12.20 source positions
#define PRE_FRAC_BITS 12     // bilinear weights
// beats of a line buffer: a row's 3 x 4096 bytes from any byte of its first beat, plus the beat after the last one
// (read, unused, when the last pixel sits in the last beat)
#define PRE_LINE_BEATS (3 * PRE_MAX_FRAME / PRE_AXI_BYTES + 2)
// a write burst: to the row's or the 4 KB page's end (at most 256 beats), PRE_WR_OUTSTANDING without their response
#define PRE_PAGE_BEATS (4096 / PRE_AXI_BYTES < 256 ? 4096 / PRE_AXI_BYTES : 256)
#define PRE_WR_OUTSTANDING 16

typedef ap_uint<PRE_AXI_BITS> pre_beat_t;
typedef ap_uint<2 * PRE_AXI_BITS> pre_win_t;       // two beats, the first at bits 0..
typedef ap_uint<2 * PRE_AXI_BYTES> pre_strb_t;     // their byte strobes
typedef ap_uint<64> pre_addr_t;                     // DDR byte address, or beat index
typedef ap_uint<13> pre_dim_t;                      // a size or index 0..4096
typedef ap_uint<32> pre_pos_t;                      // c x step mod 2^32 (host/pre.py step 2: a 32-bit accumulator)
typedef ap_uint<24> pre_pix_t;                      // a frame pixel, channel c at bits 8c + 7..8c
typedef ap_uint<48> pre_out_t;                      // an output pixel's 3 elements, little-endian

// The run parameters of PRE (host.pre.PreGeometry and PreQuant give them; the ranges are the unit's interface).
struct pre_args_t {
    pre_addr_t src_addr;          // byte address of frame pixel (0, 0)
    ap_uint<16> src_pitch;        // bytes from one frame row to the next (>= 3 frame_w)
    pre_dim_t frame_w, frame_h;   // 1..4096
    pre_dim_t net_w, net_h;       // the network input, 1..4096
    pre_dim_t out_w, out_h, left, top;   // the placed rectangle (left + out_w <= net_w, top + out_h <= net_h)
    ap_uint<32> step_x, step_y;   // unsigned Q12.20
    ap_uint<16> mult;             // quantization multiplier
    ap_uint<6> shift;             // 1..63
    ap_int<16> zero_point;
    ap_uint<1> prec;              // 0 int8, 1 int16 (elem_bytes = 1 + prec)
    ap_uint<1> swap;              // output channel k takes frame channel 2 - k
    pre_addr_t dst_addr;          // byte address of output pixel (0, 0), channel 0
    ap_uint<32> dst_row;          // bytes from one output row to the next
    ap_uint<8> dst_pix;           // bytes from one output pixel to the next (>= 3 elem_bytes)
    pre_dim_t y0, rows;           // the band of output rows y0 .. y0 + rows - 1 (y0 + rows <= net_h), row y0 at dst_addr
};

// What a run did (the loops' trip counts, for the cycle estimate): output rows that read source rows (PRE_FETCH
// runs), source rows read, their beats (PRE_FETCH iterations), PRE_PIXELS iterations, beats written, write requests
struct pre_stats_t {
    ap_uint<32> fetch_runs, rows_fetched, fetch_beats, pixel_steps, write_beats, requests;
};

// the two line buffers: the frame row each holds (-1: none) and the byte of its pixel 0 in its beat 0
struct pre_hold_t {
    ap_int<14> row0, row1;
    ap_uint<8> off0, off1;
};

// parameters inside the interface's ranges (nothing is read or written otherwise)
static inline bool pre_args_ok(const pre_args_t &a) {
    const int eb = 1 + (int)a.prec;
    return a.frame_w >= 1 && a.frame_w <= PRE_MAX_FRAME && a.frame_h >= 1 && a.frame_h <= PRE_MAX_FRAME &&
           a.net_w >= 1 && a.net_w <= PRE_MAX_FRAME && a.net_h >= 1 && a.net_h <= PRE_MAX_FRAME && a.out_w >= 1 &&
           a.out_h >= 1 && (int)a.left + (int)a.out_w <= (int)a.net_w && (int)a.top + (int)a.out_h <= (int)a.net_h &&
           (int)a.src_pitch >= 3 * (int)a.frame_w && a.shift >= 1 && (int)a.dst_pix >= 3 * eb &&
           (int)a.y0 + (int)a.rows <= (int)a.net_h;
}

// output position s = c x step of an axis with n_src source pixels (host/pre.py step 2): source indices i, i1 and
// the 12-bit fraction f; the last output position (last) is i = n_src - 1, f = 0
static inline void pre_pos(pre_pos_t s, bool last, pre_dim_t n_src, pre_dim_t &i, pre_dim_t &i1, ap_uint<12> &f) {
    const ap_uint<24> whole = (ap_uint<24>)(s >> PRE_POS_BITS);
    const pre_dim_t end = n_src - 1;
    i = (last || whole >= (ap_uint<24>)end) ? end : (pre_dim_t)whole;
    f = last ? (ap_uint<12>)0 : (ap_uint<12>)(s >> (PRE_POS_BITS - PRE_FRAC_BITS));   // (low 12 bits)
    i1 = i < end ? (pre_dim_t)(i + 1) : end;
}

// pixels ix and ix1 (ix + 1 if next, else ix) of the row in line buffer `line` (its pixel 0 at byte off of beat 0):
// the 6 bytes from byte off + 3 ix lie in beats k, k + 1 (two reads)
static inline void pre_line_px(const pre_beat_t line[PRE_LINE_BEATS], ap_uint<8> off, pre_dim_t ix, bool next,
                               pre_pix_t &p0, pre_pix_t &p1) {
    const ap_uint<15> b = (ap_uint<15>)off + ((ap_uint<15>)ix << 1) + (ap_uint<15>)ix;
    const ap_uint<15> k = b >> PRE_LOG2_BYTES;
    const pre_win_t w = (line[k + 1], line[k]);
    const ap_uint<16> sh = (ap_uint<16>)(b & (PRE_AXI_BYTES - 1)) << 3;
    const ap_uint<48> six = (ap_uint<48>)(w >> sh);
    p0 = six.range(23, 0);
    p1 = next ? (pre_pix_t)six.range(47, 24) : p0;
}

static inline ap_uint<8> pre_ch(pre_pix_t p, int c) { return p.range(8 * c + 7, 8 * c); }

// horizontal pass of one channel: (4096 - f) a + f b = 4096 a + f (b - a), 20 bits (the same integer)
static inline ap_uint<20> pre_h(ap_uint<8> a, ap_uint<8> b, ap_uint<12> f) {
    const ap_int<9> d = (ap_int<9>)b - (ap_int<9>)a;
    const ap_int<23> h = ((ap_int<23>)a << PRE_FRAC_BITS) + f * d;
    return (ap_uint<20>)h;
}

// vertical pass: ((4096 - f) h0 + f h1 + 2^7) >> 8 = (4096 h0 + f (h1 - h0) + 2^7) >> 8, 24 bits
static inline ap_uint<24> pre_v(ap_uint<20> h0, ap_uint<20> h1, ap_uint<12> f) {
    const ap_int<21> d = (ap_int<21>)h1 - (ap_int<21>)h0;
    const ap_int<35> s = ((ap_int<35>)h0 << PRE_FRAC_BITS) + f * d + 128;
    return (ap_uint<24>)(s >> 8);
}

// quantization: clamp(((v M + 2^(S-1)) >> S) + zp, qmin, qmax) (rnd = 2^(S-1)); the element's low 16 bits
static inline ap_uint<16> pre_q(ap_uint<24> v, const pre_args_t &a, ap_uint<64> rnd) {
    const ap_uint<40> p = v * a.mult;
    const ap_uint<64> t = (ap_uint<64>)p + rnd;
    const ap_int<42> q = (ap_int<42>)(ap_uint<41>)(t >> a.shift) + a.zero_point;
    const ap_int<42> lo = a.prec ? (ap_int<42>)-32768 : (ap_int<42>)-128;
    const ap_int<42> hi = a.prec ? (ap_int<42>)32767 : (ap_int<42>)127;
    return (ap_uint<16>)(q < lo ? lo : q > hi ? hi : q);
}

// one output pixel from the two rows' pixels ix (x0) and ix1 (x1): row iy (a) and iy1 (b), weights fx, fy
static inline pre_out_t pre_pixel(const pre_args_t &a, bool pad, pre_pix_t a0, pre_pix_t a1, pre_pix_t b0,
                                  pre_pix_t b1, ap_uint<12> fx, ap_uint<12> fy, ap_uint<64> rnd) {
    ap_uint<16> q[3];
#pragma HLS ARRAY_PARTITION variable=q complete
PRE_CHANNELS:
    for (int c = 0; c < 3; c++) {
#pragma HLS UNROLL
        const ap_uint<20> ha = pre_h(pre_ch(a0, c), pre_ch(a1, c), fx);
        const ap_uint<20> hb = pre_h(pre_ch(b0, c), pre_ch(b1, c), fx);
        const ap_uint<24> v = pad ? (ap_uint<24>)(PRE_PAD << 16) : pre_v(ha, hb, fy);
        q[c] = pre_q(v, a, rnd);
    }
    pre_out_t out = 0;
PRE_ELEMS:
    for (int k = 0; k < 3; k++) {
#pragma HLS UNROLL
        const ap_uint<16> e = a.swap ? q[2 - k] : q[k];
        if (a.prec)
            out.range(16 * k + 15, 16 * k) = e;
        else
            out.range(8 * k + 7, 8 * k) = e.range(7, 0);
    }
    return out;
}

// write the window's low beat (beat b of the row whose last beat is b_last; first: the row's first beat), a write
// request first at the row's first beat and at each page start, then shift the window by a beat
static inline void pre_write(maxi<pre_beat_t> ddr, pre_addr_t b, pre_addr_t b_last, bool first, pre_win_t &win,
                             pre_strb_t &stb, ap_uint<8> &resp, pre_stats_t &st) {
    if (first || (b & (pre_addr_t)(PRE_PAGE_BEATS - 1)) == 0) {
        const pre_addr_t page_last = b | (pre_addr_t)(PRE_PAGE_BEATS - 1);
        const pre_addr_t last = b_last < page_last ? b_last : page_last;
        if (resp == PRE_WR_OUTSTANDING)
            ddr.write_response();
        else
            resp++;
        ddr.write_request((size_t)b, (size_t)(last - b + 1));
        st.requests++;
    }
    ddr.write((pre_beat_t)win.range(PRE_AXI_BITS - 1, 0), (ap_uint<PRE_AXI_BYTES>)stb.range(PRE_AXI_BYTES - 1, 0));
    win >>= PRE_AXI_BITS;
    stb >>= PRE_AXI_BYTES;
    st.write_beats++;
}

// one output row's constants: its beats [b_first, b_last], the byte of pixel 0 in b_first; placed: a row of the
// placed rectangle (else padding only); the line buffers of rows iy (sel_a) and iy1 (sel_b); fy
struct pre_row_t {
    pre_addr_t b_first, b_last;
    ap_uint<8> off;
    bool placed;
    ap_uint<1> sel_a, sel_b;
    ap_uint<12> fy;
};

// PRE_PIXELS: one output row, one pipelined loop of NB + net_w - D iterations (header comment)
static void pre_row(maxi<pre_beat_t> ddr, const pre_args_t &a, const pre_row_t &r, const pre_hold_t &h,
                    const pre_beat_t line0[PRE_LINE_BEATS], const pre_beat_t line1[PRE_LINE_BEATS], ap_uint<64> rnd,
                    ap_uint<8> &resp, pre_stats_t &st) {
    const ap_uint<32> nb = (ap_uint<32>)(r.b_last - r.b_first + 1);
    const ap_uint<32> max_steps = nb + a.net_w;
    const ap_uint<14> right = (ap_uint<14>)a.left + a.out_w;
    const pre_dim_t last_c = a.out_w - 1;
    pre_win_t win = 0;
    pre_strb_t stb = 0;
    ap_uint<32> cur = 0;            // the window's low beat (from b_first)
    pre_addr_t b = r.b_first;       // the same, absolute
    ap_uint<22> rel = r.off;        // byte of pixel x from b_first's byte 0
    pre_dim_t x = 0, c = 0;         // next pixel; its column in the placed rectangle
    pre_pos_t s = 0;                // c x step_x
    const ap_uint<8> eb = 1 + a.prec;
PRE_PIXELS:
    for (ap_uint<32> n = 0; n < max_steps && cur < nb; n++) {
#pragma HLS LOOP_TRIPCOUNT min=1 max=8194
#pragma HLS PIPELINE II=1
        const bool have = x < a.net_w;
        const ap_uint<32> bx = rel >> PRE_LOG2_BYTES;
        const bool in_x = x >= a.left && x < right;
        pre_dim_t ix, ix1;
        ap_uint<12> fx;
        pre_pos(s, c == last_c, a.frame_w, ix, ix1, fx);
        pre_pix_t p00, p01, p10, p11;
        pre_line_px(line0, h.off0, ix, ix1 != ix, p00, p01);
        pre_line_px(line1, h.off1, ix, ix1 != ix, p10, p11);
        const pre_out_t px = pre_pixel(a, !(r.placed && in_x), r.sel_a ? p10 : p00, r.sel_a ? p11 : p01,
                                       r.sel_b ? p10 : p00, r.sel_b ? p11 : p01, fx, r.fy, rnd);
        if (!have || bx != cur) {   // the low beat is complete
            pre_write(ddr, b, r.b_last, cur == 0, win, stb, resp, st);
            cur++;
            b++;
        }
        if (have && bx == cur) {   // the pixel starts in the low beat: insert it
            const ap_uint<16> at = (ap_uint<16>)(rel & (PRE_AXI_BYTES - 1));
            win |= (pre_win_t)px << (at << 3);
            stb |= (pre_strb_t)(eb == 2 ? 0x3F : 0x07) << at;
            x++;
            rel += a.dst_pix;
            if (in_x) {
                s += a.step_x;
                c++;
            }
        }
        st.pixel_steps++;
    }
}

// PRE_FETCH: the beats of n0 (into line buffer j0) then n1 (into j1) beats of the rows requested, one per iteration
static void pre_fetch_beats(maxi<pre_beat_t> ddr, ap_uint<16> n0, ap_uint<1> j0, ap_uint<16> n1, ap_uint<1> j1,
                            pre_beat_t line0[PRE_LINE_BEATS], pre_beat_t line1[PRE_LINE_BEATS], pre_stats_t &st) {
    ap_uint<16> k = 0;
    bool second = n0 == 0;
PRE_FETCH:
    for (ap_uint<17> n = 0; n < (ap_uint<17>)n0 + n1; n++) {
#pragma HLS LOOP_TRIPCOUNT min=1 max=1540
#pragma HLS PIPELINE II=1
        const pre_beat_t v = ddr.read();
        const ap_uint<1> j = second ? j1 : j0;
        if (j == 0)
            line0[k] = v;
        else
            line1[k] = v;
        if (!second && k + 1 == n0) {
            second = true;
            k = 0;
        } else {
            k++;
        }
        st.fetch_beats++;
    }
}

// request frame row `row` (its first 3 frame_w bytes, whole beats): its beats n and the byte of its pixel 0 in beat 0
static inline void pre_request(maxi<pre_beat_t> ddr, const pre_args_t &a, pre_dim_t row, ap_uint<16> &n,
                               ap_uint<8> &off) {
    const pre_addr_t start = a.src_addr + (ap_uint<29>)(row * a.src_pitch);   // (a 13 x 16-bit product)
    const pre_addr_t b0 = start >> PRE_LOG2_BYTES;
    const pre_addr_t b1 = (start + (pre_addr_t)3 * a.frame_w - 1) >> PRE_LOG2_BYTES;
    n = (ap_uint<16>)(b1 - b0 + 1);
    off = (ap_uint<8>)(start & (PRE_AXI_BYTES - 1));
    ddr.read_request((size_t)b0, (size_t)n);
}

// the rows iy, iy1 into the line buffers, each unless a buffer holds it; both requested before the beats are read
static void pre_fetch_rows(maxi<pre_beat_t> ddr, const pre_args_t &a, pre_dim_t iy, pre_dim_t iy1, pre_hold_t &h,
                           pre_beat_t line0[PRE_LINE_BEATS], pre_beat_t line1[PRE_LINE_BEATS], pre_stats_t &st) {
    const bool a0 = h.row0 == (ap_int<14>)iy, a1 = h.row1 == (ap_int<14>)iy;
    const bool b0 = h.row0 == (ap_int<14>)iy1, b1 = h.row1 == (ap_int<14>)iy1;
    const bool need_a = !(a0 || a1), need_b = !(b0 || b1) && iy1 != iy;
    if (!need_a && !need_b) return;
    // iy into the buffer not holding iy1 (buffer 0 when both are read), iy1 into the other one
    const ap_uint<1> ja = need_b ? (ap_uint<1>)0 : (ap_uint<1>)(b0 ? 1 : 0);
    const ap_uint<1> jb = need_a ? (ap_uint<1>)1 : (ap_uint<1>)(a0 ? 1 : 0);
    ap_uint<16> n0 = 0, n1 = 0;
    ap_uint<8> o0 = 0, o1 = 0;
    if (need_a) pre_request(ddr, a, iy, n0, o0);
    if (need_b) pre_request(ddr, a, iy1, n1, o1);
    pre_fetch_beats(ddr, n0, ja, n1, jb, line0, line1, st);
    st.fetch_runs++;
    st.rows_fetched += (need_a ? 1 : 0) + (need_b ? 1 : 0);
    if (need_a) {
        if (ja == 0) { h.row0 = iy; h.off0 = o0; } else { h.row1 = iy; h.off1 = o0; }
    }
    if (need_b) {
        if (jb == 0) { h.row0 = iy1; h.off0 = o1; } else { h.row1 = iy1; h.off1 = o1; }
    }
}

// PRE: one run (header comment). Returns false, touching nothing, when a parameter is outside the interface's range.
static inline bool accel_pre(maxi<pre_beat_t> ddr, const pre_args_t &a, pre_stats_t &st) {
    st.fetch_runs = st.rows_fetched = st.fetch_beats = st.pixel_steps = st.write_beats = st.requests = 0;
    if (!pre_args_ok(a)) return false;
    pre_beat_t line0[PRE_LINE_BEATS], line1[PRE_LINE_BEATS];
#pragma HLS BIND_STORAGE variable=line0 type=ram_t2p impl=bram
#pragma HLS BIND_STORAGE variable=line1 type=ram_t2p impl=bram
    pre_hold_t h;
    h.row0 = -1;
    h.row1 = -1;
    h.off0 = 0;
    h.off1 = 0;
    const ap_uint<64> rnd = (ap_uint<64>)1 << (a.shift - 1);
    const pre_addr_t span = (ap_uint<21>)((pre_dim_t)(a.net_w - 1) * a.dst_pix) + 3 * (1 + a.prec);   // a row's bytes
    const ap_uint<14> bottom = (ap_uint<14>)a.top + a.out_h, end = (ap_uint<14>)a.y0 + a.rows;
    pre_addr_t dy = a.dst_addr;
    pre_dim_t r = a.y0 > a.top ? (pre_dim_t)(a.y0 - a.top) : (pre_dim_t)0;   // the placed row (the band's first)
    pre_pos_t sy = (pre_pos_t)(a.step_y * r);   // r x step_y mod 2^32 (once per run)
    ap_uint<8> resp = 0;
PRE_ROWS:
    for (ap_uint<14> y = a.y0; y < end; y++) {
#pragma HLS LOOP_TRIPCOUNT min=1 max=4096
        pre_row_t row;
        row.placed = y >= a.top && y < bottom;
        pre_dim_t iy = 0, iy1 = 0;
        pre_pos(sy, r == a.out_h - 1, a.frame_h, iy, iy1, row.fy);
        if (row.placed) {
            pre_fetch_rows(ddr, a, iy, iy1, h, line0, line1, st);
            sy += a.step_y;
            r++;
        }
        row.sel_a = h.row0 == (ap_int<14>)iy ? 0 : 1;
        row.sel_b = h.row0 == (ap_int<14>)iy1 ? 0 : 1;
        row.b_first = dy >> PRE_LOG2_BYTES;
        row.b_last = (dy + span - 1) >> PRE_LOG2_BYTES;
        row.off = (ap_uint<8>)(dy & (PRE_AXI_BYTES - 1));
        pre_row(ddr, a, row, h, line0, line1, rnd, resp, st);
        dy += a.dst_row;
    }
PRE_RESPONSES:
    for (; resp > 0; resp--) {   // the last requests' write responses
#pragma HLS LOOP_TRIPCOUNT min=0 max=16
        ddr.write_response();
    }
    return true;
}

#endif  // ACCEL_KERNEL_PRE_H
