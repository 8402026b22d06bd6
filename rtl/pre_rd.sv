// PRE's frame-row reader (rtl/pre.sv), the HLS kernel's pre_request / PRE_FETCH (hls_templates/kernel/
// accel_kernel_pre.h): one source row per `go`: its first 3 x npix bytes from DDR address `ra` (any byte
// alignment) as the whole beats holding them, read in AXI4 INCR bursts (rtl/pre_burst.sv: 4 KB pages, 256 beats),
// each R beat as it is taken written raw into line buffer `lbuf` (one beat per cycle, beat k of the row at
// address k; the row's pixel 0 at byte ra mod B of beat 0). A second row may be requested once the first one's
// bursts are all out (`ar_free`), so its read latency overlaps the first row's beats (the kernel requests both rows
// of an output row before taking a beat); the R side holds the rows requested (at most two) in order. `busy` until
// the last beat of the last row requested is written.
// Cycles of a fetch of one or two rows: 3 of setup, the read latency, then one per beat (the rows' beats back to
// back while the DDR answers at a beat per cycle).
// Legend: su the setup stages, q_ the rows requested (q_[0] the one whose beats arrive), k the next beat's address,
// w_ the line-buffer write (registered).
`default_nettype none
module pre_rd
  import accel_pkg::*;
#(
  parameter int DW = AXI_DW,
  parameter int KW = 10                     // line-buffer address bits (rtl/pre.sv's PRE_LINE_BEATS words)
) (
  input  wire               clk,
  input  wire               rst_n,
  input  wire               go,
  input  wire [AXI_AW-1:0]  ra,
  input  wire [1:0]         lbuf,           // the line buffer the row goes to (rtl/pre.sv: pair, buffer in it)
  input  wire [12:0]        npix,           // 1..4096
  output logic              ar_free,        // a `go` is taken (no row's bursts pending)
  output logic              busy,
  // line-buffer write (registered): beat w_addr of line buffer w_buf
  output logic              w_en,
  output logic [1:0]        w_buf,
  output logic [KW-1:0]     w_addr,
  output logic [DW-1:0]     w_data,
  // AXI4 read channels
  output logic [AXI_AW-1:0] m_axi_araddr,
  output logic [7:0]        m_axi_arlen,
  output logic              m_axi_arvalid,
  input  wire               m_axi_arready,
  input  wire [DW-1:0]      m_axi_rdata,
  input  wire               m_axi_rlast,
  input  wire               m_axi_rvalid,
  output logic              m_axi_rready
);
  localparam int B = DW / 8, LB = $clog2(B);
  // ---- setup: beats of the row (its bytes from byte lo of its first beat), the burst splitter
  logic su1, su2;
  logic [1:0] buf1;
  logic [15:0] beats;
  logic [AXI_AW-1:0] ra_r;
  logic [LB:0] lo1;                                                   // the first beat's byte + B - 1
  logic [14:0] nbytes;
  always_ff @(posedge clk) begin
    su1 <= rst_n && go;
    su2 <= rst_n && su1;
    if (go) begin
      ra_r <= ra;
      lo1 <= (LB + 1)'(ra[LB-1:0]) + (LB + 1)'(B - 1);
      buf1 <= lbuf;
      nbytes <= 15'(npix) + (15'(npix) << 1);
    end
    if (su1) beats <= 16'((17'(lo1) + 17'(nbytes)) >> LB);   // (one carry chain)
  end
  logic bvalid, blast;
  logic [8:0] blen;
  pre_burst #(.DW(DW)) u_ar (
    .clk, .rst_n, .init(su2), .addr(ra_r & ~AXI_AW'(B - 1)), .beats, .fire(m_axi_arvalid && m_axi_arready),
    .valid(bvalid), .cur(m_axi_araddr), .blen, .blast);
  assign m_axi_arvalid = bvalid;
  assign m_axi_arlen = 8'(blen - 9'd1);
  assign ar_free = !(go || su1 || su2 || bvalid);
  // ---- the rows requested (pushed at su2, before their first burst) and their R beats: every beat is taken
  logic [1:0] qn;
  logic [KW-1:0] q_last [2];                                          // a row's last beat (beats - 1)
  logic [1:0] q_buf [2];
  logic [KW-1:0] k;
  wire take = m_axi_rvalid;
  wire pop = take && k == q_last[0];
  assign m_axi_rready = 1'b1;
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      qn <= '0;
      k <= '0;
      w_en <= 1'b0;
    end else begin
      qn <= qn + 2'(su2) - 2'(pop);
      if (take) k <= pop ? '0 : k + KW'(1);
      w_en <= take;
    end
    if (pop) {q_last[0], q_buf[0]} <= {q_last[1], q_buf[1]};
    if (su2) begin                                                    // into the first free entry after the pop
      if (qn == 2'(pop)) {q_last[0], q_buf[0]} <= {KW'(beats - 16'd1), buf1};
      else {q_last[1], q_buf[1]} <= {KW'(beats - 16'd1), buf1};
    end
    w_buf <= q_buf[0];
    w_addr <= k;
    w_data <= m_axi_rdata;
  end
  assign busy = !ar_free || qn != 2'd0 || w_en;
  wire unused = &{1'b0, blast, m_axi_rlast, 1'b0};
endmodule
`default_nettype wire
