// The RTL accelerator as a Vivado IP (`invoke build --kernel rtl`, generator/backends/rtl/ip.py): rtl/accel_top.sv
// under the port names the Vivado IP packager infers (case-insensitively) and Vitis HLS gives its blocks: ap_clk,
// ap_rst_n (active low), the AXI4-Lite slave s_axi_control_* (the ap_ctrl_hs register map of generator/spec/isa.py),
// the AXI4 master m_axi_gmem_* and the level interrupt, so the block design and the PYNQ driver treat it as the
// HLS kernel's control block (host/registers.py RTL_KERNEL_VLNV). ROM_FILE: the $readmemh instruction ROM (empty:
// none; the host fetches the program from DDR).
`default_nettype none
module accel_rtl
  import accel_pkg::*;
#(
  parameter string ROM_FILE = ""              // generator/backends/rtl/ip.py sets the ROM image of the program
) (
  input  wire                 ap_clk,
  input  wire                 ap_rst_n,
  input  wire [AXIL_AW-1:0]   s_axi_control_awaddr,
  input  wire                 s_axi_control_awvalid,
  output wire                 s_axi_control_awready,
  input  wire [31:0]          s_axi_control_wdata,
  input  wire [3:0]           s_axi_control_wstrb,
  input  wire                 s_axi_control_wvalid,
  output wire                 s_axi_control_wready,
  output wire [1:0]           s_axi_control_bresp,
  output wire                 s_axi_control_bvalid,
  input  wire                 s_axi_control_bready,
  input  wire [AXIL_AW-1:0]   s_axi_control_araddr,
  input  wire                 s_axi_control_arvalid,
  output wire                 s_axi_control_arready,
  output wire [31:0]          s_axi_control_rdata,
  output wire [1:0]           s_axi_control_rresp,
  output wire                 s_axi_control_rvalid,
  input  wire                 s_axi_control_rready,
  /* verilator lint_off SYMRSVDWORD */
  output wire                 interrupt,      // level, high while ap_done is latched (ap_ctrl_hs)
  /* verilator lint_on SYMRSVDWORD */
  output wire [0:0]           m_axi_gmem_awid,
  output wire [AXI_AW-1:0]    m_axi_gmem_awaddr,
  output wire [7:0]           m_axi_gmem_awlen,
  output wire [2:0]           m_axi_gmem_awsize,
  output wire [1:0]           m_axi_gmem_awburst,
  output wire                 m_axi_gmem_awlock,
  output wire [3:0]           m_axi_gmem_awcache,
  output wire [2:0]           m_axi_gmem_awprot,
  output wire                 m_axi_gmem_awvalid,
  input  wire                 m_axi_gmem_awready,
  output wire [AXI_DW-1:0]    m_axi_gmem_wdata,
  output wire [AXI_BYTES-1:0] m_axi_gmem_wstrb,
  output wire                 m_axi_gmem_wlast,
  output wire                 m_axi_gmem_wvalid,
  input  wire                 m_axi_gmem_wready,
  input  wire [0:0]           m_axi_gmem_bid,
  input  wire [1:0]           m_axi_gmem_bresp,
  input  wire                 m_axi_gmem_bvalid,
  output wire                 m_axi_gmem_bready,
  output wire [0:0]           m_axi_gmem_arid,
  output wire [AXI_AW-1:0]    m_axi_gmem_araddr,
  output wire [7:0]           m_axi_gmem_arlen,
  output wire [2:0]           m_axi_gmem_arsize,
  output wire [1:0]           m_axi_gmem_arburst,
  output wire                 m_axi_gmem_arlock,
  output wire [3:0]           m_axi_gmem_arcache,
  output wire [2:0]           m_axi_gmem_arprot,
  output wire                 m_axi_gmem_arvalid,
  input  wire                 m_axi_gmem_arready,
  input  wire [0:0]           m_axi_gmem_rid,
  input  wire [AXI_DW-1:0]    m_axi_gmem_rdata,
  input  wire [1:0]           m_axi_gmem_rresp,
  input  wire                 m_axi_gmem_rlast,
  input  wire                 m_axi_gmem_rvalid,
  output wire                 m_axi_gmem_rready
);
  accel_top #(.ROM_FILE(ROM_FILE)) u_top (
    .clk(ap_clk), .rst_n(ap_rst_n), .s_axil_awaddr(s_axi_control_awaddr), .s_axil_awvalid(s_axi_control_awvalid),
    .s_axil_awready(s_axi_control_awready), .s_axil_wdata(s_axi_control_wdata), .s_axil_wstrb(s_axi_control_wstrb),
    .s_axil_wvalid(s_axi_control_wvalid), .s_axil_wready(s_axi_control_wready), .s_axil_bresp(s_axi_control_bresp),
    .s_axil_bvalid(s_axi_control_bvalid), .s_axil_bready(s_axi_control_bready), .s_axil_araddr(s_axi_control_araddr),
    .s_axil_arvalid(s_axi_control_arvalid), .s_axil_arready(s_axi_control_arready),
    .s_axil_rdata(s_axi_control_rdata), .s_axil_rresp(s_axi_control_rresp), .s_axil_rvalid(s_axi_control_rvalid),
    .s_axil_rready(s_axi_control_rready), /* verilator lint_off SYMRSVDWORD */ .interrupt(interrupt), /* verilator lint_on SYMRSVDWORD */ .m_axi_awid(m_axi_gmem_awid),
    .m_axi_awaddr(m_axi_gmem_awaddr), .m_axi_awlen(m_axi_gmem_awlen), .m_axi_awsize(m_axi_gmem_awsize),
    .m_axi_awburst(m_axi_gmem_awburst), .m_axi_awlock(m_axi_gmem_awlock), .m_axi_awcache(m_axi_gmem_awcache),
    .m_axi_awprot(m_axi_gmem_awprot), .m_axi_awvalid(m_axi_gmem_awvalid), .m_axi_awready(m_axi_gmem_awready),
    .m_axi_wdata(m_axi_gmem_wdata), .m_axi_wstrb(m_axi_gmem_wstrb), .m_axi_wlast(m_axi_gmem_wlast),
    .m_axi_wvalid(m_axi_gmem_wvalid), .m_axi_wready(m_axi_gmem_wready), .m_axi_bid(m_axi_gmem_bid),
    .m_axi_bresp(m_axi_gmem_bresp), .m_axi_bvalid(m_axi_gmem_bvalid), .m_axi_bready(m_axi_gmem_bready),
    .m_axi_arid(m_axi_gmem_arid), .m_axi_araddr(m_axi_gmem_araddr), .m_axi_arlen(m_axi_gmem_arlen),
    .m_axi_arsize(m_axi_gmem_arsize), .m_axi_arburst(m_axi_gmem_arburst), .m_axi_arlock(m_axi_gmem_arlock),
    .m_axi_arcache(m_axi_gmem_arcache), .m_axi_arprot(m_axi_gmem_arprot), .m_axi_arvalid(m_axi_gmem_arvalid),
    .m_axi_arready(m_axi_gmem_arready), .m_axi_rid(m_axi_gmem_rid), .m_axi_rdata(m_axi_gmem_rdata),
    .m_axi_rresp(m_axi_gmem_rresp), .m_axi_rlast(m_axi_gmem_rlast), .m_axi_rvalid(m_axi_gmem_rvalid),
    .m_axi_rready(m_axi_gmem_rready)
  );
endmodule
`default_nettype wire
