// pre_tb.cpp -- test fixture (tests/backends/test_hls_pre.py): the C-simulation driver of pre_top (pre_top.cpp).
// usage: pre_tb DDR_IN DDR_OUT src_addr src_pitch frame_w frame_h net_w net_h out_w out_h left top step_x step_y
//               mult shift zero_point prec swap dst_addr dst_row dst_pix
// Reads the DDR image (bytes; padded to whole beats), runs one PRE, writes the image back (its original size) and
// prints "ok=<0|1>" and the loop counters of pre_stats_t as name=value.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "accel_kernel_pre.h"

void pre_top(maxi<pre_beat_t> ddr, pre_args_t args, pre_stats_t &stats, ap_uint<1> &ok);

static long long arg(char **argv, int i) { return std::strtoll(argv[i], nullptr, 0); }

int main(int argc, char **argv) {
    if (argc != 23) {
        std::fprintf(stderr, "pre_tb: expected 22 arguments (DDR_IN DDR_OUT and 20 parameters), got %d\n", argc - 1);
        return 2;
    }
    FILE *f = std::fopen(argv[1], "rb");
    if (!f) {
        std::fprintf(stderr, "pre_tb: cannot open %s\n", argv[1]);
        return 2;
    }
    std::vector<unsigned char> bytes;
    int ch;
    while ((ch = std::fgetc(f)) != EOF) bytes.push_back((unsigned char)ch);
    std::fclose(f);
    const size_t n = bytes.size(), nbeats = (n + PRE_AXI_BYTES - 1) / PRE_AXI_BYTES;
    std::vector<pre_beat_t> ddr(nbeats + 1);
    for (size_t i = 0; i < n; i++) {
        const int j = (int)(i % PRE_AXI_BYTES);
        ddr[i / PRE_AXI_BYTES].range(8 * j + 7, 8 * j) = bytes[i];
    }
    pre_args_t a;
    a.src_addr = arg(argv, 3);
    a.src_pitch = arg(argv, 4);
    a.frame_w = arg(argv, 5);
    a.frame_h = arg(argv, 6);
    a.net_w = arg(argv, 7);
    a.net_h = arg(argv, 8);
    a.out_w = arg(argv, 9);
    a.out_h = arg(argv, 10);
    a.left = arg(argv, 11);
    a.top = arg(argv, 12);
    a.step_x = arg(argv, 13);
    a.step_y = arg(argv, 14);
    a.mult = arg(argv, 15);
    a.shift = arg(argv, 16);
    a.zero_point = arg(argv, 17);
    a.prec = arg(argv, 18);
    a.swap = arg(argv, 19);
    a.dst_addr = arg(argv, 20);
    a.dst_row = arg(argv, 21);
    a.dst_pix = arg(argv, 22);
    a.y0 = 0;             // (the whole input: one band of all net_h rows)
    a.rows = a.net_h;
    pre_stats_t st;
    ap_uint<1> ok = 0;
    pre_top(ddr.data(), a, st, ok);
    for (size_t i = 0; i < n; i++) {
        const ap_uint<8> v = ddr[i / PRE_AXI_BYTES] >> (8 * (i % PRE_AXI_BYTES));
        bytes[i] = (unsigned char)v.to_uint();
    }
    FILE *o = std::fopen(argv[2], "wb");
    if (!o || std::fwrite(bytes.data(), 1, n, o) != n) {
        std::fprintf(stderr, "pre_tb: cannot write %s\n", argv[2]);
        return 2;
    }
    std::fclose(o);
    std::printf("ok=%d fetch_runs=%u rows_fetched=%u fetch_beats=%u pixel_steps=%u write_beats=%u requests=%u\n",
                (int)ok, st.fetch_runs.to_uint(), st.rows_fetched.to_uint(), st.fetch_beats.to_uint(),
                st.pixel_steps.to_uint(), st.write_beats.to_uint(), st.requests.to_uint());
    return 0;
}
