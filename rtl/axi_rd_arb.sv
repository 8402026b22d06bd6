// AXI4 read channel shared by fetch (fe_) and LOAD (ld_): AR arbitration per address (fetch first; an address on
// the bus not yet accepted keeps its owner) and in-order R routing by a FIFO of the owners of the outstanding
// bursts (one AXI ID: data returns in order). Fetch keeps at most one burst and LOAD at most LD_OUTST in flight,
// so the owner FIFO (>= LD_OUTST + 1 entries) never fills. *_rvalid: a beat of that requester's burst is on R.
`default_nettype none
module axi_rd_arb
  import accel_pkg::*;
(
  input  wire                   clk,
  input  wire                   rst_n,
  input  wire                   fe_arvalid,
  input  wire [63:0]            fe_araddr,
  input  wire [7:0]             fe_arlen,
  output logic                  fe_ar_ok,       // fetch's address accepted
  input  wire                   fe_rready,
  output logic                  fe_rvalid,
  input  wire                   ld_arvalid,
  input  wire [63:0]            ld_araddr,
  input  wire [7:0]             ld_arlen,
  output logic                  ld_ar_ok,
  input  wire                   ld_rready,
  output logic                  ld_rvalid,
  output logic                  busy,           // a burst is outstanding
  output logic [0:0]            m_axi_arid,
  output logic [AXI_AW-1:0]     m_axi_araddr,
  output logic [7:0]            m_axi_arlen,
  output logic [2:0]            m_axi_arsize,
  output logic [1:0]            m_axi_arburst,
  output logic                  m_axi_arlock,
  output logic [3:0]            m_axi_arcache,
  output logic [2:0]            m_axi_arprot,
  output logic                  m_axi_arvalid,
  input  wire                   m_axi_arready,
  input  wire                   m_axi_rlast,
  input  wire                   m_axi_rvalid,
  output logic                  m_axi_rready
);
  logic ar_hold, ar_hold_fe;            // an address is on the bus, not yet accepted: keep its owner
  wire ar_sel_fe = ar_hold ? ar_hold_fe : fe_arvalid;
  assign m_axi_arid = '0;
  assign m_axi_arsize = 3'(LOG2_BYTES);
  assign m_axi_arburst = 2'b01;
  assign m_axi_arlock = 1'b0;
  assign m_axi_arcache = 4'b0011;
  assign m_axi_arprot = 3'b000;
  assign m_axi_arvalid = ar_sel_fe ? fe_arvalid : ld_arvalid;
  assign m_axi_araddr = AXI_AW'(ar_sel_fe ? fe_araddr : ld_araddr);
  assign m_axi_arlen = ar_sel_fe ? fe_arlen : ld_arlen;
  wire ar_fire = m_axi_arvalid && m_axi_arready;
  assign fe_ar_ok = ar_fire && ar_sel_fe;
  assign ld_ar_ok = ar_fire && !ar_sel_fe;
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      ar_hold <= 1'b0;
      ar_hold_fe <= 1'b0;
    end else begin
      ar_hold <= m_axi_arvalid && !m_axi_arready;
      ar_hold_fe <= ar_sel_fe;
    end
  end
  localparam int RQ_DEPTH = 2 ** $clog2(LD_OUTST + 1);   // >= LD_OUTST + 1, a power of two
  logic rq_empty, rq_full, rq_head_ld;
  logic [$clog2(RQ_DEPTH):0] rq_count;
  wire r_fire = m_axi_rvalid && m_axi_rready;
  sync_fifo #(.W(1), .DEPTH(RQ_DEPTH)) u_rq (
    .clk, .rst_n, .clr(1'b0), .wr(ar_fire), .wdata(!ar_sel_fe), .rd(r_fire && m_axi_rlast), .rdata(rq_head_ld),
    .empty(rq_empty), .full(rq_full), .count(rq_count));
  assign m_axi_rready = !rq_empty && (rq_head_ld ? ld_rready : fe_rready);
  assign fe_rvalid = !rq_empty && !rq_head_ld && m_axi_rvalid;
  assign ld_rvalid = !rq_empty && rq_head_ld && m_axi_rvalid;
  assign busy = !rq_empty;
  wire unused = &{1'b0, rq_full, rq_count, 1'b0};
endmodule
`default_nettype wire
