// YOLO accelerator top: ports and the wiring of the units (one per file in rtl/), no logic of its own.
//   ctrl_regs       AXI-Lite control registers (ap_ctrl_hs register map of generator/spec/isa.py), run control
//   axi_rd_arb      AXI4 read channel shared by fetch and the LOAD module (LOAD, PRE)
//   fetch_dispatch  instruction fetch (ROM or DDR) and dispatch into the three module queues
//   token_queues    the four dependency-token FIFOs of the ISA
//   load            LOAD module: CONFIG, LOAD (seg_gen address side, load_wr buffer write formatting), PRE
//   pre_insn        PRE (pre.sv: the camera frame to the network input in DDR), its checks; its reads on LOAD's port
//   axi_wr_arb      AXI4 write channels shared by STORE and PRE
//   compute         COMPUTE module on the PE array (pe_array; PUMP = 2: pe_array_2x on clk2x)
//   store / post    STORE module: STORE (seg_gen address side, W channel) and POST (requantization, pooling)
//   buffers         IBUF / WBUF / ACC / OBUF / PBUF / TBUF memories (ram_tdp)
//   status          completion, error status bits, watchdog, debug counters
//   axi_hp_ports    HP_PORTS = 2 / 4: every burst of the units' AXI_DW-bit master split over two / four HP ports
// Every constant comes from accel_pkg, which generator/backends/rtl/render.py renders from the ISA tables and the board file.
//
//
// Microarchitecture (synthesizable: buffers are synchronous-read RAMs of rtl/ram_tdp.sv with at most two ports,
// the multiplies are DSP48E2-sized; `generator/estimate/rtl_resources.py` synthesizes it with Yosys):
// * LOAD: segments (whole transfer / contiguous row / IBUF row span of overlapping pixel runs / pixel run), one
//   AXI4 INCR burst address per cycle (split at 4 KB and 256 beats), up to LD_OUTST in flight; each beat is
//   written as chunks of one pixel run that touch each lane memory at most once (one chunk per cycle; rready
//   held for the extra ones); span rows: two whole runs per cycle through both IBUF ports.
// * COMPUTE: one (output pixel group, output-channel word) at a time, one (i, ky, kx) step per cycle on the
//   Tn x Tm PE array (rtl/pe_array.sv). int8: each PE is one DSP48E2 27x18 multiply of two packed activations
//   (adjacent output pixels) by one weight, so two output pixels advance per cycle; int16: one pixel per cycle.
//   The PEs are cascades of PE_G DSP48E2s (P = M + PCIN, rtl/pe_dsp.sv) summing PE_G input lanes each; every
//   multiply has its A/B, M and P registers; the adder trees over the chain outputs are registered every two
//   levels.
// * STORE module: POST (bias, requantization, activation, max-pool, nearest upsample; Tm lanes per cycle) and
//   STORE: segments as LOAD (whole transfer / contiguous row / pixel run; pixels merged only where they are
//   contiguous in DDR and in OBUF), one burst address per cycle into a descriptor FIFO ahead of the data; an OBUF
//   read stage and an output FIFO stream the write beats back to back (byte strobes from OBUF elements); done
//   when every write response is in.
//
// Timing (mirrored by generator/spec/timing.py, which the scheduler and the golden simulator use; calibrated per
// instruction and per layer against this RTL), cycles per instruction:
// * LOAD: 2 + LD_SETUP_CYC + 4 + the read latency + max(beats at the DDR rate, write chunks). A beat whose
//   bytes span two pixel runs, or hold more elements than the lane memories take at once (int8 beats of 16
//   bytes into Tn = 8 lanes; more than Tm PBUF records; a WBUF word boundary), takes one extra cycle per extra chunk; beats within one
//   run of >= Tn elements (the YOLOv4-tiny ifmap / weight loads with IC, OC multiples of 32 at 128-bit AXI)
//   take one cycle. Span beats: one cycle, or ceil(n / 2) when n > 2 runs end in the beat.
// * COMPUTE: 6 + CP_SETUP + PE_LAT + steps (the setup's registered multiplies, the read-address / RAM / DSP48E2
//   A/B, M, cascade P / adder-tree / ACC read-modify-write pipeline drained before the tokens are pushed; PE_LAT
//   = 2 + PE_G + PE_TREE_ST). Steps are one per cycle, except int8 accumulation (acc_init = 0) with ig*kh*kw = 1: one step
//   every two cycles.
// * POST: 4 + POST_SETUP + RQ_LAT + window steps (the serial setup of the address constants, the RAM read stage,
//   the requantization pipeline).
// * STORE: beats stay one per cycle, across bursts, segments and pixels: with awready and wready high,
//   7 + SD_SETUP + beats + (cycles from the last W beat to its write response) from leaving the queue to the next
//   instruction. Pixels contiguous in DDR but not in OBUF (elems != src_pitch*Tm) are one segment each.
// Errors (generator/spec/isa.py STATUS_BITS): the first error sets its status bit, no instruction starts afterwards
// (instructions already executing finish), and the run ends with ap_done. Found at dispatch: ILLEGAL_OPCODE (opcode,
// non-zero unused bits, a token flag towards a missing neighbour), CONFIG_MISSING (first instruction not CONFIG);
// at the fetch's end: NO_END; by the LOAD module: ISA_VERSION_MISMATCH / CONFIG_MISMATCH (CONFIG); OUT_OF_RANGE:
// each module computes the extents of an instruction (DDR bytes from the base, against the *_size registers;
// IBUF / WBUF / PBUF / ACC / OBUF indices against the bank sizes of its own precision) into registers during its
// setup cycle(s) and compares them before the first address goes out (LOAD / STORE: the first run cycle, which
// issues no address; COMPUTE / POST: before the instruction can finish, so nothing downstream starts), so the
// checks cost no cycle; token counters: TOKEN_OVERFLOW (push onto a full FIFO), TOKENS_LEFT (END done, every
// module idle, a counter non-zero); WATCHDOG: WATCHDOG_CYCLES cycles without progress (a deadlock).
// Restrictions (programs of generator/codegen/program.py meet them): POST.pbuf_oc a multiple of Tm (else status
// OUT_OF_RANGE); Tm <= 2*Tn (bypass reads Tm elements from two IBUF words, checked by generator/backends/rtl/render.py); the
// requantization adds the bias on ACC_W + 1 bits.
`default_nettype none
module accel_top
  import accel_pkg::*;
#(
  parameter string ROM_FILE = ""
) (
  input  wire                   clk,
  input  wire                   clk2x,          // PUMP = 2: the PE array's clock, twice clk (one MMCM, edges aligned)
  input  wire                   rst_n,
  // ---- AXI-Lite slave (control registers)
  input  wire [AXIL_AW-1:0]     s_axil_awaddr,
  input  wire                   s_axil_awvalid,
  output logic                  s_axil_awready,
  input  wire [31:0]            s_axil_wdata,
  input  wire [3:0]             s_axil_wstrb,
  input  wire                   s_axil_wvalid,
  output logic                  s_axil_wready,
  output logic [1:0]            s_axil_bresp,
  output logic                  s_axil_bvalid,
  input  wire                   s_axil_bready,
  input  wire [AXIL_AW-1:0]     s_axil_araddr,
  input  wire                   s_axil_arvalid,
  output logic                  s_axil_arready,
  output logic [31:0]           s_axil_rdata,
  output logic [1:0]            s_axil_rresp,
  output logic                  s_axil_rvalid,
  input  wire                   s_axil_rready,
  /* verilator lint_off SYMRSVDWORD */
  output logic                  interrupt,      // the name of a Vitis HLS block's interrupt port
  /* verilator lint_on SYMRSVDWORD */
  // ---- AXI4 master (DDR)
  output logic [0:0]            m_axi_awid,
  output logic [AXI_AW-1:0]     m_axi_awaddr,
  output logic [7:0]            m_axi_awlen,
  output logic [2:0]            m_axi_awsize,
  output logic [1:0]            m_axi_awburst,
  output logic                  m_axi_awlock,
  output logic [3:0]            m_axi_awcache,
  output logic [2:0]            m_axi_awprot,
  output logic                  m_axi_awvalid,
  input  wire                   m_axi_awready,
  output logic [PORT_DW-1:0]     m_axi_wdata,
  output logic [PORT_DW/8-1:0]  m_axi_wstrb,
  output logic                  m_axi_wlast,
  output logic                  m_axi_wvalid,
  input  wire                   m_axi_wready,
  input  wire [0:0]             m_axi_bid,
  input  wire [1:0]             m_axi_bresp,
  input  wire                   m_axi_bvalid,
  output logic                  m_axi_bready,
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
  input  wire [0:0]             m_axi_rid,
  input  wire [PORT_DW-1:0]      m_axi_rdata,
  input  wire [1:0]             m_axi_rresp,
  input  wire                   m_axi_rlast,
  input  wire                   m_axi_rvalid,
  output logic                  m_axi_rready,
  // ---- the second HP port (HP_PORTS >= 2: rtl/axi_hp_ports.sv; else idle)
  output logic [0:0]            m_axi1_awid,
  output logic [AXI_AW-1:0]     m_axi1_awaddr,
  output logic [7:0]            m_axi1_awlen,
  output logic [2:0]            m_axi1_awsize,
  output logic [1:0]            m_axi1_awburst,
  output logic                  m_axi1_awlock,
  output logic [3:0]            m_axi1_awcache,
  output logic [2:0]            m_axi1_awprot,
  output logic                  m_axi1_awvalid,
  input  wire                   m_axi1_awready,
  output logic [PORT_DW-1:0]     m_axi1_wdata,
  output logic [PORT_DW/8-1:0]  m_axi1_wstrb,
  output logic                  m_axi1_wlast,
  output logic                  m_axi1_wvalid,
  input  wire                   m_axi1_wready,
  input  wire [0:0]             m_axi1_bid,
  input  wire [1:0]             m_axi1_bresp,
  input  wire                   m_axi1_bvalid,
  output logic                  m_axi1_bready,
  output logic [0:0]            m_axi1_arid,
  output logic [AXI_AW-1:0]     m_axi1_araddr,
  output logic [7:0]            m_axi1_arlen,
  output logic [2:0]            m_axi1_arsize,
  output logic [1:0]            m_axi1_arburst,
  output logic                  m_axi1_arlock,
  output logic [3:0]            m_axi1_arcache,
  output logic [2:0]            m_axi1_arprot,
  output logic                  m_axi1_arvalid,
  input  wire                   m_axi1_arready,
  input  wire [0:0]             m_axi1_rid,
  input  wire [PORT_DW-1:0]      m_axi1_rdata,
  input  wire [1:0]             m_axi1_rresp,
  input  wire                   m_axi1_rlast,
  input  wire                   m_axi1_rvalid,
  output logic                  m_axi1_rready,
  // ---- the third and fourth HP ports (HP_PORTS = 4: rtl/axi_hp_ports.sv; else idle)
  output logic [0:0]            m_axi2_awid, m_axi3_awid,
  output logic [AXI_AW-1:0]     m_axi2_awaddr, m_axi3_awaddr,
  output logic [7:0]            m_axi2_awlen, m_axi3_awlen,
  output logic [2:0]            m_axi2_awsize, m_axi3_awsize,
  output logic [1:0]            m_axi2_awburst, m_axi3_awburst,
  output logic                  m_axi2_awlock, m_axi3_awlock,
  output logic [3:0]            m_axi2_awcache, m_axi3_awcache,
  output logic [2:0]            m_axi2_awprot, m_axi3_awprot,
  output logic                  m_axi2_awvalid, m_axi3_awvalid,
  input  wire                   m_axi2_awready, m_axi3_awready,
  output logic [PORT_DW-1:0]    m_axi2_wdata, m_axi3_wdata,
  output logic [PORT_DW/8-1:0]  m_axi2_wstrb, m_axi3_wstrb,
  output logic                  m_axi2_wlast, m_axi3_wlast,
  output logic                  m_axi2_wvalid, m_axi3_wvalid,
  input  wire                   m_axi2_wready, m_axi3_wready,
  input  wire [0:0]             m_axi2_bid, m_axi3_bid,
  input  wire [1:0]             m_axi2_bresp, m_axi3_bresp,
  input  wire                   m_axi2_bvalid, m_axi3_bvalid,
  output logic                  m_axi2_bready, m_axi3_bready,
  output logic [0:0]            m_axi2_arid, m_axi3_arid,
  output logic [AXI_AW-1:0]     m_axi2_araddr, m_axi3_araddr,
  output logic [7:0]            m_axi2_arlen, m_axi3_arlen,
  output logic [2:0]            m_axi2_arsize, m_axi3_arsize,
  output logic [1:0]            m_axi2_arburst, m_axi3_arburst,
  output logic                  m_axi2_arlock, m_axi3_arlock,
  output logic [3:0]            m_axi2_arcache, m_axi3_arcache,
  output logic [2:0]            m_axi2_arprot, m_axi3_arprot,
  output logic                  m_axi2_arvalid, m_axi3_arvalid,
  input  wire                   m_axi2_arready, m_axi3_arready,
  input  wire [0:0]             m_axi2_rid, m_axi3_rid,
  input  wire [PORT_DW-1:0]     m_axi2_rdata, m_axi3_rdata,
  input  wire [1:0]             m_axi2_rresp, m_axi3_rresp,
  input  wire                   m_axi2_rlast, m_axi3_rlast,
  input  wire                   m_axi2_rvalid, m_axi3_rvalid,
  output logic                  m_axi2_rready, m_axi3_rready
);
  // ---- the units' AXI4 master (x_axi_*, AXI_DW bits) onto the HP port(s)
  logic [0:0] x_axi_awid, x_axi_arid, x_axi_bid, x_axi_rid;
  logic [AXI_AW-1:0] x_axi_awaddr, x_axi_araddr;
  logic [7:0] x_axi_awlen, x_axi_arlen;
  logic [2:0] x_axi_awsize, x_axi_awprot, x_axi_arsize, x_axi_arprot;
  logic [1:0] x_axi_awburst, x_axi_arburst, x_axi_bresp, x_axi_rresp;
  logic [3:0] x_axi_awcache, x_axi_arcache;
  logic x_axi_awlock, x_axi_awvalid, x_axi_awready, x_axi_wlast, x_axi_wvalid, x_axi_wready, x_axi_bvalid,
        x_axi_bready, x_axi_arlock, x_axi_arvalid, x_axi_arready, x_axi_rlast, x_axi_rvalid, x_axi_rready;
  logic [AXI_DW-1:0] x_axi_wdata, x_axi_rdata;
  logic [AXI_BYTES-1:0] x_axi_wstrb;
  wire clr;                                             // start_pulse: clears the units at the start of a run
  wire run, stop, finish;
  wire [31:0] err_bits, status_r, cycles_r;
  wire [4*64-1:0] base_addrs;
  wire [4*32-1:0] ddr_sizes;
  wire [63:0] insns_addr;
  wire [31:0] n_insns;
  wire fetch_ddr;
  wire [63:0] frame_addr;
  wire [11*32-1:0] pre_regs;
  ctrl_regs u_ctrl (
    .clk, .rst_n, .s_axil_awaddr, .s_axil_awvalid, .s_axil_awready, .s_axil_wdata, .s_axil_wvalid, .s_axil_wready,
    .s_axil_bresp, .s_axil_bvalid, .s_axil_bready, .s_axil_araddr, .s_axil_arvalid, .s_axil_arready, .s_axil_rdata,
    .s_axil_rresp, .s_axil_rvalid, .s_axil_rready, .irq(interrupt), .err_bits, .stop, .finish, .start_pulse(clr),
    .run, .base_addrs, .ddr_sizes, .insns_addr, .n_insns, .fetch_ddr, .frame_addr, .pre_regs, .status_r, .cycles_r);

  // ---- read channel: fetch (fe_) and the LOAD module (ld_: LOAD's lr_ and PRE's, merged by pre_insn)
  wire fe_arvalid, fe_ar_ok, fe_rready, fe_rvalid, ld_arvalid, ld_ar_ok, ld_rready, ld_rvalid, rd_busy;
  wire lr_arvalid, lr_ar_ok, lr_rready, lr_rvalid;
  wire [63:0] fe_araddr, ld_araddr, lr_araddr;
  wire [7:0] fe_arlen, ld_arlen, lr_arlen;
  axi_rd_arb u_rd (
    .clk, .rst_n, .fe_arvalid, .fe_araddr, .fe_arlen, .fe_ar_ok, .fe_rready, .fe_rvalid, .ld_arvalid, .ld_araddr,
    .ld_arlen, .ld_ar_ok, .ld_rready, .ld_rvalid, .busy(rd_busy), .m_axi_arid(x_axi_arid),
    .m_axi_araddr(x_axi_araddr), .m_axi_arlen(x_axi_arlen),
    .m_axi_arsize(x_axi_arsize), .m_axi_arburst(x_axi_arburst), .m_axi_arlock(x_axi_arlock),
    .m_axi_arcache(x_axi_arcache), .m_axi_arprot(x_axi_arprot), .m_axi_arvalid(x_axi_arvalid),
    .m_axi_arready(x_axi_arready),
    .m_axi_rlast(x_axi_rlast), .m_axi_rvalid(x_axi_rvalid), .m_axi_rready(x_axi_rready));

  // ---- fetch and dispatch into the LOAD (lq_), COMPUTE (cq_) and STORE-module (sq_) queues
  wire lq_rd, cq_rd, sq_rd, lq_empty, cq_empty, sq_empty;
  wire [INSN_BITS-1:0] lq_rdata, cq_rdata, sq_rdata;
  wire illegal, cfg_missing, no_end, fe_idle, fe_exhausted, insn_moved, queues_empty;
  fetch_dispatch #(.ROM_FILE(ROM_FILE)) u_fetch (
    .clk, .rst_n, .clr, .run, .stop, .fetch_ddr, .insns_addr, .n_insns, .fe_arvalid, .fe_araddr, .fe_arlen,
    .fe_ar_ok, .fe_rvalid, .fe_rready, .rdata(x_axi_rdata), .rlast(x_axi_rlast), .lq_rd, .cq_rd, .sq_rd, .lq_rdata,
    .cq_rdata, .sq_rdata, .lq_empty, .cq_empty, .sq_empty, .illegal, .cfg_missing, .no_end, .fe_idle, .fe_exhausted,
    .insn_moved, .queues_empty);

  // ---- dependency tokens
  wire push_l2c, pop_l2c, push_c2l, pop_c2l, push_c2s, pop_c2s, push_s2c, pop_s2c;
  wire has_l2c, has_c2l, has_c2s, has_s2c, tok_overflow, tok_any;
  /* verilator lint_off PINCONNECTEMPTY */
  token_queues u_tok (
    .clk, .rst_n, .clr, .push_l2c, .pop_l2c, .push_c2l, .pop_c2l, .push_c2s, .pop_c2s, .push_s2c, .pop_s2c,
    .cnt_l2c(), .cnt_c2l(), .cnt_c2s(), .cnt_s2c(), .has_l2c, .has_c2l, .has_c2s, .has_s2c, .overflow(tok_overflow),
    .any(tok_any));
  /* verilator lint_on PINCONNECTEMPTY */

  // ---- LOAD module (CONFIG, LOAD; PRE through pre_insn)
  wire cfg_err_isa, cfg_err_cfg, ld_oob, ld_idle, ld_bank, pre_go, pre_done, pre_oob;
  wire [2*2*TN-1:0] ibw_we;
  wire [2*16*TN-1:0] ibw_data;
  wire [2*IB_AW*TN-1:0] ibw_row;
  wire [2*WL-1:0] wbw_we;
  wire [16*WL-1:0] wbw_data;
  wire [WB_AW-1:0] wbw_row;
  wire [PARAM_BYTES*TM-1:0] pbw_we, tbw_we;
  wire [PREC_W*TM-1:0] pbw_data;
  wire [PW_AW*TM-1:0] pbw_row;
  load u_load (
    .clk, .rst_n, .clr, .run, .stop, .base_addrs, .ddr_sizes, .lq_rdata, .lq_empty, .lq_rd, .has_c2l, .pop_c2l,
    .push_l2c, .cfg_err_isa, .cfg_err_cfg, .oob(ld_oob), .idle(ld_idle), .pre_go, .pre_done, .arvalid(lr_arvalid),
    .araddr(lr_araddr), .arlen(lr_arlen), .ar_ok(lr_ar_ok), .rvalid(lr_rvalid), .rready(lr_rready),
    .rdata(x_axi_rdata), .rlast(x_axi_rlast), .bank(ld_bank), .ibw_we, .ibw_data, .ibw_row, .wbw_we, .wbw_data,
    .wbw_row, .pbw_we, .tbw_we, .pbw_data, .pbw_row);

  // ---- PRE of the LOAD module (pr_: its writes, onto the write channel through axi_wr_arb with STORE's, st_)
  wire pr_awvalid, pr_awready, pr_wlast, pr_wvalid, pr_wready, pr_bvalid;
  wire st_awvalid, st_awready, st_wlast, st_wvalid, st_wready, st_bvalid;
  wire [AXI_AW-1:0] pr_awaddr, st_awaddr;
  wire [7:0] pr_awlen, st_awlen;
  wire [AXI_DW-1:0] pr_wdata, st_wdata;
  wire [AXI_BYTES-1:0] pr_wstrb, st_wstrb;
  pre_insn u_pre (
    .clk, .rst_n, .clr, .go(pre_go), .ins(lq_rdata), .done(pre_done), .oob(pre_oob), .base_addrs, .ddr_sizes,
    .frame_addr, .pre_regs, .l_arvalid(lr_arvalid), .l_araddr(lr_araddr), .l_arlen(lr_arlen), .l_ar_ok(lr_ar_ok),
    .l_rready(lr_rready), .l_rvalid(lr_rvalid), .arvalid(ld_arvalid), .araddr(ld_araddr), .arlen(ld_arlen),
    .ar_ok(ld_ar_ok), .rready(ld_rready), .rvalid(ld_rvalid), .rdata(x_axi_rdata), .rlast(x_axi_rlast),
    .awaddr(pr_awaddr), .awlen(pr_awlen), .awvalid(pr_awvalid), .awready(pr_awready), .wdata(pr_wdata),
    .wstrb(pr_wstrb), .wlast(pr_wlast), .wvalid(pr_wvalid), .wready(pr_wready), .bvalid(pr_bvalid));
  axi_wr_arb #(.AW(AXI_AW), .DW(AXI_DW), .QDEPTH(WR_QDEPTH)) u_wr (
    .clk, .rst_n, .a_awaddr(st_awaddr), .a_awlen(st_awlen), .a_awvalid(st_awvalid), .a_awready(st_awready),
    .a_wdata(st_wdata), .a_wstrb(st_wstrb), .a_wlast(st_wlast), .a_wvalid(st_wvalid), .a_wready(st_wready),
    .a_bvalid(st_bvalid), .a_bready(st_bready), .b_awaddr(pr_awaddr), .b_awlen(pr_awlen), .b_awvalid(pr_awvalid), .b_awready(pr_awready),
    .b_wdata(pr_wdata), .b_wstrb(pr_wstrb), .b_wlast(pr_wlast), .b_wvalid(pr_wvalid), .b_wready(pr_wready),
    .b_bvalid(pr_bvalid), .b_bready(1'b1), .m_awaddr(x_axi_awaddr), .m_awlen(x_axi_awlen), .m_awvalid(x_axi_awvalid),
    .m_awready(x_axi_awready), .m_wdata(x_axi_wdata), .m_wstrb(x_axi_wstrb), .m_wlast(x_axi_wlast),
    .m_wvalid(x_axi_wvalid), .m_wready(x_axi_wready), .m_bvalid(x_axi_bvalid), .m_bready(x_axi_bready));

  // ---- COMPUTE module (NOP, COMPUTE, SYNC)
  wire cp_oob, cp_idle, cp_busy, cp_acc_bank, cp_wr, cp_s3_two, cp_wr_b, cp_s3_two_b;
  wire [IB_AW-1:0] cp_ib_a, cp_ib_b, cp_ib_c, cp_ib_d;
  wire [WB_AW-1:0] cp_wb_a;
  wire [AC_AW-1:0] cp_s2_aw0, cp_s2_aw1, cp_s3_aw0, cp_s3_aw1, cp_s2_aw2, cp_s2_aw3, cp_s3_aw2, cp_s3_aw3;
  wire [TM*ACC_W-1:0] cp_wd0, cp_wd1, cp_wd2, cp_wd3;
  wire [2*16*TN-1:0] ib_rd_a, ib_rd_b, ib_rd_c, ib_rd_d;
  wire [2*16*WL-1:0] wb_rd;
  wire cp_wb_bank;
  wire [2*ACC_W*TM-1:0] acc_rd_a, acc_rd_b, acc_rd_c, acc_rd_d;
  compute u_cp (
    .clk, .clk2x, .rst_n, .clr, .run, .stop, .cq_rdata, .cq_empty, .cq_rd, .has_l2c, .has_s2c, .pop_l2c, .pop_s2c,
    .push_c2l, .push_c2s, .oob(cp_oob), .idle(cp_idle), .pe_busy(cp_busy), .ib_rd_a, .ib_rd_b, .ib_rd_c, .ib_rd_d,
    .wb_rd, .acc_rd_a, .acc_rd_b, .acc_rd_c, .acc_rd_d, .cp_ib_a, .cp_ib_b, .cp_ib_c, .cp_ib_d, .cp_wb_a,
    .cp_wb_bank, .cp_acc_bank, .cp_wr, .cp_s3_two, .cp_s2_aw0, .cp_s2_aw1, .cp_s3_aw0, .cp_s3_aw1, .cp_wd0, .cp_wd1, .cp_wr_b,
    .cp_s3_two_b, .cp_s2_aw2, .cp_s2_aw3, .cp_s3_aw2, .cp_s3_aw3, .cp_wd2, .cp_wd3);

  // ---- STORE module (POST through u_post, STORE, END)
  wire post_start, post_done, post_err, sd_oob, end_done, st_idle, st_retire, pp_oob, st_bready;
  wire [INSN_BITS-1:0] post_ins;
  wire [OBW_W-1:0] post_words;
  wire [OB_AW*OL-1:0] obr_row;
  wire [16*OL-1:0] ob_rd;
  store u_st (
    .clk, .rst_n, .clr, .run, .stop, .base_addrs, .ddr_sizes, .sq_rdata, .sq_empty, .sq_rd, .has_c2s,
    .pop_c2s, .push_s2c, .post_start, .post_ins, .post_done, .post_words, .post_oob(pp_oob), .post_err, .oob(sd_oob), .end_done, .idle(st_idle),
    .retire(st_retire), .obr_row, .ob_rd, .m_axi_awid(x_axi_awid), .m_axi_awaddr(st_awaddr),
    .m_axi_awlen(st_awlen), .m_axi_awsize(x_axi_awsize), .m_axi_awburst(x_axi_awburst),
    .m_axi_awlock(x_axi_awlock), .m_axi_awcache(x_axi_awcache), .m_axi_awprot(x_axi_awprot),
    .m_axi_awvalid(st_awvalid), .m_axi_awready(st_awready), .m_axi_wdata(st_wdata), .m_axi_wstrb(st_wstrb),
    .m_axi_wlast(st_wlast), .m_axi_wvalid(st_wvalid), .m_axi_wready(st_wready), .m_axi_bid(x_axi_bid),
    .m_axi_bresp(x_axi_bresp), .m_axi_bvalid(st_bvalid), .m_axi_bready(st_bready));
  wire pp_acc_rd, pp_acc_bank;
  wire [AC_AW-1:0] pp_aw;
  wire [PB_AW-1:0] pp_prow;
  wire [PREC_W*TM-1:0] pb_rd, tb_rd;
  wire [TB_AW*TM-1:0] pp_trow;
  wire [OL-1:0] obw_we;
  wire [16*OL-1:0] obw_data;
  wire [OB_AW*OL-1:0] obw_row;
  post u_post (
    .clk, .rst_n, .clr, .start(post_start), .ins(post_ins), .done(post_done), .oob(pp_oob),
    .acc_rd(pp_acc_rd), .pp_acc_bank, .pp_aw, .acc_rd_a, .acc_rd_c, .pp_prow, .pb_rd, .pp_trow, .tb_rd, .obw_we, .obw_data,
    .obw_row, .words_done(post_words));

  // ---- buffer memories
  buffers u_buf (
    .clk, .ld_bank, .ibw_we, .ibw_data, .ibw_row, .wbw_we, .wbw_data, .wbw_row, .pbw_we, .tbw_we, .pbw_data, .pbw_row,
    .cp_ib_a, .cp_ib_b, .cp_wb_a, .cp_wb_bank, .cp_acc_bank, .cp_wr, .cp_s3_two, .cp_s2_aw0, .cp_s2_aw1, .cp_s3_aw0,
    .cp_s3_aw1,
    .cp_wd0, .cp_wd1, .cp_ib_c, .cp_ib_d, .cp_wr_b, .cp_s3_two_b, .cp_s2_aw2, .cp_s2_aw3, .cp_s3_aw2, .cp_s3_aw3,
    .cp_wd2, .cp_wd3, .ib_rd_a, .ib_rd_b, .ib_rd_c, .ib_rd_d, .wb_rd, .acc_rd_a, .acc_rd_b, .acc_rd_c, .acc_rd_d,
    .pp_acc_rd, .pp_acc_bank, .pp_aw, .pp_prow,
    .pb_rd, .pp_trow, .tb_rd, .obw_we, .obw_data, .obw_row, .obr_row, .ob_rd);

  // ---- completion, status, debug counters (dbg_*, cycles_r: sampled by the cocotb bench, generator/exec/rtl_bench.py)
  wire [31:0] dbg_st_retired, dbg_ld_busy, dbg_cp_busy;
  status u_status (
    .clk, .rst_n, .start_pulse(clr), .run, .illegal, .cfg_missing, .cfg_err_isa, .cfg_err_cfg,
    .out_of_range(post_err || ld_oob || pre_oob || cp_oob || pp_oob || sd_oob), .no_end, .tok_overflow, .tok_any, .fe_idle,
    .ld_idle, .cp_idle, .st_idle, .rd_busy, .insn_moved, .queues_empty, .fe_exhausted, .end_done, .cp_busy,
    .st_retire, .err_bits, .stop, .finish, .dbg_st_retired, .dbg_ld_busy, .dbg_cp_busy);

  // ---- the HP ports: the units' master as is (one), or every burst split over two or four (rtl/axi_hp_ports.sv)
  localparam logic [3:0] AXI_CACHE = 4'b0011;
  localparam int NP = HP_PORTS;
  logic [4*AXI_AW-1:0] p_araddr, p_awaddr;
  logic [4*8-1:0] p_arlen, p_awlen;
  logic [3:0] p_arvalid, p_rready, p_awvalid, p_wlast, p_wvalid, p_bready;
  logic [4*PORT_DW-1:0] p_wdata;
  logic [4*PORT_DW/8-1:0] p_wstrb;
  axi_hp_ports #(.NP(NP), .DW(AXI_DW), .AW(AXI_AW), .OUTST(HP_OUTST), .FDEPTH(HP_FDEPTH)) u_hp (
    .clk, .rst_n, .s_araddr(x_axi_araddr), .s_arlen(x_axi_arlen), .s_arvalid(x_axi_arvalid),
    .s_arready(x_axi_arready), .s_rdata(x_axi_rdata), .s_rresp(x_axi_rresp), .s_rlast(x_axi_rlast),
    .s_rvalid(x_axi_rvalid), .s_rready(x_axi_rready), .s_awaddr(x_axi_awaddr), .s_awlen(x_axi_awlen),
    .s_awvalid(x_axi_awvalid), .s_awready(x_axi_awready), .s_wdata(x_axi_wdata), .s_wstrb(x_axi_wstrb),
    .s_wlast(x_axi_wlast), .s_wvalid(x_axi_wvalid), .s_wready(x_axi_wready), .s_bresp(x_axi_bresp),
    .s_bvalid(x_axi_bvalid), .s_bready(x_axi_bready),
    .m_araddr(p_araddr[0 +: NP * AXI_AW]), .m_arlen(p_arlen[0 +: NP * 8]), .m_arvalid(p_arvalid[0 +: NP]),
    .m_arready(NP'({m_axi3_arready, m_axi2_arready, m_axi1_arready, m_axi_arready})),
    .m_rdata((NP * PORT_DW)'({m_axi3_rdata, m_axi2_rdata, m_axi1_rdata, m_axi_rdata})),
    .m_rresp((2 * NP)'({m_axi3_rresp, m_axi2_rresp, m_axi1_rresp, m_axi_rresp})),
    .m_rlast(NP'({m_axi3_rlast, m_axi2_rlast, m_axi1_rlast, m_axi_rlast})),
    .m_rvalid(NP'({m_axi3_rvalid, m_axi2_rvalid, m_axi1_rvalid, m_axi_rvalid})), .m_rready(p_rready[0 +: NP]),
    .m_awaddr(p_awaddr[0 +: NP * AXI_AW]), .m_awlen(p_awlen[0 +: NP * 8]), .m_awvalid(p_awvalid[0 +: NP]),
    .m_awready(NP'({m_axi3_awready, m_axi2_awready, m_axi1_awready, m_axi_awready})),
    .m_wdata(p_wdata[0 +: NP * PORT_DW]), .m_wstrb(p_wstrb[0 +: NP * PORT_DW / 8]), .m_wlast(p_wlast[0 +: NP]),
    .m_wvalid(p_wvalid[0 +: NP]), .m_wready(NP'({m_axi3_wready, m_axi2_wready, m_axi1_wready, m_axi_wready})),
    .m_bresp((2 * NP)'({m_axi3_bresp, m_axi2_bresp, m_axi1_bresp, m_axi_bresp})),
    .m_bvalid(NP'({m_axi3_bvalid, m_axi2_bvalid, m_axi1_bvalid, m_axi_bvalid})), .m_bready(p_bready[0 +: NP]));
  if (NP < 4) begin : g_idle   // the ports above NP: no request, no data
    assign {p_araddr[4*AXI_AW-1:NP*AXI_AW], p_awaddr[4*AXI_AW-1:NP*AXI_AW], p_arlen[31:NP*8], p_awlen[31:NP*8]} = '0;
    assign {p_arvalid[3:NP], p_rready[3:NP], p_awvalid[3:NP], p_wlast[3:NP], p_wvalid[3:NP], p_bready[3:NP]} = '0;
    assign {p_wdata[4*PORT_DW-1:NP*PORT_DW], p_wstrb[4*PORT_DW/8-1:NP*PORT_DW/8]} = '0;
  end
  assign {m_axi3_araddr, m_axi2_araddr, m_axi1_araddr, m_axi_araddr} = p_araddr;
  assign {m_axi3_arlen, m_axi2_arlen, m_axi1_arlen, m_axi_arlen} = p_arlen;
  assign {m_axi3_arvalid, m_axi2_arvalid, m_axi1_arvalid, m_axi_arvalid} = p_arvalid;
  assign {m_axi3_rready, m_axi2_rready, m_axi1_rready, m_axi_rready} = p_rready;
  assign {m_axi3_awaddr, m_axi2_awaddr, m_axi1_awaddr, m_axi_awaddr} = p_awaddr;
  assign {m_axi3_awlen, m_axi2_awlen, m_axi1_awlen, m_axi_awlen} = p_awlen;
  assign {m_axi3_awvalid, m_axi2_awvalid, m_axi1_awvalid, m_axi_awvalid} = p_awvalid;
  assign {m_axi3_wdata, m_axi2_wdata, m_axi1_wdata, m_axi_wdata} = p_wdata;
  assign {m_axi3_wstrb, m_axi2_wstrb, m_axi1_wstrb, m_axi_wstrb} = p_wstrb;
  assign {m_axi3_wlast, m_axi2_wlast, m_axi1_wlast, m_axi_wlast} = p_wlast;
  assign {m_axi3_wvalid, m_axi2_wvalid, m_axi1_wvalid, m_axi_wvalid} = p_wvalid;
  assign {m_axi3_bready, m_axi2_bready, m_axi1_bready, m_axi_bready} = p_bready;
  // the constant fields: ID 0, full-width INCR beats of the port, cacheable, unprivileged
  assign {m_axi3_awid, m_axi2_awid, m_axi1_awid, m_axi_awid, m_axi3_arid, m_axi2_arid, m_axi1_arid, m_axi_arid} = '0;
  assign {m_axi3_awsize, m_axi2_awsize, m_axi1_awsize, m_axi_awsize, m_axi3_arsize, m_axi2_arsize, m_axi1_arsize,
          m_axi_arsize} = {8{3'($clog2(PORT_DW / 8))}};
  assign {m_axi3_awburst, m_axi2_awburst, m_axi1_awburst, m_axi_awburst, m_axi3_arburst, m_axi2_arburst,
          m_axi1_arburst, m_axi_arburst} = {8{2'b01}};
  assign {m_axi3_awlock, m_axi2_awlock, m_axi1_awlock, m_axi_awlock, m_axi3_arlock, m_axi2_arlock, m_axi1_arlock,
          m_axi_arlock} = '0;
  assign {m_axi3_awcache, m_axi2_awcache, m_axi1_awcache, m_axi_awcache, m_axi3_arcache, m_axi2_arcache,
          m_axi1_arcache, m_axi_arcache} = {8{AXI_CACHE}};
  assign {m_axi3_awprot, m_axi2_awprot, m_axi1_awprot, m_axi_awprot, m_axi3_arprot, m_axi2_arprot, m_axi1_arprot,
          m_axi_arprot} = '0;
  assign {x_axi_rid, x_axi_bid} = '0;
  wire unused_hp = &{1'b0, x_axi_awid, x_axi_awsize, x_axi_awburst, x_axi_awlock, x_axi_awcache, x_axi_awprot,
                     x_axi_arsize, x_axi_arburst, x_axi_arlock, x_axi_arcache, x_axi_arprot, m_axi_bid, m_axi1_bid,
                     m_axi2_bid, m_axi3_bid, m_axi_rid, m_axi1_rid, m_axi2_rid, m_axi3_rid, 1'b0};

  // unused inputs (IDs, responses, write strobes of the control port) and the bench's probes
  wire unused = &{1'b0, s_axil_wstrb, x_axi_rid, st_bready, x_axi_rresp, x_axi_arid, status_r, cycles_r,
                  dbg_st_retired, dbg_ld_busy, dbg_cp_busy, 1'b0};
endmodule
`default_nettype wire
