// The units' AXI4 master (DW bits) onto NP HP ports of DW / NP bits each (Zynq UltraScale+ S_AXI_HPn_FPD, at most
// 128 bits, UG1085 ch. 35): NP = 1 passes it through; NP = 2 is one burst splitter (rtl/axi_hp_split.sv: the first
// half of every burst on port 0, the second on port 1); NP = 4 is a tree of three: the root splits every DW-bit
// burst into two halves of DW / 2 bits, and each half is split again, so port p carries the burst's p-th quarter
// (ports 0, 1 from the first half, 2, 3 from the second). Every splitter keeps its parts within the burst's 4 KB
// page, beat-aligned, INCR, one AXI ID, in order, so the tree's ports are four such masters. Only the channels
// that vary are here (address, length, valid / ready, data, strobes, last, responses' valid / ready); the
// constant fields (ID 0, size log2(DW / NP / 8), INCR, cache, prot) are the top's (rtl/accel_top.sv).
// Packed per port p: m_x[p * w +: w]. The x-side read and write responses are OKAY with ID 0 when split (one ID,
// in order); with one port they are the port's.
`default_nettype none
module axi_hp_ports #(
  parameter int NP = 2,                 // HP ports: 1, 2 or 4
  parameter int DW = 256,               // the units' beat (bits)
  parameter int AW = 40,                // address bits
  parameter int OUTST = 32,             // per splitter: bursts in flight per direction
  parameter int FDEPTH = 64             // per splitter: data FIFO words per port and direction
) (
  input  wire                  clk,
  input  wire                  rst_n,
  // ---- the units' master (slave side here)
  input  wire [AW-1:0]         s_araddr,
  input  wire [7:0]            s_arlen,
  input  wire                  s_arvalid,
  output logic                 s_arready,
  output logic [DW-1:0]        s_rdata,
  output logic [1:0]           s_rresp,
  output logic                 s_rlast,
  output logic                 s_rvalid,
  input  wire                  s_rready,
  input  wire [AW-1:0]         s_awaddr,
  input  wire [7:0]            s_awlen,
  input  wire                  s_awvalid,
  output logic                 s_awready,
  input  wire [DW-1:0]         s_wdata,
  input  wire [DW/8-1:0]       s_wstrb,
  input  wire                  s_wlast,
  input  wire                  s_wvalid,
  output logic                 s_wready,
  output logic [1:0]           s_bresp,
  output logic                 s_bvalid,
  input  wire                  s_bready,
  // ---- the HP ports, DW / NP bits each
  output logic [NP*AW-1:0]     m_araddr,
  output logic [NP*8-1:0]      m_arlen,
  output logic [NP-1:0]        m_arvalid,
  input  wire  [NP-1:0]        m_arready,
  input  wire  [DW-1:0]        m_rdata,
  input  wire  [NP*2-1:0]      m_rresp,
  input  wire  [NP-1:0]        m_rlast,
  input  wire  [NP-1:0]        m_rvalid,
  output logic [NP-1:0]        m_rready,
  output logic [NP*AW-1:0]     m_awaddr,
  output logic [NP*8-1:0]      m_awlen,
  output logic [NP-1:0]        m_awvalid,
  input  wire  [NP-1:0]        m_awready,
  output logic [DW-1:0]        m_wdata,
  output logic [DW/8-1:0]      m_wstrb,
  output logic [NP-1:0]        m_wlast,
  output logic [NP-1:0]        m_wvalid,
  input  wire  [NP-1:0]        m_wready,
  input  wire  [NP*2-1:0]      m_bresp,
  input  wire  [NP-1:0]        m_bvalid,
  output logic [NP-1:0]        m_bready
);
  if (NP != 1 && NP != 2 && NP != 4) begin : g_bad_np
    $error("axi_hp_ports: NP must be 1, 2 or 4 HP ports");
  end
  if (NP == 1) begin : g_one
    wire unused_clk = &{1'b0, clk, rst_n, 1'b0};
    assign {m_araddr, m_arlen, m_arvalid, m_rready} = {s_araddr, s_arlen, s_arvalid, s_rready};
    assign {s_arready, s_rdata, s_rresp, s_rlast, s_rvalid} = {m_arready, m_rdata, m_rresp, m_rlast, m_rvalid};
    assign {m_awaddr, m_awlen, m_awvalid, m_wdata, m_wstrb, m_wlast, m_wvalid, m_bready}
         = {s_awaddr, s_awlen, s_awvalid, s_wdata, s_wstrb, s_wlast, s_wvalid, s_bready};
    assign {s_awready, s_wready, s_bresp, s_bvalid} = {m_awready, m_wready, m_bresp, m_bvalid};
  end else if (NP == 2) begin : g_two
    axi_hp_split #(.DW(DW), .AW(AW), .OUTST(OUTST), .FDEPTH(FDEPTH)) u_split (
      .clk, .rst_n, .s_araddr, .s_arlen, .s_arvalid, .s_arready, .s_rdata, .s_rlast, .s_rvalid, .s_rready,
      .s_awaddr, .s_awlen, .s_awvalid, .s_awready, .s_wdata, .s_wstrb, .s_wvalid, .s_wready, .s_bvalid, .s_bready,
      .m_araddr, .m_arlen, .m_arvalid, .m_arready, .m_rdata, .m_rlast, .m_rvalid, .m_rready, .m_awaddr, .m_awlen,
      .m_awvalid, .m_awready, .m_wdata, .m_wstrb, .m_wlast, .m_wvalid, .m_wready, .m_bvalid, .m_bready);
    assign {s_rresp, s_bresp} = '0;
    wire unused = &{1'b0, s_wlast, m_rresp, m_bresp, 1'b0};
  end else begin : g_four
    // the root's two halves (h: DW / 2 bits), each the slave side of a leaf splitter
    localparam int HW = DW / 2;
    logic [2*AW-1:0] h_araddr, h_awaddr;
    logic [15:0] h_arlen, h_awlen;
    logic [1:0] h_arvalid, h_arready, h_rlast, h_rvalid, h_rready, h_awvalid, h_awready, h_wlast, h_wvalid,
                h_wready, h_bvalid, h_bready;
    logic [DW-1:0] h_rdata, h_wdata;
    logic [DW/8-1:0] h_wstrb;
    axi_hp_split #(.DW(DW), .AW(AW), .OUTST(OUTST), .FDEPTH(FDEPTH)) u_root (
      .clk, .rst_n, .s_araddr, .s_arlen, .s_arvalid, .s_arready, .s_rdata, .s_rlast, .s_rvalid, .s_rready,
      .s_awaddr, .s_awlen, .s_awvalid, .s_awready, .s_wdata, .s_wstrb, .s_wvalid, .s_wready, .s_bvalid, .s_bready,
      .m_araddr(h_araddr), .m_arlen(h_arlen), .m_arvalid(h_arvalid), .m_arready(h_arready), .m_rdata(h_rdata),
      .m_rlast(h_rlast), .m_rvalid(h_rvalid), .m_rready(h_rready), .m_awaddr(h_awaddr), .m_awlen(h_awlen),
      .m_awvalid(h_awvalid), .m_awready(h_awready), .m_wdata(h_wdata), .m_wstrb(h_wstrb), .m_wlast(h_wlast),
      .m_wvalid(h_wvalid), .m_wready(h_wready), .m_bvalid(h_bvalid), .m_bready(h_bready));
    for (genvar h = 0; h < 2; h++) begin : g_leaf
      axi_hp_split #(.DW(HW), .AW(AW), .OUTST(OUTST), .FDEPTH(FDEPTH)) u_leaf (
        .clk, .rst_n, .s_araddr(h_araddr[h * AW +: AW]), .s_arlen(h_arlen[h * 8 +: 8]), .s_arvalid(h_arvalid[h]),
        .s_arready(h_arready[h]), .s_rdata(h_rdata[h * HW +: HW]), .s_rlast(h_rlast[h]), .s_rvalid(h_rvalid[h]),
        .s_rready(h_rready[h]), .s_awaddr(h_awaddr[h * AW +: AW]), .s_awlen(h_awlen[h * 8 +: 8]),
        .s_awvalid(h_awvalid[h]), .s_awready(h_awready[h]), .s_wdata(h_wdata[h * HW +: HW]),
        .s_wstrb(h_wstrb[h * HW / 8 +: HW / 8]), .s_wvalid(h_wvalid[h]), .s_wready(h_wready[h]),
        .s_bvalid(h_bvalid[h]), .s_bready(h_bready[h]),
        .m_araddr(m_araddr[2 * h * AW +: 2 * AW]), .m_arlen(m_arlen[16 * h +: 16]),
        .m_arvalid(m_arvalid[2 * h +: 2]), .m_arready(m_arready[2 * h +: 2]), .m_rdata(m_rdata[h * HW +: HW]),
        .m_rlast(m_rlast[2 * h +: 2]), .m_rvalid(m_rvalid[2 * h +: 2]), .m_rready(m_rready[2 * h +: 2]),
        .m_awaddr(m_awaddr[2 * h * AW +: 2 * AW]), .m_awlen(m_awlen[16 * h +: 16]),
        .m_awvalid(m_awvalid[2 * h +: 2]), .m_awready(m_awready[2 * h +: 2]), .m_wdata(m_wdata[h * HW +: HW]),
        .m_wstrb(m_wstrb[h * HW / 8 +: HW / 8]), .m_wlast(m_wlast[2 * h +: 2]), .m_wvalid(m_wvalid[2 * h +: 2]),
        .m_wready(m_wready[2 * h +: 2]), .m_bvalid(m_bvalid[2 * h +: 2]), .m_bready(m_bready[2 * h +: 2]));
    end
    assign {s_rresp, s_bresp} = '0;
    wire unused = &{1'b0, s_wlast, h_wlast, m_rresp, m_bresp, 1'b0};
  end
endmodule
`default_nettype wire
