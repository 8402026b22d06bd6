// pre_top.cpp -- test fixture (tests/backends/test_hls_pre.py): a small Vitis HLS top around accel_pre
// (hls_templates/kernel/accel_kernel_pre.h), so that the rule checker analyses PRE's loops from a top with its
// interface (python -m generator.backends.hls.lint --loops <folder holding this file, the header and accel_maxi.h>)
// and the C-simulation driver pre_tb.cpp calls what synthesis would get. Not part of the kernel's five tops.
#include "accel_kernel_pre.h"

void pre_top(maxi<pre_beat_t> ddr, pre_args_t args, pre_stats_t &stats, ap_uint<1> &ok) {
// one bundle: the frame's reads on its read channel, the output's writes on its write channel (a read and a write
// beat per cycle); the rows' bursts of up to 3 x 4096 bytes are cut into page-sized AXI bursts by the adapter, two
// row requests in flight; PRE_WR_OUTSTANDING write requests without their response
#pragma HLS INTERFACE mode=m_axi port=ddr bundle=pre_gmem offset=slave depth=4096 max_read_burst_length=128 max_write_burst_length=128 num_read_outstanding=4 num_write_outstanding=16
#pragma HLS INTERFACE mode=s_axilite port=args bundle=control
#pragma HLS INTERFACE mode=s_axilite port=stats bundle=control
#pragma HLS INTERFACE mode=s_axilite port=ok bundle=control
#pragma HLS INTERFACE mode=s_axilite port=return bundle=control
    ok = accel_pre(ddr, args, stats) ? 1 : 0;
}
