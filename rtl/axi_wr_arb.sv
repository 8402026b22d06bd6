// AXI4 write channels shared by STORE (a_) and PRE (b_, rtl/pre_insn.sv) onto the units' master: one owner at a
// time (own: 0 STORE, 1 PRE) has AW, W and B. The other unit's address (awvalid) while the owner offers none asks
// for the channel (sw): the owner's addresses are held back until its accepted bursts have sent their data (wcnt)
// and got their responses (bcnt), then the channel changes hands; so W beats follow their addresses in order and
// every response goes to the unit whose burst it is (one AXI ID: responses in order). A unit's W beats pass only
// while it has an accepted burst without its last beat (no W ahead of AW across owners; registered: w_ok). Both
// units take responses at once (bready 1). No deadlock: an owner's bursts finish without the other unit, and each
// unit drops awvalid between its rows / segments, where the other one gets the channel.
`default_nettype none
module axi_wr_arb
  import accel_pkg::*;
(
  input  wire                   clk,
  input  wire                   rst_n,
  // STORE
  input  wire [AXI_AW-1:0]      a_awaddr,
  input  wire [7:0]             a_awlen,
  input  wire                   a_awvalid,
  output logic                  a_awready,
  input  wire [AXI_DW-1:0]      a_wdata,
  input  wire [AXI_BYTES-1:0]   a_wstrb,
  input  wire                   a_wlast,
  input  wire                   a_wvalid,
  output logic                  a_wready,
  output logic                  a_bvalid,
  // PRE
  input  wire [AXI_AW-1:0]      b_awaddr,
  input  wire [7:0]             b_awlen,
  input  wire                   b_awvalid,
  output logic                  b_awready,
  input  wire [AXI_DW-1:0]      b_wdata,
  input  wire [AXI_BYTES-1:0]   b_wstrb,
  input  wire                   b_wlast,
  input  wire                   b_wvalid,
  output logic                  b_wready,
  output logic                  b_bvalid,
  // the units' master
  output logic [AXI_AW-1:0]     m_awaddr,
  output logic [7:0]            m_awlen,
  output logic                  m_awvalid,
  input  wire                   m_awready,
  output logic [AXI_DW-1:0]     m_wdata,
  output logic [AXI_BYTES-1:0]  m_wstrb,
  output logic                  m_wlast,
  output logic                  m_wvalid,
  input  wire                   m_wready,
  input  wire                   m_bvalid,
  output logic                  m_bready
);
  logic own, sw, w_ok;
  logic [15:0] wcnt, bcnt;                             // the owner's bursts without their last beat / response
  wire o_awvalid = own ? b_awvalid : a_awvalid, o_wvalid = own ? b_wvalid : a_wvalid;
  wire x_awvalid = own ? a_awvalid : b_awvalid;        // the other unit's
  assign m_awvalid = !sw && o_awvalid;
  assign m_awaddr = own ? b_awaddr : a_awaddr;
  assign m_awlen = own ? b_awlen : a_awlen;
  assign a_awready = !sw && !own && m_awready;
  assign b_awready = !sw && own && m_awready;
  assign m_wvalid = w_ok && o_wvalid;
  assign m_wdata = own ? b_wdata : a_wdata;
  assign m_wstrb = own ? b_wstrb : a_wstrb;
  assign m_wlast = own ? b_wlast : a_wlast;
  assign a_wready = w_ok && !own && m_wready;
  assign b_wready = w_ok && own && m_wready;
  assign m_bready = 1'b1;
  assign a_bvalid = m_bvalid && !own;
  assign b_bvalid = m_bvalid && own;
  wire aw_fire = m_awvalid && m_awready;
  wire wl_fire = m_wvalid && m_wready && m_wlast;
  wire [15:0] wcnt_n = wcnt + 16'(aw_fire) - 16'(wl_fire);
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      {own, sw, w_ok} <= '0;
      wcnt <= '0;
      bcnt <= '0;
    end else begin
      wcnt <= wcnt_n;
      w_ok <= wcnt_n != '0;
      bcnt <= bcnt + 16'(aw_fire) - 16'(m_bvalid);
      if (!sw) begin
        sw <= x_awvalid && !o_awvalid;
      end else if (wcnt == '0 && bcnt == '0 && !aw_fire && !m_bvalid) begin
        own <= !own;
        sw <= 1'b0;
      end
    end
  end
endmodule
`default_nettype wire
