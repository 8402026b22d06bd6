// AXI4 write channels of two units (a: STORE, b: PRE, rtl/pre_insn.sv) merged onto one master, burst by burst.
// AW: each accepted address is one unit's burst; a burst offered to the master keeps its unit until accepted (AXI4:
// awvalid and awaddr stable until awready); when both units offer, the one that did not have the last burst goes
// first (round robin). The unit of every accepted burst enters two queues in address order: the W queue, whose head
// names the unit whose beats pass (AXI4: W data in AW order, no interleaving; popped by the burst's last beat), and
// the B queue, whose head takes the next response (one AXI ID: responses in order; popped by the response). So the
// channel changes hands between any two bursts without waiting for responses. A unit must issue a burst's address
// only once it can send its beats back to back (rtl/pre_wr.sv holds a burst's beats before its address; STORE
// streams OBUF; a Vitis HLS m_axi with config_interface -m_axi_conservative_mode, run_hls.tcl), or the other unit's
// later bursts wait behind its beats.
// Package-free (parameters only): the RTL's top (rtl/accel_top.sv) and the HLS block design's DDR path
// (hls_templates/bd/accel_hp.v, which has no accel_pkg) instantiate this one module.
// Legend: held / hsel an offered burst not yet accepted and its unit, last the unit of the last accepted burst.
`default_nettype none
module axi_wr_arb #(
  parameter int AW = 40,                    // address bits
  parameter int DW = 256,                   // data bits
  parameter int QDEPTH = 64                 // bursts accepted and not yet answered (a power of two)
) (
  input  wire               clk,
  input  wire               rst_n,
  // unit a (STORE)
  input  wire [AW-1:0]      a_awaddr,
  input  wire [7:0]         a_awlen,
  input  wire               a_awvalid,
  output logic              a_awready,
  input  wire [DW-1:0]      a_wdata,
  input  wire [DW/8-1:0]    a_wstrb,
  input  wire               a_wlast,
  input  wire               a_wvalid,
  output logic              a_wready,
  output logic              a_bvalid,
  input  wire               a_bready,
  // unit b (PRE)
  input  wire [AW-1:0]      b_awaddr,
  input  wire [7:0]         b_awlen,
  input  wire               b_awvalid,
  output logic              b_awready,
  input  wire [DW-1:0]      b_wdata,
  input  wire [DW/8-1:0]    b_wstrb,
  input  wire               b_wlast,
  input  wire               b_wvalid,
  output logic              b_wready,
  output logic              b_bvalid,
  input  wire               b_bready,
  // the master
  output logic [AW-1:0]     m_awaddr,
  output logic [7:0]        m_awlen,
  output logic              m_awvalid,
  input  wire               m_awready,
  output logic [DW-1:0]     m_wdata,
  output logic [DW/8-1:0]   m_wstrb,
  output logic              m_wlast,
  output logic              m_wvalid,
  input  wire               m_wready,
  input  wire               m_bvalid,
  output logic              m_bready
);
  // ---- AW
  logic held, hsel, last;
  logic wq_full, bq_full, wq_empty, bq_empty, wq_head, bq_head;
  wire room = !wq_full && !bq_full;                    // (only an accepted burst fills a queue: stable while offered)
  wire sel = held ? hsel : (a_awvalid && b_awvalid) ? !last : b_awvalid;
  assign m_awvalid = room && (sel ? b_awvalid : a_awvalid);
  assign m_awaddr = sel ? b_awaddr : a_awaddr;
  assign m_awlen = sel ? b_awlen : a_awlen;
  assign a_awready = room && !sel && m_awready;
  assign b_awready = room && sel && m_awready;
  wire aw_fire = m_awvalid && m_awready;
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      held <= 1'b0;
      last <= 1'b1;
    end else begin
      held <= m_awvalid && !m_awready;
      if (aw_fire) last <= sel;
    end
    hsel <= sel;
  end
  // ---- W: the head burst's unit
  assign m_wvalid = !wq_empty && (wq_head ? b_wvalid : a_wvalid);
  assign m_wdata = wq_head ? b_wdata : a_wdata;
  assign m_wstrb = wq_head ? b_wstrb : a_wstrb;
  assign m_wlast = wq_head ? b_wlast : a_wlast;
  assign a_wready = !wq_empty && !wq_head && m_wready;
  assign b_wready = !wq_empty && wq_head && m_wready;
  // ---- B: the oldest unanswered burst's unit
  assign m_bready = !bq_empty && (bq_head ? b_bready : a_bready);
  assign a_bvalid = m_bvalid && !bq_empty && !bq_head;
  assign b_bvalid = m_bvalid && !bq_empty && bq_head;
  /* verilator lint_off PINCONNECTEMPTY */
  sync_fifo #(.W(1), .DEPTH(QDEPTH), .DISTRIBUTED(1'b1)) u_wq (
    .clk, .rst_n, .clr(1'b0), .wr(aw_fire), .wdata(sel), .rd(m_wvalid && m_wready && m_wlast), .rdata(wq_head),
    .empty(wq_empty), .full(wq_full), .count());
  sync_fifo #(.W(1), .DEPTH(QDEPTH), .DISTRIBUTED(1'b1)) u_bq (
    .clk, .rst_n, .clr(1'b0), .wr(aw_fire), .wdata(sel), .rd(m_bvalid && m_bready), .rdata(bq_head),
    .empty(bq_empty), .full(bq_full), .count());
  /* verilator lint_on PINCONNECTEMPTY */
endmodule
`default_nettype wire
