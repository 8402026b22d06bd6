// accel_hp.v -- the HLS kernel's DDR path on two HP ports (vivado_bd.tcl adds it as a module reference when the
// board file's accelerator has hp_ports: 2; static, copied by generator/backends/hls/kernel.py with the RTL files
// it instantiates). The same burst splitter as the RTL's (rtl/axi_hp_split.sv, tests/rtl/test_axi_hp_split.py):
//   s_axi_load   AXI4 slave: the LOAD module's m_axi (accel_load_0/m_axi_load_gmem): LOAD's and PRE's reads, PRE's
//                writes (the PRE instruction runs in the load module, accel_kernel_pre.h, on this port)
//   s_axi_store  AXI4 slave, write channels: the STORE module's m_axi (accel_store_0/m_axi_store_gmem)
//   m00_axi      AXI4 master of DW / 2 bits onto S_AXI_HP0_FPD: the first half of every burst
//   m01_axi      AXI4 master of DW / 2 bits onto S_AXI_HP1_FPD: the second half
// so a LOAD, a PRE or a STORE moves DW / 8 bytes per cycle over both ports, as the RTL's units do (the latency
// model's hp_ports: 2). The bursts must be what a Vitis HLS m_axi of DW-bit words issues and the splitter takes:
// INCR, full-width beats at beat-aligned addresses (the host's buffers are page-aligned), within one 4 KB page, at
// most 256 beats, one AXI ID (IDs 1 bit, answered 0, in order). Responses are OKAY; the store interface's read
// channels are tied off (the STORE module only writes).
// Write channels: STORE's (a) and PRE's (b, the load interface's) share the splitter's through rtl/axi_wr_arb.sv,
// the RTL's own arbiter (package-free): burst by burst, W beats in address order, each response to the interface
// whose burst it is (one AXI ID: responses in order), so the channel changes hands between bursts without waiting
// for responses. It relies on each interface sending a burst's beats back to back once its address is accepted: a
// Vitis HLS m_axi issues AW once the burst's data is in its buffer (run_hls.tcl's -m_axi_conservative_mode), as
// rtl/pre_wr.sv does. An HLS m_axi may hold off its bready: the splitter's bready is that of the interface whose
// response is next.
// Addresses: a Vitis HLS m_axi address is 64 bits (run_hls.tcl: config_interface -m_axi_addr64=true, the default;
// UG1399 "config_interface"; 32 bits would reach only the low 4 GB, not DDR_HIGH), so the slave ports take 64 bits
// and the splitter the low AW = 40 (generator/spec/arch.py AXI_ADDR_BITS, as the RTL: the Zynq UltraScale+ address map
// puts all of DDR below 2**40, UG1085 "System Addresses"); the master ports are PS_AW = 49 bits wide, the width of
// S_AXI_HPn_FPD (saxigpN_araddr[48:0] of zynq_ultra_ps_e), zero-extended, so that connect_bd_intf_net joins equal
// ADDR_WIDTHs (UG994, "Parameter Propagation") and assign_bd_address maps DDR_LOW and DDR_HIGH.
module accel_hp #(
    parameter integer DW = 256,         // the modules' m_axi data width (bits)
    parameter integer AW = 40,          // splitter address bits (vivado_bd.tcl sets generator/spec/arch.py AXI_ADDR_BITS, as the RTL)
    parameter integer PS_AW = 49,       // HP port address bits (S_AXI_HPn_FPD)
    parameter integer OUTST = 64,       // bursts in flight per direction (generator/spec/arch.py)
    parameter integer FDEPTH = 128      // splitter data FIFO words per port and direction
) (
    (* X_INTERFACE_PARAMETER = "ASSOCIATED_BUSIF s_axi_load:s_axi_store:m00_axi:m01_axi, ASSOCIATED_RESET aresetn" *)
    input  wire                 aclk,
    input  wire                 aresetn,
    // ---- s_axi_load (the load module's m_axi): LOAD's and PRE's reads
    input  wire [0:0]           s_axi_load_arid,
    input  wire [63:0]          s_axi_load_araddr,
    input  wire [7:0]           s_axi_load_arlen,
    input  wire [2:0]           s_axi_load_arsize,
    input  wire [1:0]           s_axi_load_arburst,
    input  wire                 s_axi_load_arvalid,
    output wire                 s_axi_load_arready,
    output wire [0:0]           s_axi_load_rid,
    output wire [DW-1:0]        s_axi_load_rdata,
    output wire [1:0]           s_axi_load_rresp,
    output wire                 s_axi_load_rlast,
    output wire                 s_axi_load_rvalid,
    input  wire                 s_axi_load_rready,
    // ---- s_axi_load: PRE's writes
    input  wire [0:0]           s_axi_load_awid,
    input  wire [63:0]          s_axi_load_awaddr,
    input  wire [7:0]           s_axi_load_awlen,
    input  wire [2:0]           s_axi_load_awsize,
    input  wire [1:0]           s_axi_load_awburst,
    input  wire                 s_axi_load_awvalid,
    output wire                 s_axi_load_awready,
    input  wire [DW-1:0]        s_axi_load_wdata,
    input  wire [DW/8-1:0]      s_axi_load_wstrb,
    input  wire                 s_axi_load_wlast,
    input  wire                 s_axi_load_wvalid,
    output wire                 s_axi_load_wready,
    output wire [0:0]           s_axi_load_bid,
    output wire [1:0]           s_axi_load_bresp,
    output wire                 s_axi_load_bvalid,
    input  wire                 s_axi_load_bready,
    // ---- s_axi_store (STORE's m_axi): writes
    input  wire [0:0]           s_axi_store_awid,
    input  wire [63:0]          s_axi_store_awaddr,
    input  wire [7:0]           s_axi_store_awlen,
    input  wire [2:0]           s_axi_store_awsize,
    input  wire [1:0]           s_axi_store_awburst,
    input  wire                 s_axi_store_awvalid,
    output wire                 s_axi_store_awready,
    input  wire [DW-1:0]        s_axi_store_wdata,
    input  wire [DW/8-1:0]      s_axi_store_wstrb,
    input  wire                 s_axi_store_wlast,
    input  wire                 s_axi_store_wvalid,
    output wire                 s_axi_store_wready,
    output wire [0:0]           s_axi_store_bid,
    output wire [1:0]           s_axi_store_bresp,
    output wire                 s_axi_store_bvalid,
    input  wire                 s_axi_store_bready,
    input  wire [63:0]          s_axi_store_araddr,
    input  wire [7:0]           s_axi_store_arlen,
    input  wire                 s_axi_store_arvalid,
    output wire                 s_axi_store_arready,
    output wire [DW-1:0]        s_axi_store_rdata,
    output wire [1:0]           s_axi_store_rresp,
    output wire                 s_axi_store_rlast,
    output wire                 s_axi_store_rvalid,
    input  wire                 s_axi_store_rready,
    // ---- m00_axi (S_AXI_HP0_FPD)
    output wire [0:0]           m00_axi_arid,
    output wire [PS_AW-1:0]     m00_axi_araddr,
    output wire [7:0]           m00_axi_arlen,
    output wire [2:0]           m00_axi_arsize,
    output wire [1:0]           m00_axi_arburst,
    output wire [3:0]           m00_axi_arcache,
    output wire [2:0]           m00_axi_arprot,
    output wire                 m00_axi_arvalid,
    input  wire                 m00_axi_arready,
    input  wire [0:0]           m00_axi_rid,
    input  wire [DW/2-1:0]      m00_axi_rdata,
    input  wire [1:0]           m00_axi_rresp,
    input  wire                 m00_axi_rlast,
    input  wire                 m00_axi_rvalid,
    output wire                 m00_axi_rready,
    output wire [0:0]           m00_axi_awid,
    output wire [PS_AW-1:0]     m00_axi_awaddr,
    output wire [7:0]           m00_axi_awlen,
    output wire [2:0]           m00_axi_awsize,
    output wire [1:0]           m00_axi_awburst,
    output wire [3:0]           m00_axi_awcache,
    output wire [2:0]           m00_axi_awprot,
    output wire                 m00_axi_awvalid,
    input  wire                 m00_axi_awready,
    output wire [DW/2-1:0]      m00_axi_wdata,
    output wire [DW/16-1:0]     m00_axi_wstrb,
    output wire                 m00_axi_wlast,
    output wire                 m00_axi_wvalid,
    input  wire                 m00_axi_wready,
    input  wire [0:0]           m00_axi_bid,
    input  wire [1:0]           m00_axi_bresp,
    input  wire                 m00_axi_bvalid,
    output wire                 m00_axi_bready,
    // ---- m01_axi (S_AXI_HP1_FPD)
    output wire [0:0]           m01_axi_arid,
    output wire [PS_AW-1:0]     m01_axi_araddr,
    output wire [7:0]           m01_axi_arlen,
    output wire [2:0]           m01_axi_arsize,
    output wire [1:0]           m01_axi_arburst,
    output wire [3:0]           m01_axi_arcache,
    output wire [2:0]           m01_axi_arprot,
    output wire                 m01_axi_arvalid,
    input  wire                 m01_axi_arready,
    input  wire [0:0]           m01_axi_rid,
    input  wire [DW/2-1:0]      m01_axi_rdata,
    input  wire [1:0]           m01_axi_rresp,
    input  wire                 m01_axi_rlast,
    input  wire                 m01_axi_rvalid,
    output wire                 m01_axi_rready,
    output wire [0:0]           m01_axi_awid,
    output wire [PS_AW-1:0]     m01_axi_awaddr,
    output wire [7:0]           m01_axi_awlen,
    output wire [2:0]           m01_axi_awsize,
    output wire [1:0]           m01_axi_awburst,
    output wire [3:0]           m01_axi_awcache,
    output wire [2:0]           m01_axi_awprot,
    output wire                 m01_axi_awvalid,
    input  wire                 m01_axi_awready,
    output wire [DW/2-1:0]      m01_axi_wdata,
    output wire [DW/16-1:0]     m01_axi_wstrb,
    output wire                 m01_axi_wlast,
    output wire                 m01_axi_wvalid,
    input  wire                 m01_axi_wready,
    input  wire [0:0]           m01_axi_bid,
    input  wire [1:0]           m01_axi_bresp,
    input  wire                 m01_axi_bvalid,
    output wire                 m01_axi_bready
);
    localparam integer LOG2_PB = $clog2(DW / 16);       // log2 of a port beat's bytes
    localparam [2:0] PORT_SIZE = LOG2_PB[2:0];
    wire [2*AW-1:0] araddr, awaddr;
    wire [15:0] arlen, awlen;
    wire [DW/8-1:0] wstrb;

    // ---- write arbiter: STORE (a) and the load interface's PRE writes (b), burst by burst (rtl/axi_wr_arb.sv)
    wire [AW-1:0] m_awaddr;
    wire [7:0] m_awlen;
    wire [DW-1:0] m_wdata;
    wire [DW/8-1:0] m_wstrb;
    wire m_awvalid, m_awready, m_wlast, m_wvalid, m_wready, m_bvalid, m_bready;
    axi_wr_arb #(.AW(AW), .DW(DW)) u_wr (
        .clk(aclk), .rst_n(aresetn),
        .a_awaddr(s_axi_store_awaddr[AW-1:0]), .a_awlen(s_axi_store_awlen), .a_awvalid(s_axi_store_awvalid),
        .a_awready(s_axi_store_awready), .a_wdata(s_axi_store_wdata), .a_wstrb(s_axi_store_wstrb),
        .a_wlast(s_axi_store_wlast), .a_wvalid(s_axi_store_wvalid), .a_wready(s_axi_store_wready),
        .a_bvalid(s_axi_store_bvalid), .a_bready(s_axi_store_bready),
        .b_awaddr(s_axi_load_awaddr[AW-1:0]), .b_awlen(s_axi_load_awlen), .b_awvalid(s_axi_load_awvalid),
        .b_awready(s_axi_load_awready), .b_wdata(s_axi_load_wdata), .b_wstrb(s_axi_load_wstrb),
        .b_wlast(s_axi_load_wlast), .b_wvalid(s_axi_load_wvalid), .b_wready(s_axi_load_wready),
        .b_bvalid(s_axi_load_bvalid), .b_bready(s_axi_load_bready),
        .m_awaddr(m_awaddr), .m_awlen(m_awlen), .m_awvalid(m_awvalid), .m_awready(m_awready), .m_wdata(m_wdata),
        .m_wstrb(m_wstrb), .m_wlast(m_wlast), .m_wvalid(m_wvalid), .m_wready(m_wready), .m_bvalid(m_bvalid),
        .m_bready(m_bready));

    axi_hp_split #(.DW(DW), .AW(AW), .OUTST(OUTST), .FDEPTH(FDEPTH)) u_split (
        .clk(aclk), .rst_n(aresetn),
        .s_araddr(s_axi_load_araddr[AW-1:0]), .s_arlen(s_axi_load_arlen), .s_arvalid(s_axi_load_arvalid),
        .s_arready(s_axi_load_arready), .s_rdata(s_axi_load_rdata), .s_rlast(s_axi_load_rlast),
        .s_rvalid(s_axi_load_rvalid), .s_rready(s_axi_load_rready),
        .s_awaddr(m_awaddr), .s_awlen(m_awlen), .s_awvalid(m_awvalid), .s_awready(m_awready),
        .s_wdata(m_wdata), .s_wstrb(m_wstrb), .s_wvalid(m_wvalid), .s_wready(m_wready), .s_bvalid(m_bvalid),
        .s_bready(m_bready),
        .m_araddr(araddr), .m_arlen(arlen), .m_arvalid({m01_axi_arvalid, m00_axi_arvalid}),
        .m_arready({m01_axi_arready, m00_axi_arready}), .m_rdata({m01_axi_rdata, m00_axi_rdata}),
        .m_rlast({m01_axi_rlast, m00_axi_rlast}), .m_rvalid({m01_axi_rvalid, m00_axi_rvalid}),
        .m_rready({m01_axi_rready, m00_axi_rready}),
        .m_awaddr(awaddr), .m_awlen(awlen), .m_awvalid({m01_axi_awvalid, m00_axi_awvalid}),
        .m_awready({m01_axi_awready, m00_axi_awready}), .m_wdata({m01_axi_wdata, m00_axi_wdata}),
        .m_wstrb(wstrb), .m_wlast({m01_axi_wlast, m00_axi_wlast}),
        .m_wvalid({m01_axi_wvalid, m00_axi_wvalid}), .m_wready({m01_axi_wready, m00_axi_wready}),
        .m_bvalid({m01_axi_bvalid, m00_axi_bvalid}), .m_bready({m01_axi_bready, m00_axi_bready}));

    // the splitter's AW-bit port addresses, zero-extended to the HP port's PS_AW bits
    assign m00_axi_araddr = {{(PS_AW - AW){1'b0}}, araddr[AW-1:0]};
    assign m01_axi_araddr = {{(PS_AW - AW){1'b0}}, araddr[2*AW-1:AW]};
    assign m00_axi_awaddr = {{(PS_AW - AW){1'b0}}, awaddr[AW-1:0]};
    assign m01_axi_awaddr = {{(PS_AW - AW){1'b0}}, awaddr[2*AW-1:AW]};
    assign {m01_axi_arlen, m00_axi_arlen} = arlen;
    assign {m01_axi_awlen, m00_axi_awlen} = awlen;
    assign {m01_axi_wstrb, m00_axi_wstrb} = wstrb;
    // INCR bursts of full port beats, normal non-secure data accesses, bufferable / modifiable (as the RTL's top)
    assign m00_axi_arsize = PORT_SIZE;
    assign m01_axi_arsize = PORT_SIZE;
    assign m00_axi_awsize = PORT_SIZE;
    assign m01_axi_awsize = PORT_SIZE;
    assign m00_axi_arburst = 2'b01;
    assign m01_axi_arburst = 2'b01;
    assign m00_axi_awburst = 2'b01;
    assign m01_axi_awburst = 2'b01;
    assign m00_axi_arcache = 4'b0011;
    assign m01_axi_arcache = 4'b0011;
    assign m00_axi_awcache = 4'b0011;
    assign m01_axi_awcache = 4'b0011;
    assign m00_axi_arprot = 3'b000;
    assign m01_axi_arprot = 3'b000;
    assign m00_axi_awprot = 3'b000;
    assign m01_axi_awprot = 3'b000;
    assign s_axi_load_rresp = 2'b00;
    assign s_axi_load_rid = 1'b0;
    assign s_axi_store_bid = 1'b0;
    assign s_axi_load_bid = 1'b0;
    assign {m01_axi_arid, m00_axi_arid, m01_axi_awid, m00_axi_awid} = 4'b0000;
    assign s_axi_store_bresp = 2'b00;
    assign s_axi_load_bresp = 2'b00;
    // the channels nobody uses: never ready, never valid
    assign s_axi_store_arready = 1'b0;
    assign s_axi_store_rdata = {DW{1'b0}};
    assign s_axi_store_rresp = 2'b00;
    assign s_axi_store_rlast = 1'b0;
    assign s_axi_store_rvalid = 1'b0;
    wire unused = &{1'b0, s_axi_load_araddr[63:AW], s_axi_load_arsize, s_axi_load_arburst, s_axi_load_awaddr[63:AW],
                    s_axi_load_awsize, s_axi_load_awburst, s_axi_store_awaddr[63:AW], s_axi_store_awsize,
                    s_axi_store_awburst, s_axi_store_araddr, s_axi_store_arlen,
                    s_axi_store_arvalid, s_axi_store_rready, m_wlast, m00_axi_rresp, m01_axi_rresp, m00_axi_bresp,
                    m01_axi_bresp, s_axi_load_arid, s_axi_load_awid, s_axi_store_awid, m00_axi_rid, m01_axi_rid,
                    m00_axi_bid, m01_axi_bid, 1'b0};
endmodule
