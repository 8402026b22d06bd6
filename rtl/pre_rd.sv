// PRE's frame-row reader (rtl/pre.sv): one source row per `go`: its 3 x npix bytes from DDR address `ra` (any
// alignment) read in AXI4 INCR bursts (rtl/pre_burst.sv: 4 KB pages, 256 beats), the R beats into a beat FIFO, and
// two pixels (6 bytes) per cycle cut from a two-beat window into the line buffer's two write ports (pixel x at
// address x, one 24-bit word: channel 0 in bits 7:0). `done` pulses after the row's last pixel write.
// Cycles of a row: 3 of setup, the read latency, then ceil(npix / 2) writes (the window waits for a beat when the
// pixel pair crosses into one not yet arrived).
// Legend: w_ the window ({nxt, cur} beats, p the next pixel's byte in cur), pl pixels left, x the next pixel.
`default_nettype none
module pre_rd
  import accel_pkg::*;
#(
  parameter int DW = AXI_DW
) (
  input  wire               clk,
  input  wire               rst_n,
  input  wire               go,
  input  wire [AXI_AW-1:0]  ra,
  input  wire [12:0]        npix,           // 1..4096
  output logic              done,
  // line-buffer writes (registered): port A pixel x, port B pixel x + 1
  output logic              wa_en,
  output logic              wb_en,
  output logic [11:0]       wa_addr,
  output logic [11:0]       wb_addr,
  output logic [23:0]       wa_data,
  output logic [23:0]       wb_data,
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
  // ---- setup: beats of the row, the burst splitter
  logic su1, su2;
  logic [15:0] beats;
  logic [AXI_AW-1:0] ra_r;
  logic [LB-1:0] lo;
  logic [14:0] nbytes;
  always_ff @(posedge clk) begin
    su1 <= rst_n && go;
    su2 <= rst_n && su1;
    if (go) begin
      ra_r <= ra;
      lo <= ra[LB-1:0];
      nbytes <= 15'(npix) + (15'(npix) << 1);
    end
    if (su1) beats <= 16'((17'(lo) + 17'(nbytes) + 17'(B - 1)) >> LB);
  end
  logic bvalid, blast;
  logic [8:0] blen;
  pre_burst #(.DW(DW)) u_ar (
    .clk, .rst_n, .init(su2), .addr(ra_r & ~AXI_AW'(B - 1)), .beats, .fire(m_axi_arvalid && m_axi_arready),
    .valid(bvalid), .cur(m_axi_araddr), .blen, .blast);
  assign m_axi_arvalid = bvalid;
  assign m_axi_arlen = 8'(blen - 9'd1);
  // ---- R beats into the FIFO
  logic bq_empty, bq_full, pop;
  logic [DW-1:0] bq_head;
  /* verilator lint_off PINCONNECTEMPTY */
  sync_fifo #(.W(DW), .DEPTH(8)) u_bq (
    .clk, .rst_n, .clr(1'b0), .wr(m_axi_rvalid && m_axi_rready), .wdata(m_axi_rdata), .rd(pop), .rdata(bq_head),
    .empty(bq_empty), .full(bq_full), .count());
  /* verilator lint_on PINCONNECTEMPTY */
  assign m_axi_rready = !bq_full;
  // ---- the window: two pixels a cycle while their bytes are in it
  logic [DW-1:0] w_cur, w_nxt;
  logic v_cur, v_nxt, act;
  logic [LB-1:0] p;
  logic [12:0] pl;                                                    // pixels left (>= 1 while act)
  logic pl1;                                                          // pl == 1
  logic [11:0] x;
  wire [2*DW-1:0] win = {w_nxt, w_cur};
  wire [LB:0] p6 = (LB + 1)'(p) + (LB + 1)'(6);
  wire fit = pl1 ? 32'(p) <= B - 3 : 32'(p) <= B - 6;                 // the pixels' bytes are in cur alone
  wire take = act && v_cur && (v_nxt || fit);
  wire last = take && (pl1 || pl == 13'd2);
  wire shift = take && p6[LB];                                        // cur used up
  wire vc_n = shift ? v_nxt : v_cur, vn_n = shift ? 1'b0 : v_nxt;
  assign pop = !bq_empty && act && (!vc_n || !vn_n);
  logic [47:0] sel;
  always_comb for (int i = 0; i < 6; i++) sel[8 * i +: 8] = win[8 * (32'(p) + i) +: 8];
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      {act, v_cur, v_nxt, wa_en, wb_en, done} <= '0;
    end else begin
      wa_en <= take;
      wb_en <= take && !pl1;
      done <= last;
      if (su2) begin
        act <= 1'b1;
      end else if (last) begin
        act <= 1'b0;
      end
      if (last) begin
        v_cur <= 1'b0;
        v_nxt <= 1'b0;
      end else begin
        v_cur <= vc_n || pop;
        v_nxt <= vn_n || (pop && vc_n);
      end
    end
    if (su2) begin
      p <= lo;
      pl <= npix;
      pl1 <= npix == 13'd1;
      x <= '0;
    end else if (take) begin
      p <= p6[LB-1:0];
      pl <= pl - 13'd2;
      pl1 <= pl == 13'd3;
      x <= x + 12'd2;
    end
    if (shift) w_cur <= w_nxt;
    if (pop && !vc_n) w_cur <= bq_head;
    if (pop && vc_n) w_nxt <= bq_head;
    wa_addr <= x;
    wb_addr <= x + 12'd1;
    wa_data <= sel[23:0];
    wb_data <= sel[47:24];
  end
  wire unused = &{1'b0, blast, m_axi_rlast, 1'b0};
endmodule
`default_nettype wire
