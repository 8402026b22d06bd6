// YOLO accelerator: AXI-Lite control (Vitis HLS ap_ctrl_hs register map), AXI4 master to DDR, instruction
// fetch (ROM or DDR) and dispatch, and the LOAD / COMPUTE / STORE modules running concurrently, synchronised by
// the four dependency-token FIFOs of the ISA (generator/isa.py). Every constant comes from accel_pkg, which
// generator/rtl.py renders from the ISA tables and the board file.
//
// Microarchitecture (synthesizable: buffers are synchronous-read RAMs of rtl/ram_tdp.sv with at most two ports,
// the multiplies are DSP48E2-sized; `generator/rtl_resources.py` synthesizes it with Yosys):
// * LOAD: segments (whole transfer / contiguous row / IBUF row span of overlapping pixel runs / pixel run), one
//   AXI4 INCR burst address per cycle (split at 4 KB and 256 beats), up to LD_OUTST in flight; each beat is
//   written as chunks of one pixel run that touch each lane memory at most once (one chunk per cycle; rready
//   held for the extra ones); span rows: two whole runs per cycle through both IBUF ports.
// * COMPUTE: one (output pixel group, output-channel word) at a time, one (i, ky, kx) step per cycle on the
//   Tn x Tm PE array (rtl/pe_array.sv). int8: each PE is one DSP48E2 27x18 multiply of two packed activations
//   (adjacent output pixels) by one weight, so two output pixels advance per cycle; int16: one pixel per cycle.
// * STORE module: POST (bias, requantization, activation, max-pool, nearest upsample; Tm lanes per cycle) and
//   STORE: segments as LOAD (whole transfer / contiguous row / pixel run; pixels merged only where they are
//   contiguous in DDR and in OBUF), one burst address per cycle into a descriptor FIFO ahead of the data; an OBUF
//   read stage and an output FIFO stream the write beats back to back (byte strobes from OBUF elements); done
//   when every write response is in.
//
// Timing (mirrored by generator/hwmodel.py, which the scheduler and the golden simulator use; calibrated per
// instruction and per layer against this RTL), cycles per instruction:
// * LOAD: 3 + 4 + the read latency + max(beats at the DDR rate, write chunks). A beat whose bytes span two pixel
//   runs, or hold more elements than the lane memories take at once (int8 beats of 16 bytes into Tn = 8 lanes;
//   more than Tm PBUF records; a WBUF word boundary), takes one extra cycle per extra chunk; beats within one
//   run of >= Tn elements (the YOLOv4-tiny ifmap / weight loads with IC, OC multiples of 32 at 128-bit AXI)
//   take one cycle. Span beats: one cycle, or ceil(n / 2) when n > 2 runs end in the beat.
// * COMPUTE: 7 + steps (1 setup cycle, the RAM / product / ACC read-modify-write pipeline drained before the
//   tokens are pushed). Steps are one per cycle, except int8 accumulation (acc_init = 0) with ig*kh*kw = 1:
//   one step every two cycles.
// * POST: 4 + window steps (setup of the address constants; the RAM read stage).
// * STORE: beats stay one per cycle, across bursts, segments and pixels: with awready and wready high,
//   8 + beats + (cycles from the last W beat to its write response) from leaving the queue to the next
//   instruction. Pixels contiguous in DDR but not in OBUF (elems != src_pitch*Tm) are one segment each.
// Errors (generator/isa.py STATUS_BITS): the first error sets its status bit, no instruction starts afterwards
// (instructions already executing finish), and the run ends with ap_done. Found at dispatch: ILLEGAL_OPCODE (opcode,
// non-zero unused bits, a token flag towards a missing neighbour), CONFIG_MISSING (first instruction not CONFIG);
// at the fetch's end: NO_END; by the LOAD module: ISA_VERSION_MISMATCH / CONFIG_MISMATCH (CONFIG); OUT_OF_RANGE:
// each module computes the extents of an instruction (DDR bytes from the base, against the *_size registers;
// IBUF / WBUF / PBUF / ACC / OBUF indices against the bank sizes of the precision) into registers during its
// setup cycle(s) and compares them before the first address goes out (LOAD / STORE: the first run cycle, which
// issues no address; COMPUTE / POST: before the instruction can finish, so nothing downstream starts), so the
// checks cost no cycle; token counters: TOKEN_OVERFLOW (push onto a full FIFO), TOKENS_LEFT (END done, every
// module idle, a counter non-zero); WATCHDOG: WATCHDOG_CYCLES cycles without progress (a deadlock).
// Restrictions (programs of generator/codegen.py meet them): POST.pbuf_oc a multiple of Tm (else status
// OUT_OF_RANGE); Tm <= 2*Tn (bypass reads Tm elements from two IBUF words, checked by generator/rtl.py); the
// requantization adds the bias on ACC_W + 1 bits.
`default_nettype none
module accel_top
  import accel_pkg::*;
#(
  parameter string ROM_FILE = ""
) (
  input  wire                   clk,
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
  output logic [AXI_DW-1:0]     m_axi_wdata,
  output logic [AXI_BYTES-1:0]  m_axi_wstrb,
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
  input  wire [AXI_DW-1:0]      m_axi_rdata,
  input  wire [1:0]             m_axi_rresp,
  input  wire                   m_axi_rlast,
  input  wire                   m_axi_rvalid,
  output logic                  m_axi_rready
);
  localparam int LOG2_BYTES = $clog2(AXI_BYTES);
  localparam int BEATS_PER_INSN = INSN_BITS / AXI_DW;
  localparam int REGW_N = 2 ** (AXIL_AW - 2);
  localparam int FETCH_BURST = 4;          // instructions per fetch burst
  localparam int IFQ_DEPTH = 16;
  localparam int MQ_DEPTH = 8;

  // ======================================================================================= control registers
  logic [31:0] regw [REGW_N];
  logic ap_start_r, ap_done_r, ap_idle_r, ap_ready_r, auto_restart_r, gie;
  logic [1:0] ier, isr;
  logic [31:0] status_r, cycles_r;
  logic start_pulse, run, finish;
  logic [31:0] err_bits;      // status bits raised this cycle
  logic stop;                 // an error stopped the run: no new instruction starts
  logic ld_oob, cp_oob, pp_oob, sd_oob;   // OUT_OF_RANGE found by the LOAD / COMPUTE / POST / STORE checks
  logic tokens_left, wd_fire;             // TOKENS_LEFT at the end, WATCHDOG

  wire wr_en = s_axil_awvalid && s_axil_wvalid && !s_axil_bvalid;
  assign s_axil_awready = wr_en;
  assign s_axil_wready = wr_en;
  assign s_axil_bresp = 2'b00;
  assign s_axil_rresp = 2'b00;
  assign s_axil_arready = !s_axil_rvalid;
  assign interrupt = gie && |(isr & ier);
  wire [31:0] wa = 32'(s_axil_awaddr);
  wire [31:0] ra = 32'(s_axil_araddr);
  wire [AXIL_AW-3:0] widx = s_axil_awaddr[AXIL_AW-1:2];

  wire [63:0] base_addr [4];
  assign base_addr[0] = {regw[REG_BASE0 / 4 + 1], regw[REG_BASE0 / 4]};
  assign base_addr[1] = {regw[REG_BASE1 / 4 + 1], regw[REG_BASE1 / 4]};
  assign base_addr[2] = {regw[REG_BASE2 / 4 + 1], regw[REG_BASE2 / 4]};
  assign base_addr[3] = {regw[REG_BASE3 / 4 + 1], regw[REG_BASE3 / 4]};
  wire [31:0] ddr_size [4];   // bytes of each base register's buffer: LOAD / STORE bytes must lie in [0, size)
  assign ddr_size[0] = regw[REG_SIZE0 / 4];
  assign ddr_size[1] = regw[REG_SIZE1 / 4];
  assign ddr_size[2] = regw[REG_SIZE2 / 4];
  assign ddr_size[3] = regw[REG_SIZE3 / 4];
  wire [63:0] insns_addr = {regw[REG_INSNS / 4 + 1], regw[REG_INSNS / 4]};
  wire [31:0] n_insns = regw[REG_N_INSNS / 4];
  wire fetch_ddr = regw[REG_FETCH_DDR / 4][0];

  logic [31:0] ctrl_word;
  always_comb begin
    ctrl_word = '0;
    ctrl_word[CTRL_AP_START] = ap_start_r;
    ctrl_word[CTRL_AP_DONE] = ap_done_r;
    ctrl_word[CTRL_AP_IDLE] = ap_idle_r;
    ctrl_word[CTRL_AP_READY] = ap_ready_r;
    ctrl_word[CTRL_AUTO_RESTART] = auto_restart_r;
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      ap_start_r <= 1'b0;
      ap_done_r <= 1'b0;
      ap_idle_r <= 1'b1;
      ap_ready_r <= 1'b0;
      auto_restart_r <= 1'b0;
      gie <= 1'b0;
      ier <= '0;
      isr <= '0;
      s_axil_bvalid <= 1'b0;
      s_axil_rvalid <= 1'b0;
      s_axil_rdata <= '0;
      start_pulse <= 1'b0;
      run <= 1'b0;
      status_r <= '0;
      cycles_r <= '0;
      for (int k = 0; k < REGW_N; k++) regw[k] <= '0;
    end else begin
      logic [1:0] isr_n;
      isr_n = isr;
      start_pulse <= 1'b0;
      if (start_pulse) ap_start_r <= 1'b0;      // accepted
      // ---- writes
      if (s_axil_bvalid && s_axil_bready) s_axil_bvalid <= 1'b0;
      if (wr_en) begin
        s_axil_bvalid <= 1'b1;
        case (wa)
          REG_CTRL: begin
            auto_restart_r <= s_axil_wdata[CTRL_AUTO_RESTART];
            if (s_axil_wdata[CTRL_AP_START] && ap_idle_r && !run) begin
              ap_start_r <= 1'b1;
              ap_idle_r <= 1'b0;
              ap_done_r <= 1'b0;
              ap_ready_r <= 1'b0;
              start_pulse <= 1'b1;
            end
          end
          REG_GIE: gie <= s_axil_wdata[0];
          REG_IER: ier <= s_axil_wdata[1:0];
          REG_ISR: isr_n = isr_n ^ s_axil_wdata[1:0];
          REG_STATUS, REG_HW_INFO, REG_CONFIG_ID, REG_CYCLES: ;
          default: regw[widx] <= s_axil_wdata;
        endcase
      end
      // ---- reads
      if (s_axil_rvalid && s_axil_rready) s_axil_rvalid <= 1'b0;
      if (s_axil_arvalid && !s_axil_rvalid) begin
        s_axil_rvalid <= 1'b1;
        case (ra)
          REG_CTRL: begin
            s_axil_rdata <= ctrl_word;
            ap_done_r <= 1'b0;                  // clear on read
            ap_ready_r <= 1'b0;
          end
          REG_GIE: s_axil_rdata <= {31'b0, gie};
          REG_IER: s_axil_rdata <= {30'b0, ier};
          REG_ISR: s_axil_rdata <= {30'b0, isr};
          REG_STATUS: s_axil_rdata <= status_r;
          REG_HW_INFO: s_axil_rdata <= HW_INFO;
          REG_CONFIG_ID: s_axil_rdata <= CONFIG_ID;
          REG_CYCLES: s_axil_rdata <= cycles_r;
          default: s_axil_rdata <= regw[s_axil_araddr[AXIL_AW-1:2]];
        endcase
      end
      // ---- run control
      if (start_pulse) begin
        run <= 1'b1;
        status_r <= '0;
        cycles_r <= '0;
      end else if (run) begin
        cycles_r <= cycles_r + 32'd1;
        if (!stop) status_r <= status_r | err_bits;     // the first error's bit(s) only
        if (finish) begin
          run <= 1'b0;
          ap_done_r <= 1'b1;
          ap_idle_r <= 1'b1;
          ap_ready_r <= 1'b1;
          if (ier[0]) isr_n[0] = 1'b1;
        end
      end
      isr <= isr_n;
    end
  end

  // ======================================================================================= shared state
  logic prec16;               // CONFIG.precision: 0 int8, 1 int16
  logic end_done;             // the STORE module executed END
  wire clr = start_pulse;
  always_ff @(posedge clk) begin
    if (!rst_n || clr) stop <= 1'b0;
    else if (err_bits != 0) stop <= 1'b1;
  end

  // ---- on-chip buffers: inferable RAMs (rtl/ram_tdp.sv), every element stored 16 bits wide (int8 values
  // sign-extended when loaded), per ping-pong bank:
  //   IBUF  Tn lane memories x IB_D words (element idx: lane idx % Tn, word idx / Tn); port A: LOAD write or
  //         COMPUTE read of pixel x0 (bypass: first word), port B: COMPUTE read of pixel x1 (bypass: second word)
  //   WBUF  Tm memories of Tn elements x WB_D words (one COMPUTE read of Tn*Tm weights per cycle, port B; LOAD
  //         writes one contiguous run of a word per cycle, port A)
  //   ACC   Tm lane memories x ACC_WORDS (port A: read / write of pixel x0, POST read; port B: pixel x1, or the
  //         write of a single pixel)
  //   OBUF  OL = max(Tm, AXI bytes) lane memories (one bank; POST writes Tm elements, STORE reads a beat's window)
  //   PBUF  Tm lane memories of 16-byte records (entry e: lane e % Tm; port A LOAD, port B POST)
  localparam int LOG2_TN = $clog2(TN);
  localparam int LOG2_TM = $clog2(TM);
  localparam int WL = TN * TM;                             // WBUF elements per word
  localparam int LOG2_WL = $clog2(WL);
  localparam int IB_D = (IBUF_ELEMS + TN - 1) / TN;
  localparam int WB_D = (WBUF_ELEMS + WL - 1) / WL;
  localparam int OL = TM > AXI_BYTES ? TM : AXI_BYTES;
  localparam int LOG2_OL = $clog2(OL);
  localparam int OB_D = (OBUF_ELEMS + OL - 1) / OL;
  localparam int PB_D = (PBUF_ENTRIES + TM - 1) / TM;
  localparam int IB_AW = IB_D > 1 ? $clog2(IB_D) : 1;
  localparam int WB_AW = WB_D > 1 ? $clog2(WB_D) : 1;
  localparam int AC_AW = ACC_WORDS > 1 ? $clog2(ACC_WORDS) : 1;
  localparam int OB_AW = OB_D > 1 ? $clog2(OB_D) : 1;
  localparam int PB_AW = PB_D > 1 ? $clog2(PB_D) : 1;
  localparam int PREC_W = 8 * PARAM_BYTES;
  localparam int LOG2_PB = $clog2(PARAM_BYTES);

  // shift-and-add multiply in LUTs, for per-instruction setup and POST address arithmetic: the DSP48E2 slices are
  // kept for the PE array and the requantization multipliers (Yosys maps every multiply of two variables to DSP48E2)
  // (b: an instruction field of at most 16 bits)
  function automatic logic [63:0] mul_lut(input logic [63:0] a, input logic [15:0] b);
    logic [63:0] r;
    r = '0;
    for (int k = 0; k < 16; k++) r = r + ((a << k) & {64{b[k]}});
    mul_lut = r;
  endfunction
  // the same on the widths of the range checks: on-chip extents (< 2^40: e.g. (in_cols*ig) * rows_in < 2^20 * 2^16)
  // and DDR extents (< 2^48: a 32-bit stride times a 12-bit count, plus offsets)
  function automatic logic [39:0] mul40(input logic [39:0] a, input logic [15:0] b);
    logic [39:0] r;
    r = '0;
    for (int k = 0; k < 16; k++) r = r + ((a << k) & {40{b[k]}});
    mul40 = r;
  endfunction
  function automatic logic [47:0] mul48(input logic [47:0] a, input logic [15:0] b);
    logic [47:0] r;
    r = '0;
    for (int k = 0; k < 16; k++) r = r + ((a << k) & {48{b[k]}});
    mul48 = r;
  endfunction


  // ---- dependency tokens: one counter per FIFO (TOKEN_QUEUE_DEPTH tokens); a push onto a full one is
  // TOKEN_OVERFLOW (the count stays); a pop is only done when the count is non-zero (the module waits)
  localparam int TW = TOKEN_COUNT_BITS;
  localparam logic [TW-1:0] TOK_FULL = TW'(TOKEN_QUEUE_DEPTH);
  logic [TW-1:0] tok_l2c, tok_c2l, tok_c2s, tok_s2c;
  logic ld_pop_c2l, ld_push_l2c, cp_pop_l2c, cp_pop_s2c, cp_push_c2l, cp_push_c2s, st_pop_c2s, st_push_s2c;
  wire ovf_l2c = ld_push_l2c && !cp_pop_l2c && tok_l2c == TOK_FULL;
  wire ovf_c2l = cp_push_c2l && !ld_pop_c2l && tok_c2l == TOK_FULL;
  wire ovf_c2s = cp_push_c2s && !st_pop_c2s && tok_c2s == TOK_FULL;
  wire ovf_s2c = st_push_s2c && !cp_pop_s2c && tok_s2c == TOK_FULL;
  wire tok_overflow = ovf_l2c || ovf_c2l || ovf_c2s || ovf_s2c;
  wire tok_any = tok_l2c != 0 || tok_c2l != 0 || tok_c2s != 0 || tok_s2c != 0;
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      tok_l2c <= '0;
      tok_c2l <= '0;
      tok_c2s <= '0;
      tok_s2c <= '0;
    end else begin
      if (!ovf_l2c) tok_l2c <= tok_l2c + TW'(ld_push_l2c) - TW'(cp_pop_l2c);
      if (!ovf_c2l) tok_c2l <= tok_c2l + TW'(cp_push_c2l) - TW'(ld_pop_c2l);
      if (!ovf_c2s) tok_c2s <= tok_c2s + TW'(cp_push_c2s) - TW'(st_pop_c2s);
      if (!ovf_s2c) tok_s2c <= tok_s2c + TW'(st_push_s2c) - TW'(cp_pop_s2c);
    end
  end

  // ---- read channel: AR arbitration per address (fetch first; a pending address is held until accepted) and
  // in-order R routing by a FIFO of the owners of the outstanding bursts (one AXI ID, data returns in order).
  // Fetch keeps at most one burst and LOAD at most LD_OUTST (accel_pkg) bursts in flight, so the owner FIFO never
  // fills.
  logic fe_arvalid, ld_arvalid, fe_rready, ld_rready;
  logic [63:0] fe_araddr, ld_araddr;
  logic [7:0] fe_arlen, ld_arlen;
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
  wire fe_ar_ok = ar_fire && ar_sel_fe;
  wire ld_ar_ok = ar_fire && !ar_sel_fe;
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

  // beats of a burst from cur (beat-aligned) towards end, within 4 KB and 256 beats
  function automatic logic [8:0] burst_beats(input logic [63:0] cur, input logic [63:0] last);
    logic [63:0] left, to4k;
    left = (last - cur + 64'(AXI_BYTES - 1)) >> LOG2_BYTES;
    to4k = (64'd4096 - {52'b0, cur[11:0]}) >> LOG2_BYTES;
    if (to4k < left) left = to4k;
    if (left > 64'd256) left = 64'd256;
    burst_beats = left[8:0];
  endfunction

  // ======================================================================================= fetch + dispatch
  logic ifq_wr, ifq_rd, ifq_empty, ifq_full;
  logic [INSN_BITS-1:0] ifq_wdata, ifq_rdata;
  logic [$clog2(IFQ_DEPTH):0] ifq_count;
  sync_fifo #(.W(INSN_BITS), .DEPTH(IFQ_DEPTH)) u_ifq (
    .clk, .rst_n, .clr, .wr(ifq_wr), .wdata(ifq_wdata), .rd(ifq_rd), .rdata(ifq_rdata), .empty(ifq_empty),
    .full(ifq_full), .count(ifq_count));

  logic [INSN_BITS-1:0] rom [ROM_WORDS];
  initial begin
    if (ROM_FILE != "") $readmemh(ROM_FILE, rom);
  end

  typedef enum logic [2:0] {FE_IDLE, FE_REQ, FE_AR, FE_R, FE_REL} fe_state_t;
  fe_state_t fe_state;
  logic [31:0] fe_pc;         // instructions fetched (requested, in DDR mode)
  logic [63:0] fe_addr;
  logic fe_end;               // END fetched: fetch no more
  logic [3:0] fe_n;           // instructions in the current burst
  logic [7:0] fe_beat;
  logic [INSN_BITS-1:0] fe_buf;
  wire [31:0] fe_limit = fetch_ddr ? n_insns : 32'(ROM_WORDS);
  wire fe_more = run && !stop && !fe_end && fe_pc < fe_limit;
  logic [31:0] fe_left, fe_to4k, fe_cnt;
  always_comb begin
    fe_left = fe_limit - fe_pc;
    fe_to4k = (32'd4096 - {20'b0, fe_addr[11:0]}) / 32'(INSN_BITS / 8);
    fe_cnt = 32'(FETCH_BURST);
    if (fe_left < fe_cnt) fe_cnt = fe_left;
    if (fe_to4k < fe_cnt) fe_cnt = fe_to4k;
  end
  assign fe_arvalid = fe_state == FE_AR;
  assign fe_araddr = fe_addr;
  assign fe_arlen = 8'(32'(fe_n) * 32'(BEATS_PER_INSN) - 32'd1);
  assign fe_rready = fe_state == FE_R;
  wire [INSN_BITS-1:0] fe_next_buf = (fe_buf >> AXI_DW) | (INSN_BITS'(m_axi_rdata) << (INSN_BITS - AXI_DW));
  wire fe_beat_ok = fe_state == FE_R && !rq_empty && !rq_head_ld && m_axi_rvalid;
  wire fe_insn_done = fe_beat_ok && (32'(fe_beat) % 32'(BEATS_PER_INSN)) == 32'(BEATS_PER_INSN - 1);

  always_comb begin
    ifq_wr = 1'b0;
    ifq_wdata = fe_next_buf;
    if (!fetch_ddr) begin
      ifq_wdata = fe_pc < 32'(ROM_WORDS) ? rom[fe_pc] : '0;
      ifq_wr = fe_more && !ifq_full;
    end else begin
      ifq_wr = fe_insn_done && !fe_end;
    end
  end

  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      fe_state <= FE_IDLE;
      fe_pc <= '0;
      fe_addr <= insns_addr;
      fe_end <= 1'b0;
      fe_n <= '0;
      fe_beat <= '0;
      fe_buf <= '0;
    end else if (!fetch_ddr) begin
      if (ifq_wr) begin
        fe_pc <= fe_pc + 32'd1;
        if (ifq_wdata[H_OPCODE_LSB +: H_OPCODE_W] == OP_END) fe_end <= 1'b1;
      end
    end else begin
      case (fe_state)
        FE_IDLE:
          if (fe_more && 32'(ifq_count) + 32'(FETCH_BURST) <= 32'(IFQ_DEPTH) && fe_cnt != 0) begin
            fe_n <= 4'(fe_cnt);
            fe_state <= FE_REQ;
          end
        FE_REQ: fe_state <= FE_AR;
        FE_AR:
          if (fe_ar_ok) begin
            fe_state <= FE_R;
            fe_beat <= '0;
          end
        FE_R:
          if (fe_beat_ok) begin
            fe_buf <= fe_next_buf;
            fe_beat <= fe_beat + 8'd1;
            if (fe_insn_done && !fe_end) begin
              fe_pc <= fe_pc + 32'd1;
              fe_addr <= fe_addr + 64'(INSN_BITS / 8);
              if (fe_next_buf[H_OPCODE_LSB +: H_OPCODE_W] == OP_END) fe_end <= 1'b1;
            end
            if (m_axi_rlast) fe_state <= FE_REL;
          end
        FE_REL: fe_state <= FE_IDLE;
        default: fe_state <= FE_IDLE;
      endcase
    end
  end

  // ---- dispatch to the three module queues
  logic lq_wr, cq_wr, sq_wr, lq_rd, cq_rd, sq_rd;
  logic lq_empty, cq_empty, sq_empty, lq_full, cq_full, sq_full;
  logic [INSN_BITS-1:0] lq_rdata, cq_rdata, sq_rdata;
  logic [$clog2(MQ_DEPTH):0] lq_count, cq_count, sq_count;
  sync_fifo #(.W(INSN_BITS), .DEPTH(MQ_DEPTH)) u_lq (
    .clk, .rst_n, .clr, .wr(lq_wr), .wdata(ifq_rdata), .rd(lq_rd), .rdata(lq_rdata), .empty(lq_empty),
    .full(lq_full), .count(lq_count));
  sync_fifo #(.W(INSN_BITS), .DEPTH(MQ_DEPTH)) u_cq (
    .clk, .rst_n, .clr, .wr(cq_wr), .wdata(ifq_rdata), .rd(cq_rd), .rdata(cq_rdata), .empty(cq_empty),
    .full(cq_full), .count(cq_count));
  sync_fifo #(.W(INSN_BITS), .DEPTH(MQ_DEPTH)) u_sq (
    .clk, .rst_n, .clr, .wr(sq_wr), .wdata(ifq_rdata), .rd(sq_rd), .rdata(sq_rdata), .empty(sq_empty),
    .full(sq_full), .count(sq_count));

  logic disp_end;             // END dispatched
  logic disp_first;           // no instruction dispatched yet this run
  logic illegal, cfg_missing;
  wire [3:0] d_op = ifq_rdata[H_OPCODE_LSB +: H_OPCODE_W];
  // malformed: an opcode outside the ISA, bits above its format (accel_pkg UNUSED_MASKS), a token flag towards a
  // neighbour its module does not have (LOAD module: no prev, STORE module: no next)
  function automatic logic [INSN_BITS-1:0] unused_mask(input logic [3:0] op);
    unused_mask = '0;
    for (int k = 0; k < N_OPCODES; k++)
      if (32'(op) == k) unused_mask = UNUSED_MASKS[k * INSN_BITS +: INSN_BITS];
  endfunction
  wire d_to_ld, d_to_cp, d_to_st;
  wire d_bad = 32'(d_op) >= 32'(N_OPCODES) || (ifq_rdata & unused_mask(d_op)) != '0
               || (d_to_ld && (ifq_rdata[H_POP_PREV_LSB] || ifq_rdata[H_PUSH_PREV_LSB]))
               || (d_to_st && (ifq_rdata[H_POP_NEXT_LSB] || ifq_rdata[H_PUSH_NEXT_LSB]));
  assign d_to_ld = d_op == OP_CONFIG || d_op == OP_LOAD;
  assign d_to_cp = d_op == OP_NOP || d_op == OP_COMPUTE || d_op == OP_SYNC;
  assign d_to_st = d_op == OP_POST || d_op == OP_STORE || d_op == OP_END;
  always_comb begin
    lq_wr = 1'b0;
    cq_wr = 1'b0;
    sq_wr = 1'b0;
    ifq_rd = 1'b0;
    illegal = 1'b0;
    cfg_missing = 1'b0;
    if (run && !stop && !disp_end && !ifq_empty) begin
      if (d_bad) begin
        illegal = 1'b1;
        ifq_rd = 1'b1;
      end else if (disp_first && d_op != OP_CONFIG) begin
        cfg_missing = 1'b1;
        ifq_rd = 1'b1;
      end else if (d_to_ld && !lq_full) begin
        lq_wr = 1'b1;
        ifq_rd = 1'b1;
      end else if (d_to_cp && !cq_full) begin
        cq_wr = 1'b1;
        ifq_rd = 1'b1;
      end else if (d_to_st && !sq_full) begin
        sq_wr = 1'b1;
        ifq_rd = 1'b1;
      end
    end
  end
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      disp_end <= 1'b0;
      disp_first <= 1'b1;
    end else begin
      if (sq_wr && d_op == OP_END) disp_end <= 1'b1;
      if (lq_wr || cq_wr || sq_wr) disp_first <= 1'b0;
    end
  end
  // the fetch ran off the program's end (n_insns or the ROM) without an END, every fetched instruction dispatched
  wire no_end = run && !stop && !fe_end && fe_pc >= fe_limit && fe_state == FE_IDLE && ifq_empty && !disp_end;

  // ======================================================================================= LOAD module
  // Address side: the transfer is cut into DDR segments: the whole transfer (rows and pixels contiguous), one
  // row of contiguous pixels, one row *span* (IBUF only: pixel runs that overlap, 0 < stride < run <= 2 x stride,
  // run <= one beat, e.g. the folded first layer: every byte of the span is fetched once), or one pixel run.
  // Segments are cut into bursts (4 KB / 256 beats); one burst address per cycle, up to LD_OUTST bursts in
  // flight, so pixel-wise transfers stream at the DDR rate; addresses advance incrementally (no multiplier).
  // Data side: each beat is written as chunks, one per cycle: a chunk is the beat's bytes of one pixel run that
  // touch each lane memory at most once (IBUF: <= Tn elements; WBUF: within one word; PBUF: <= Tm records). A
  // beat inside one run and fitting the lanes is one chunk (rready the same cycle); otherwise rready is held for
  // the extra chunks. The run position (pixel, byte in run) is tracked incrementally per segment. Span segments:
  // the previous beat is kept, and each run is written whole (IBUF port A, and port B for the next run: the bank
  // being loaded is not read by COMPUTE) from the two-beat window once its last byte has arrived: two runs per
  // cycle, the beat held while more runs end in it.
  typedef enum logic [2:0] {LD_IDLE, LD_SETUP, LD_RUN, LD_WAIT, LD_DONE} ld_state_t;
  ld_state_t ld_state;
  logic [INSN_BITS-1:0] ld_ins;
  logic cfg_err_isa, cfg_err_cfg, post_err;
  wire [1:0]  ld_buf = ld_ins[F_LOAD_BUF_LSB +: F_LOAD_BUF_W];
  wire        ld_bank = ld_ins[F_LOAD_BANK_LSB +: F_LOAD_BANK_W];
  wire [1:0]  ld_base_reg = ld_ins[F_LOAD_BASE_REG_LSB +: F_LOAD_BASE_REG_W];
  wire [31:0] ld_ddr_offset = 32'(ld_ins[F_LOAD_DDR_OFFSET_LSB +: F_LOAD_DDR_OFFSET_W]);
  wire [31:0] ld_rows = 32'(ld_ins[F_LOAD_ROWS_LSB +: F_LOAD_ROWS_W]);
  wire [31:0] ld_cols = 32'(ld_ins[F_LOAD_COLS_LSB +: F_LOAD_COLS_W]);
  wire [31:0] ld_elems = 32'(ld_ins[F_LOAD_ELEMS_LSB +: F_LOAD_ELEMS_W]);
  wire [63:0] ld_row_stride = 64'(ld_ins[F_LOAD_ROW_STRIDE_LSB +: F_LOAD_ROW_STRIDE_W]);
  wire [63:0] ld_pix_stride = 64'(ld_ins[F_LOAD_PIX_STRIDE_LSB +: F_LOAD_PIX_STRIDE_W]);
  wire [31:0] ld_dst_word = 32'(ld_ins[F_LOAD_DST_WORD_LSB +: F_LOAD_DST_WORD_W]);
  wire [31:0] ld_dst_elem = 32'(ld_ins[F_LOAD_DST_ELEM_LSB +: F_LOAD_DST_ELEM_W]);
  wire [31:0] ld_dst_pitch = 32'(ld_ins[F_LOAD_DST_PITCH_LSB +: F_LOAD_DST_PITCH_W]);
  wire ld_is_pbuf = 32'(ld_buf) == BUF_PBUF;
  wire ld_is_wbuf = 32'(ld_buf) == BUF_WBUF;
  wire ld_is_ibuf = !ld_is_pbuf && !ld_is_wbuf;
  wire [31:0] ld_run = ld_is_pbuf ? ld_elems << LOG2_PB : (prec16 ? ld_elems << 1 : ld_elems);   // bytes of a run
  logic ld_row_contig, ld_all_contig, ld_span;                        // (set up per instruction)
  logic [63:0] ld_seg_bytes;                                          // bytes of one segment
  logic [31:0] ld_seg_pbstep, ld_run_step;                            // element/entry index step per segment / run
  logic [31:0] ld_r, ld_c;                                            // next segment
  logic [63:0] ld_rowaddr, ld_pixaddr;                                // DDR address of row ld_r / run (ld_r, ld_c)
  logic [31:0] ld_segpb;                                              // first element index of the next segment
  logic ld_seg_v;                                                     // a segment is being issued
  logic [63:0] ld_sstart, ld_send, ld_cur;                             // segment being issued, next burst address
  logic [31:0] ld_spb;
  logic ld_sfirst;                                                    // next burst is the segment's first
  logic [$clog2(LD_OUTST):0] ld_outst;                                // bursts issued, last beat not received
  // burst descriptors: {burst address, segment start, segment end, element index of the segment, first burst}
  localparam int LDQ_W = 64 + 64 + 64 + 32 + 1;
  logic ldq_empty, ldq_full;
  logic [LDQ_W-1:0] ldq_rdata;
  logic [$clog2(LD_OUTST):0] ldq_count;
  logic ld_fire;                                                      // the current beat is consumed (rready)
  sync_fifo #(.W(LDQ_W), .DEPTH(LD_OUTST)) u_ldq (
    .clk, .rst_n, .clr, .wr(ld_ar_ok), .wdata({ld_cur, ld_sstart, ld_send, ld_spb, ld_sfirst}),
    .rd(ld_fire && m_axi_rlast), .rdata(ldq_rdata), .empty(ldq_empty), .full(ldq_full), .count(ldq_count));
  wire [63:0] ldr_burst = ldq_rdata[LDQ_W-1 -: 64];
  wire [63:0] ldr_start = ldq_rdata[LDQ_W-65 -: 64];
  wire [63:0] ldr_end = ldq_rdata[LDQ_W-129 -: 64];
  wire [31:0] ldr_pb0 = ldq_rdata[32:1];
  wire ldr_first = ldq_rdata[0];
  logic [7:0] ldr_beat;                                               // beat within the current burst
  logic [LOG2_BYTES:0] ldr_ptr;                                       // next byte of the current beat
  logic [31:0] ldr_e, ldr_pb;                                         // byte within the run, run's first element
  wire [63:0] ldr_cur = ldr_burst + (64'(ldr_beat) << LOG2_BYTES);
  wire [3:0] lq_op = lq_rdata[H_OPCODE_LSB +: H_OPCODE_W];
  wire ld_go = ld_state == LD_IDLE && run && !stop && !lq_empty && !(lq_rdata[H_POP_NEXT_LSB] && tok_c2l == 0);
  assign lq_rd = ld_go;
  assign ld_pop_c2l = ld_go && lq_rdata[H_POP_NEXT_LSB];
  assign ld_push_l2c = ld_state == LD_DONE && ld_ins[H_PUSH_NEXT_LSB];
  wire [8:0] ld_blen = burst_beats(ld_cur, ld_send);
  assign ld_arvalid = ld_state == LD_RUN && ld_seg_v && 32'(ld_outst) < 32'(LD_OUTST);
  assign ld_araddr = ld_cur;
  assign ld_arlen = 8'(ld_blen - 9'd1);

  // next segment from (ld_r, ld_c): the position after it
  logic [31:0] ldn_r, ldn_c;
  logic [63:0] ldn_rowaddr, ldn_pixaddr;
  always_comb begin
    ldn_r = ld_r;
    ldn_c = ld_c;
    ldn_rowaddr = ld_rowaddr;
    ldn_pixaddr = ld_pixaddr;
    if (ld_all_contig) begin
      ldn_r = ld_rows;
    end else if (ld_row_contig || ld_span || ld_c + 32'd1 >= ld_cols) begin
      ldn_c = '0;
      ldn_r = ld_r + 32'd1;
      ldn_rowaddr = ld_rowaddr + ld_row_stride;
      ldn_pixaddr = ldn_rowaddr;
    end else begin
      ldn_c = ld_c + 32'd1;
      ldn_pixaddr = ld_pixaddr + ld_pix_stride;
    end
  end
  wire [63:0] ld_cur_next = ld_cur + (64'(ld_blen) << LOG2_BYTES);
  wire ld_seg_end = ld_ar_ok && ld_cur_next >= ld_send;               // the segment's last burst is accepted
  wire ld_take = ld_state == LD_RUN && !ld_oob && (!ld_seg_v || ld_seg_end) && ld_r < ld_rows;   // next segment
  // range checks: extents computed in LD_SETUP (registered), compared in the first LD_RUN cycle, which issues no
  // address yet (ld_seg_v is still 0); an error ends the instruction there (LD_WAIT: no burst is outstanding)
  logic ld_chk;                                                       // first LD_RUN cycle
  logic [63:0] ld_ddr_end;                                            // one past the last DDR byte, from the base
  logic [63:0] ld_buf_end, ld_buf_cap;                                // one past the last element / record, bound
  logic ld_bad_buf;                                                   // LOAD.buf names no buffer
  assign ld_oob = ld_chk && (ld_bad_buf || ld_ddr_end > 64'(ddr_size[ld_base_reg]) || ld_buf_end > ld_buf_cap);

  always_comb begin
    cfg_err_isa = 1'b0;
    cfg_err_cfg = 1'b0;
    if (ld_go && lq_op == OP_CONFIG) begin
      cfg_err_isa = 32'(lq_rdata[F_CONFIG_ISA_VERSION_LSB +: F_CONFIG_ISA_VERSION_W]) != ISA_VERSION;
      cfg_err_cfg = !cfg_err_isa && (32'(lq_rdata[F_CONFIG_TN_LSB +: F_CONFIG_TN_W]) != TN
                 || 32'(lq_rdata[F_CONFIG_TM_LSB +: F_CONFIG_TM_W]) != TM
                 || lq_rdata[F_CONFIG_CONFIG_ID_LSB +: F_CONFIG_CONFIG_ID_W] != CONFIG_ID
                 || 32'(lq_rdata[F_CONFIG_PRECISION_LSB +: F_CONFIG_PRECISION_W]) > 32'd1);
    end
  end
  always_comb begin
    err_bits = '0;
    err_bits[ST_ILLEGAL_OPCODE] = illegal;
    err_bits[ST_CONFIG_MISSING] = cfg_missing;
    err_bits[ST_ISA_VERSION_MISMATCH] = cfg_err_isa;
    err_bits[ST_CONFIG_MISMATCH] = cfg_err_cfg;
    err_bits[ST_OUT_OF_RANGE] = post_err || ld_oob || cp_oob || pp_oob || sd_oob;
    err_bits[ST_NO_END] = no_end;
    err_bits[ST_TOKEN_OVERFLOW] = run && tok_overflow;
    err_bits[ST_TOKENS_LEFT] = tokens_left;
    err_bits[ST_WATCHDOG] = wd_fire;
  end

  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      ld_state <= LD_IDLE;
      ld_ins <= '0;
      prec16 <= 1'b0;
      ld_r <= '0;
      ld_c <= '0;
      ld_row_contig <= 1'b0;
      ld_span <= 1'b0;
      ld_seg_v <= 1'b0;
      ld_all_contig <= 1'b0;
      ld_seg_bytes <= '0;
      ld_seg_pbstep <= '0;
      ld_run_step <= '0;
      ld_rowaddr <= '0;
      ld_pixaddr <= '0;
      ld_segpb <= '0;
      ld_sstart <= '0;
      ld_send <= '0;
      ld_spb <= '0;
      ld_sfirst <= 1'b0;
      ld_cur <= '0;
      ld_chk <= 1'b0;
      {ld_ddr_end, ld_buf_end, ld_buf_cap} <= '0;
      ld_bad_buf <= 1'b0;
    end else begin
      ld_chk <= ld_state == LD_SETUP;
      case (ld_state)
        LD_IDLE:
          if (ld_go) begin
            ld_ins <= lq_rdata;
            ld_r <= '0;
            ld_c <= '0;
            ld_state <= LD_DONE;
            if (lq_op == OP_CONFIG) begin
              prec16 <= 32'(lq_rdata[F_CONFIG_PRECISION_LSB +: F_CONFIG_PRECISION_W]) == PREC_INT16;
            end else if (lq_op == OP_LOAD && lq_rdata[F_LOAD_ROWS_LSB +: F_LOAD_ROWS_W] != 0
                         && lq_rdata[F_LOAD_COLS_LSB +: F_LOAD_COLS_W] != 0
                         && lq_rdata[F_LOAD_ELEMS_LSB +: F_LOAD_ELEMS_W] != 0) begin
              ld_state <= LD_SETUP;
            end
          end
        LD_SETUP: begin
          logic rc, ac, sp;
          logic [63:0] rowbytes, colstep, span, tot;
          logic [31:0] step;
          step = ld_is_pbuf ? ld_elems : ld_is_wbuf ? ld_dst_pitch << LOG2_WL : ld_dst_pitch << LOG2_TN;
          rowbytes = mul_lut(64'(ld_run), 16'(ld_cols));                  // bytes of a row's runs
          colstep = mul_lut(64'(step), 16'(ld_cols));
          rc = ld_cols == 1 || ld_pix_stride == 64'(ld_run);
          ac = rc && (ld_rows == 1 || ld_row_stride == rowbytes);
          // row span (generator/hwmodel.py use_span): IBUF runs that overlap, fit one beat and the lanes, and
          // whose span takes no more beats than the runs one by one
          span = mul_lut(ld_pix_stride, 16'(ld_cols - 32'd1)) + 64'(ld_run);
          sp = !rc && ld_is_ibuf && ld_pix_stride != 0 && ld_pix_stride < 64'(ld_run)
               && 64'(ld_run) <= ld_pix_stride << 1 && ld_run <= 32'(AXI_BYTES) && ld_elems <= 32'(TN)
               && ld_dst_pitch != 0 && ((span + 64'(AXI_BYTES - 1)) >> LOG2_BYTES) <= 64'(ld_cols);
          tot = mul_lut(colstep, 16'(ld_rows));                          // index step of all the runs
          ld_row_contig <= rc;
          ld_all_contig <= ac;
          ld_span <= sp;
          ld_seg_bytes <= ac ? mul_lut(rowbytes, 16'(ld_rows)) : rc ? rowbytes : sp ? span : 64'(ld_run);
          ld_seg_pbstep <= ac ? 32'(tot) : (rc || sp) ? 32'(colstep) : step;
          ld_ddr_end <= 64'(ld_ddr_offset) + 64'(mul48(48'(ld_row_stride), 16'(ld_rows - 32'd1)))
                        + mul_lut(ld_pix_stride, 16'(ld_cols - 32'd1)) + 64'(ld_run);   // (the span's multiply)
          ld_buf_end <= ld_is_pbuf ? 64'(ld_dst_word) + tot
                        : (ld_is_wbuf ? (64'(ld_dst_word) << LOG2_WL) : (64'(ld_dst_word) << LOG2_TN)) + 64'(ld_dst_elem)
                          + tot - 64'(step) + 64'(ld_elems);
          ld_buf_cap <= ld_is_pbuf ? 64'(PBUF_ENTRIES)
                        : ld_is_wbuf ? 64'(prec16 ? WBUF_WORDS16 : WBUF_WORDS8) << LOG2_WL
                                     : 64'(prec16 ? IBUF_WORDS16 : IBUF_WORDS8) << LOG2_TN;
          ld_bad_buf <= !ld_is_pbuf && !ld_is_wbuf && 32'(ld_buf) != BUF_IBUF;
          ld_run_step <= step;
          ld_segpb <= ld_is_pbuf ? ld_dst_word
                      : ld_is_wbuf ? (ld_dst_word << LOG2_WL) + ld_dst_elem : (ld_dst_word << LOG2_TN) + ld_dst_elem;
          ld_rowaddr <= base_addr[ld_base_reg] + 64'(ld_ddr_offset);
          ld_pixaddr <= base_addr[ld_base_reg] + 64'(ld_ddr_offset);
          ld_seg_v <= 1'b0;
          ld_state <= LD_RUN;
        end
        LD_RUN: begin                                   // one segment set up, or one burst address, per cycle
          if (ld_ar_ok) begin
            ld_cur <= ld_cur_next;
            ld_sfirst <= 1'b0;
          end
          if (ld_seg_end) ld_seg_v <= 1'b0;
          if (ld_oob) begin
            ld_state <= LD_WAIT;                        // refused: nothing issued
          end else if (ld_take) begin
            ld_seg_v <= 1'b1;
            ld_sstart <= ld_pixaddr;
            ld_send <= ld_pixaddr + ld_seg_bytes;
            ld_cur <= ld_pixaddr & ~64'(AXI_BYTES - 1);
            ld_spb <= ld_segpb;
            ld_sfirst <= 1'b1;
            ld_segpb <= ld_segpb + ld_seg_pbstep;
            ld_r <= ldn_r;
            ld_c <= ldn_c;
            ld_rowaddr <= ldn_rowaddr;
            ld_pixaddr <= ldn_pixaddr;
          end else if (!ld_seg_v && ld_r >= ld_rows) begin
            ld_state <= LD_WAIT;
          end
        end
        LD_WAIT: if (ld_outst == 0) ld_state <= LD_DONE;
        LD_DONE: ld_state <= LD_IDLE;
        default: ld_state <= LD_IDLE;
      endcase
    end
  end

  // ---- data side: the chunk of the current beat written this cycle
  localparam int PW = LOG2_BYTES + 1;
  wire ld_data = !rq_empty && rq_head_ld && m_axi_rvalid;             // a beat of a LOAD burst is present
  wire ld_segstart = ldr_first && ldr_beat == 0 && ldr_ptr == 0;      // first byte of a segment: fresh position
  wire [31:0] ld_e = ld_segstart ? 32'd0 : ldr_e;
  wire [31:0] ld_pb = ld_segstart ? ldr_pb0 : ldr_pb;
  logic [PW-1:0] ld_j0, ld_hi;                                        // chunk start, end of the beat's valid bytes
  logic [31:0] ld_cnt;                                                // chunk bytes
  logic [31:0] ld_idx0;                                               // element / record of the chunk's first byte
  logic [31:0] ld_ph;                                                 // byte within it where the chunk starts
  logic ld_consumed;
  always_comb begin
    logic [63:0] d;
    logic [PW-1:0] lo;
    logic [31:0] avail, lim, c;
    lo = ldr_cur < ldr_start ? PW'(ldr_start - ldr_cur) : '0;
    d = ldr_end - ldr_cur;
    ld_hi = d >= 64'(AXI_BYTES) ? PW'(AXI_BYTES) : PW'(d);
    ld_j0 = ldr_ptr > lo ? ldr_ptr : lo;
    avail = ld_hi > ld_j0 ? 32'(ld_hi - ld_j0) : 32'd0;
    if (ld_is_pbuf) begin
      ld_idx0 = ld_pb + (ld_e >> LOG2_PB);
      ld_ph = 32'(ld_e[LOG2_PB-1:0]);
      lim = 32'(TM * PARAM_BYTES) - ld_ph;
    end else begin
      ld_idx0 = ld_pb + (prec16 ? ld_e >> 1 : ld_e);
      ld_ph = 32'(prec16 & ld_e[0]);
      if (ld_is_wbuf) lim = ((32'(WL) - 32'(ld_idx0[LOG2_WL-1:0])) << prec16) - ld_ph;
      else lim = (32'(TN) << prec16) - ld_ph;
    end
    c = avail;
    if (ld_run - ld_e < c) c = ld_run - ld_e;
    if (lim < c) c = lim;
    ld_cnt = c;
    ld_consumed = ld_span ? !sp_e[2] : 32'(ld_j0) + c >= 32'(ld_hi);
  end
  wire ld_wr = ld_data && ld_cnt != 0 && !ld_span;
  assign ld_fire = ld_data && ld_consumed;
  assign ld_rready = ld_consumed;

  // ---- span segments: run q = ldr_q* (port A) and run q + 1 (port B) are written when they end in this beat
  // (run k of the segment: bytes [k*stride, k*stride + run) from its start); the beat is held while a third
  // run ends in it. The window is {this beat, the previous beat of the segment}: a run ending in this beat
  // starts at most AXI_BYTES - 1 bytes before it (run <= AXI_BYTES).
  logic [31:0] ldr_qoff, ldr_qpb;                                     // next run: segment byte offset, element
  logic [AXI_DW-1:0] ld_prev;                                         // the LOAD's previous beat
  wire [31:0] sp_qoff = ld_segstart ? 32'd0 : ldr_qoff;
  wire [31:0] sp_qpb = ld_segstart ? ldr_pb0 : ldr_qpb;
  wire [31:0] sp_stride = 32'(ld_pix_stride);
  logic [2:0] sp_e;                                                   // runs q, q + 1, q + 2 end in this beat
  logic [LOG2_BYTES:0] sp_wi;                                         // window byte of run q's first byte
  always_comb begin
    logic [31:0] bend, len, lim;
    bend = 32'(ldr_cur - ldr_start) + 32'(AXI_BYTES);                // segment offset just past this beat
    len = 32'(ldr_end - ldr_start);
    lim = bend < len ? bend : len;
    for (int k = 0; k < 3; k++)
      sp_e[k] = ld_span && ld_data && sp_qoff + (k == 0 ? 32'd0 : k == 1 ? sp_stride : sp_stride << 1) + ld_run <= lim;
    sp_wi = (LOG2_BYTES + 1)'(sp_qoff + 32'(2 * AXI_BYTES) - bend);
  end
  logic [AXI_DW-1:0] sp_rot [2];                                      // run q / q + 1 from its first byte
  always_comb begin
    logic [2*AXI_DW-1:0] win;
    logic [LOG2_BYTES:0] w1;
    win = {m_axi_rdata, ld_prev};
    w1 = sp_wi + (LOG2_BYTES + 1)'(sp_stride);
    for (int r = 0; r < AXI_BYTES; r++) begin
      sp_rot[0][8 * r +: 8] = win[8 * ((r + 32'(sp_wi)) & (2 * AXI_BYTES - 1)) +: 8];
      sp_rot[1][8 * r +: 8] = win[8 * ((r + 32'(w1)) & (2 * AXI_BYTES - 1)) +: 8];
    end
  end

  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      ld_outst <= '0;
      ldr_beat <= '0;
      ldr_ptr <= '0;
      ldr_e <= '0;
      ldr_pb <= '0;
      ldr_qoff <= '0;
      ldr_qpb <= '0;
      ld_prev <= '0;
    end else begin
      ld_outst <= ld_outst + ($clog2(LD_OUTST) + 1)'(ld_ar_ok) - ($clog2(LD_OUTST) + 1)'(ld_fire && m_axi_rlast);
      if (ld_fire) ld_prev <= m_axi_rdata;
      if (ld_data && ld_span) begin
        ldr_qoff <= sp_e[1] ? sp_qoff + (sp_stride << 1) : sp_e[0] ? sp_qoff + sp_stride : sp_qoff;
        ldr_qpb <= sp_e[1] ? sp_qpb + (ld_run_step << 1) : sp_e[0] ? sp_qpb + ld_run_step : sp_qpb;
        if (ld_consumed) begin
          ldr_ptr <= '0;
          ldr_beat <= m_axi_rlast ? 8'd0 : ldr_beat + 8'd1;
        end else begin
          ldr_ptr <= PW'(1);                                          // (not the segment's first cycle any more)
        end
      end else if (ld_data) begin
        if (ld_e + ld_cnt >= ld_run) begin
          ldr_e <= '0;
          ldr_pb <= ld_pb + ld_run_step;
        end else begin
          ldr_e <= ld_e + ld_cnt;
          ldr_pb <= ld_pb;
        end
        if (ld_consumed) begin
          ldr_ptr <= '0;
          ldr_beat <= m_axi_rlast ? 8'd0 : ldr_beat + 8'd1;
        end else begin
          ldr_ptr <= ld_j0 + PW'(ld_cnt);
        end
      end
    end
  end

  // beat rotated so that chunk byte u (counted from the chunk's first element / record) is ld_rot byte u mod
  // AXI_BYTES; the WBUF rotation also aligns element q of the word: element q byte b is ld_rotw byte (q*eb + b)
  logic [AXI_DW-1:0] ld_rot, ld_rotw;
  always_comb begin
    logic [LOG2_BYTES-1:0] sh, shw;
    sh = LOG2_BYTES'(ld_j0) - LOG2_BYTES'(ld_ph);
    shw = sh - (LOG2_BYTES'(ld_idx0) << prec16);
    for (int r = 0; r < AXI_BYTES; r++) begin
      ld_rot[8 * r +: 8] = m_axi_rdata[8 * ((r + 32'(sh)) & (AXI_BYTES - 1)) +: 8];
      ld_rotw[8 * r +: 8] = m_axi_rdata[8 * ((r + 32'(shw)) & (AXI_BYTES - 1)) +: 8];
    end
  end
  // chunk mask: bit u set for the bytes u in [ph, ph + cnt) counted from the first byte of the chunk's first
  // element / record (cnt <= AXI_BYTES, ph < PARAM_BYTES)
  localparam int MW = AXI_BYTES + PARAM_BYTES;
  logic [MW-1:0] ld_mask;
  always_comb begin
    logic [MW-1:0] ones;
    ones = MW'(((MW + 1)'(1) << ld_cnt[PW-1:0]) - (MW + 1)'(1));
    ld_mask = ld_wr ? ones << ld_ph[LOG2_PB-1:0] : '0;
  end

  // IBUF lane writes, port A (a chunk, or span run q) and port B (span run q + 1): lane n takes the element
  // k = (n - idx0) mod Tn, word idx0 / Tn or the next one
  localparam int IXW = $clog2(2 * TN + MW);
  localparam int IMX = 2 ** IXW;
  logic [AXI_DW-1:0] ibp_rot [2];
  logic [31:0] ibp_idx0 [2];
  logic [IMX-1:0] ibp_mask [2];
  always_comb begin
    logic [IMX-1:0] runm;
    runm = IMX'(((IMX + 1)'(1) << ld_run[PW-1:0]) - (IMX + 1)'(1));
    ibp_rot[0] = ld_span ? sp_rot[0] : ld_rot;
    ibp_idx0[0] = ld_span ? sp_qpb : ld_idx0;
    ibp_mask[0] = ld_span ? (sp_e[0] ? runm : '0) : IMX'(ld_mask);
    ibp_rot[1] = sp_rot[1];
    ibp_idx0[1] = sp_qpb + ld_run_step;
    ibp_mask[1] = sp_e[1] ? runm : '0;
  end
  logic [2*TN-1:0] ibw_we [2];
  logic [16*TN-1:0] ibw_data [2];
  logic [IB_AW*TN-1:0] ibw_row [2];
  for (genvar pt = 0; pt < 2; pt++) begin : g_ibw
    wire [31:0] row0 = ibp_idx0[pt] >> LOG2_TN;
    wire ok0 = row0 < 32'(IB_D);
    wire ok1 = row0 + 32'd1 < 32'(IB_D);
    always_comb begin
      for (int n = 0; n < TN; n++) begin
        logic [LOG2_TN-1:0] k;
        logic [LOG2_TN+1:0] u0, u1;
        logic [7:0] d0, d1;
        logic nxt, ok;
        k = LOG2_TN'(n) - ibp_idx0[pt][LOG2_TN-1:0];
        nxt = LOG2_TN'(n) < ibp_idx0[pt][LOG2_TN-1:0];
        ok = ld_is_ibuf && (nxt ? ok1 : ok0);
        u0 = (LOG2_TN + 2)'(k) << prec16;
        u1 = u0 + (LOG2_TN + 2)'(1);
        d0 = ibp_rot[pt][8 * LOG2_BYTES'(u0) +: 8];
        d1 = ibp_rot[pt][8 * LOG2_BYTES'(u1) +: 8];
        ibw_row[pt][IB_AW * n +: IB_AW] = IB_AW'(row0 + 32'(nxt));
        if (!ok) ibw_we[pt][2 * n +: 2] = 2'b00;
        else if (prec16) ibw_we[pt][2 * n +: 2] = {ibp_mask[pt][IXW'(u1)], ibp_mask[pt][IXW'(u0)]};
        else ibw_we[pt][2 * n +: 2] = {2{ibp_mask[pt][IXW'(u0)]}};
        ibw_data[pt][16 * n +: 16] = prec16 ? {d1, d0} : {{8{d0[7]}}, d0};
      end
    end
  end

  // WBUF word write: the chunk covers units [us, us + cnt) of word idx0 / WL (units: int8 elements, int16 bytes),
  // at most two groups of AXI_BYTES units: unit x is written if its group is g0 (bit x mod G of the shifted
  // mask) or g0 + 1 (bit G + x mod G)
  localparam int G = AXI_BYTES;
  localparam int LOG2_G = LOG2_BYTES;
  wire [31:0] wbw_row32 = ld_idx0 >> LOG2_WL;
  wire [WB_AW-1:0] wbw_row = WB_AW'(wbw_row32);
  wire [LOG2_WL:0] wbw_us = ((LOG2_WL + 1)'(ld_idx0[LOG2_WL-1:0]) << prec16) + (LOG2_WL + 1)'(ld_ph);
  wire [LOG2_WL+1-LOG2_G:0] wbw_g0 = (LOG2_WL + 2 - LOG2_G)'(wbw_us >> LOG2_G);
  wire [2*G-1:0] wbw_m = ld_wr && ld_is_wbuf && wbw_row32 < 32'(WB_D)
                         ? (2 * G)'(((2 * G + 1)'(1) << ld_cnt[PW-1:0]) - (2 * G + 1)'(1)) << wbw_us[LOG2_G-1:0] : '0;
  function automatic logic wb_unit(input int x, input logic [LOG2_WL+1-LOG2_G:0] g0, input logic [2*G-1:0] m);
    wb_unit = ((LOG2_WL + 2 - LOG2_G)'(x / G) == g0 && m[x % G])
           || ((LOG2_WL + 2 - LOG2_G)'(x / G) == g0 + 1'b1 && m[G + x % G]);
  endfunction
  logic [2*WL-1:0] wbw_we;
  logic [16*WL-1:0] wbw_data;
  always_comb begin
    for (int q = 0; q < WL; q++) begin
      logic [7:0] d0, d1, e8;
      d0 = ld_rotw[8 * ((2 * q) % AXI_BYTES) +: 8];
      d1 = ld_rotw[8 * ((2 * q + 1) % AXI_BYTES) +: 8];
      e8 = ld_rotw[8 * (q % AXI_BYTES) +: 8];
      if (prec16) wbw_we[2 * q +: 2] = {wb_unit(2 * q + 1, wbw_g0, wbw_m), wb_unit(2 * q, wbw_g0, wbw_m)};
      else wbw_we[2 * q +: 2] = {2{wb_unit(q, wbw_g0, wbw_m)}};
      wbw_data[16 * q +: 16] = prec16 ? {d1, d0} : {{8{e8[7]}}, e8};
    end
  end

  // PBUF lane writes: lane l takes chunk record k = (l - idx0) mod Tm (k*16 + b < MW)
  localparam int PXW = $clog2(PARAM_BYTES * TM + MW);
  localparam int PMX = 2 ** PXW;
  wire [PMX-1:0] pb_mask = PMX'(ld_mask);
  wire [31:0] pbw_row0 = ld_idx0 >> LOG2_TM;
  wire pbw_ok0 = ld_is_pbuf && pbw_row0 < 32'(PB_D);
  wire pbw_ok1 = ld_is_pbuf && pbw_row0 + 32'd1 < 32'(PB_D);
  logic [PARAM_BYTES*TM-1:0] pbw_we;
  logic [PREC_W*TM-1:0] pbw_data;
  logic [PB_AW*TM-1:0] pbw_row;
  always_comb begin
    for (int l = 0; l < TM; l++) begin
      logic [LOG2_TM-1:0] k;
      logic nxt;
      k = LOG2_TM'(l) - ld_idx0[LOG2_TM-1:0];
      nxt = LOG2_TM'(l) < ld_idx0[LOG2_TM-1:0];
      pbw_row[PB_AW * l +: PB_AW] = PB_AW'(pbw_row0 + 32'(nxt));
      for (int b = 0; b < PARAM_BYTES; b++) begin
        logic [LOG2_TM+LOG2_PB-1:0] u;
        u = ((LOG2_TM + LOG2_PB)'(k) << LOG2_PB) + (LOG2_TM + LOG2_PB)'(b);
        pbw_we[PARAM_BYTES * l + b] = (nxt ? pbw_ok1 : pbw_ok0) && pb_mask[PXW'(u)];
        // (u mod AXI_BYTES: its low bits are b, a constant)
        pbw_data[PREC_W * l + 8 * b +: 8] = AXI_BYTES <= PARAM_BYTES ? ld_rot[8 * (b % AXI_BYTES) +: 8]
                                                                     : ld_rot[8 * LOG2_BYTES'(u) +: 8];
      end
    end
  end

  // ======================================================================================= COMPUTE module
  // Issue stage (S0, one (i, ky, kx) step per cycle, addresses kept incrementally), S1: IBUF / WBUF words out of
  // the RAMs into the PE array, S2: PE sums (after the product registers), running sums updated, ACC read for
  // the read-modify-write of an output word, S3: ACC write. int8 accumulation into ACC (acc_init = 0) of a
  // K = ig*kh*kw = 1 instruction issues every other cycle (the two ACC ports serve both pixels' read and write).
  typedef enum logic [2:0] {C_IDLE, C_SETUP, C_RUN, C_DRAIN, C_DONE} cp_state_t;
  cp_state_t cp_state;
  logic [INSN_BITS-1:0] cp_ins;
  wire        cp_acc_bank = cp_ins[F_COMPUTE_ACC_BANK_LSB +: F_COMPUTE_ACC_BANK_W];
  wire        cp_ibuf_bank = cp_ins[F_COMPUTE_IBUF_BANK_LSB +: F_COMPUTE_IBUF_BANK_W];
  wire        cp_wbuf_bank = cp_ins[F_COMPUTE_WBUF_BANK_LSB +: F_COMPUTE_WBUF_BANK_W];
  wire        cp_acc_init = cp_ins[F_COMPUTE_ACC_INIT_LSB +: F_COMPUTE_ACC_INIT_W];
  wire        cp_bypass = cp_ins[F_COMPUTE_BYPASS_LSB +: F_COMPUTE_BYPASS_W];
  wire [31:0] cp_oh = 32'(cp_ins[F_COMPUTE_OH_LSB +: F_COMPUTE_OH_W]);
  wire [31:0] cp_ow = 32'(cp_ins[F_COMPUTE_OW_LSB +: F_COMPUTE_OW_W]);
  wire [31:0] cp_og = 32'(cp_ins[F_COMPUTE_OG_LSB +: F_COMPUTE_OG_W]);
  wire [31:0] cp_ig = 32'(cp_ins[F_COMPUTE_IG_LSB +: F_COMPUTE_IG_W]);
  wire [31:0] cp_kh = 32'(cp_ins[F_COMPUTE_KH_LSB +: F_COMPUTE_KH_W]);
  wire [31:0] cp_kw = 32'(cp_ins[F_COMPUTE_KW_LSB +: F_COMPUTE_KW_W]);
  wire [15:0] cp_s = 16'(cp_ins[F_COMPUTE_STRIDE_LSB +: F_COMPUTE_STRIDE_W]);
  wire [31:0] cp_in_cols = 32'(cp_ins[F_COMPUTE_IN_COLS_LSB +: F_COMPUTE_IN_COLS_W]);
  wire [31:0] cp_ibuf_word = 32'(cp_ins[F_COMPUTE_IBUF_WORD_LSB +: F_COMPUTE_IBUF_WORD_W]);
  wire [31:0] cp_wbuf_word = 32'(cp_ins[F_COMPUTE_WBUF_WORD_LSB +: F_COMPUTE_WBUF_WORD_W]);
  logic [31:0] cp_oy, cp_ox, cp_o, cp_i, cp_ky, cp_kx;
  logic [31:0] cp_rowstep, cp_sig, cp_srow;          // IBUF words per input row (in_cols*ig), per s pixels, per s rows
  logic [31:0] cp_prow, cp_pw;                       // IBUF word of the output row's / pixel's window origin
  logic [31:0] cp_offrow, cp_off;                    // (ky*in_cols)*ig + i, + kx*ig
  logic [31:0] cp_ww, cp_awp, cp_bo;                 // WBUF word, ACC word of the pixel (p*og), bypass element o*Tm
  logic cp_alt, cp_issued;
  wire [3:0] cq_op = cq_rdata[H_OPCODE_LSB +: H_OPCODE_W];
  wire cp_go = cp_state == C_IDLE && run && !stop && !cq_empty
               && !(cq_rdata[H_POP_PREV_LSB] && tok_l2c == 0) && !(cq_rdata[H_POP_NEXT_LSB] && tok_s2c == 0);
  assign cq_rd = cp_go;
  assign cp_pop_l2c = cp_go && cq_rdata[H_POP_PREV_LSB];
  assign cp_pop_s2c = cp_go && cq_rdata[H_POP_NEXT_LSB];
  assign cp_push_c2l = cp_state == C_DONE && cp_ins[H_PUSH_PREV_LSB];
  assign cp_push_c2s = cp_state == C_DONE && cp_ins[H_PUSH_NEXT_LSB];
  // output pixels this step: 2 in int8 (packed DSP), 1 in int16 and bypass
  wire cp_two = !prec16 && !cp_bypass && cp_ox + 32'd1 < cp_ow;
  wire cp_first = cp_i == 0 && cp_ky == 0 && cp_kx == 0;
  wire cp_last = cp_bypass || (cp_kx + 32'd1 >= cp_kw && cp_ky + 32'd1 >= cp_kh && cp_i + 32'd1 >= cp_ig);
  wire cp_issue = cp_state == C_RUN && !(cp_alt && cp_issued);
  wire [31:0] cp_iw0 = cp_pw + cp_off;
  wire [31:0] cp_bw = cp_pw + (cp_bo >> LOG2_TN);                       // bypass: first IBUF word of the o group
  wire [IB_AW-1:0] cp_ib_a = IB_AW'(cp_bypass ? cp_bw : cp_iw0);
  wire [IB_AW-1:0] cp_ib_b = IB_AW'(cp_bypass ? cp_bw + 32'd1 : cp_iw0 + cp_sig);
  wire [WB_AW-1:0] cp_wb_a = WB_AW'(cp_ww);

  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      cp_state <= C_IDLE;
      cp_ins <= '0;
      {cp_oy, cp_ox, cp_o, cp_i, cp_ky, cp_kx} <= '0;
      {cp_rowstep, cp_sig, cp_srow, cp_prow, cp_pw, cp_offrow, cp_off, cp_ww, cp_awp, cp_bo} <= '0;
      cp_alt <= 1'b0;
      cp_issued <= 1'b0;
    end else begin
      cp_issued <= cp_issue;
      case (cp_state)
        C_IDLE:
          if (cp_go) begin
            cp_ins <= cq_rdata;
            cp_state <= C_DONE;
            if (cq_op == OP_COMPUTE && cq_rdata[F_COMPUTE_OH_LSB +: F_COMPUTE_OH_W] != 0
                && cq_rdata[F_COMPUTE_OW_LSB +: F_COMPUTE_OW_W] != 0
                && cq_rdata[F_COMPUTE_OG_LSB +: F_COMPUTE_OG_W] != 0) cp_state <= C_SETUP;
          end
        C_SETUP: begin
          logic [31:0] rs;
          rs = 32'(mul_lut(64'(cp_in_cols), 16'(cp_ig)));
          cp_rowstep <= rs;
          cp_sig <= 32'(mul_lut(64'(cp_ig), cp_s));
          cp_srow <= 32'(mul_lut(64'(rs), cp_s));
          {cp_oy, cp_ox, cp_o, cp_i, cp_ky, cp_kx} <= '0;
          cp_prow <= cp_ibuf_word;
          cp_pw <= cp_ibuf_word;
          cp_offrow <= '0;
          cp_off <= '0;
          cp_ww <= cp_wbuf_word;
          cp_awp <= '0;
          cp_bo <= '0;
          cp_alt <= !prec16 && !cp_bypass && !cp_acc_init && cp_ig == 1 && cp_kh == 1 && cp_kw == 1;
          cp_state <= C_RUN;
        end
        C_RUN:
          if (cp_issue) begin
            if (cp_last) begin
              // last (i, ky, kx) step of the output word(s): next output word
              {cp_i, cp_ky, cp_kx} <= '0;
              cp_offrow <= '0;
              cp_off <= '0;
              if (cp_o + 32'd1 < cp_og) begin
                cp_o <= cp_o + 32'd1;
                cp_ww <= cp_ww + 32'd1;
                cp_bo <= cp_bo + 32'(TM);
              end else begin
                cp_o <= '0;
                cp_ww <= cp_wbuf_word;
                cp_bo <= '0;
                cp_awp <= cp_awp + (cp_two ? cp_og << 1 : cp_og);
                if (cp_ox + (cp_two ? 32'd2 : 32'd1) < cp_ow) begin
                  cp_ox <= cp_ox + (cp_two ? 32'd2 : 32'd1);
                  cp_pw <= cp_pw + (cp_two ? cp_sig << 1 : cp_sig);
                end else begin
                  cp_ox <= '0;
                  cp_oy <= cp_oy + 32'd1;
                  cp_prow <= cp_prow + cp_srow;
                  cp_pw <= cp_prow + cp_srow;
                  if (cp_oy + 32'd1 >= cp_oh) cp_state <= C_DRAIN;
                end
              end
            end else begin
              cp_ww <= cp_ww + 32'd1;
              if (cp_kx + 32'd1 < cp_kw) begin
                cp_kx <= cp_kx + 32'd1;
                cp_off <= cp_off + cp_ig;
              end else begin
                cp_kx <= '0;
                if (cp_ky + 32'd1 < cp_kh) begin
                  cp_ky <= cp_ky + 32'd1;
                  cp_offrow <= cp_offrow + cp_rowstep;
                  cp_off <= cp_offrow + cp_rowstep;
                end else begin
                  cp_ky <= '0;
                  cp_i <= cp_i + 32'd1;
                  cp_offrow <= cp_i + 32'd1;
                  cp_off <= cp_i + 32'd1;
                end
              end
            end
          end
        C_DRAIN: if (!cp_s1_v && !cp_s2_v && !cp_s3_v) cp_state <= C_DONE;
        C_DONE: cp_state <= C_IDLE;
        default: cp_state <= C_IDLE;
      endcase
    end
  end

  // ---- range checks (OUT_OF_RANGE, as the golden simulator): window columns (ow-1)*s + kw <= in_cols, IBUF words
  // ibuf_word + ((oh-1)*s + kh)*in_cols*ig, ACC words oh*ow*og, WBUF words wbuf_word + og*ig*kh*kw (bypass:
  // og*Tm <= ig*Tn channels). Stage 1 in C_SETUP, stage 2 the cycle after, compared the cycle after that: the
  // instruction cannot finish before (C_RUN >= 1 cycle, C_DRAIN >= 3), so nothing downstream starts after an error.
  logic cp_chk1, cp_chk2;
  logic [39:0] cp_k_wcols, cp_k_ohow, cp_k_ogig, cp_k_iend, cp_k_nw, cp_k_wend;
  logic [15:0] cp_k_rowsin, cp_k_khkw;                 // (at most 4095*15 + 15, 15*15)
  logic cp_k_win, cp_k_byp;
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      cp_chk1 <= 1'b0;
      cp_chk2 <= 1'b0;
    end else begin
      cp_chk1 <= cp_state == C_SETUP;
      cp_chk2 <= cp_chk1;
    end
    if (cp_state == C_SETUP) begin
      cp_k_wcols <= mul40(40'(cp_ow - 32'd1), cp_s) + 40'(cp_kw);
      cp_k_rowsin <= 16'(mul40(40'(cp_oh - 32'd1), cp_s) + 40'(cp_kh));
      cp_k_ohow <= mul40(40'(cp_oh), 16'(cp_ow));
      cp_k_ogig <= mul40(40'(cp_og), 16'(cp_ig));
      cp_k_khkw <= 16'(mul40(40'(cp_kh), 16'(cp_kw)));
    end
    if (cp_chk1) begin                                 // (cp_rowstep = in_cols*ig, set in C_SETUP)
      cp_k_iend <= 40'(cp_ibuf_word) + mul40(40'(cp_rowstep), cp_k_rowsin);
      cp_k_nw <= mul40(cp_k_ohow, 16'(cp_og));
      cp_k_wend <= 40'(cp_wbuf_word) + mul40(cp_k_ogig, cp_k_khkw);
      cp_k_win <= cp_k_wcols > 40'(cp_in_cols);
      cp_k_byp <= (40'(cp_og) << LOG2_TM) > (40'(cp_ig) << LOG2_TN);
    end
  end
  assign cp_oob = cp_chk2 && (cp_k_win || cp_k_iend > 40'(prec16 ? IBUF_WORDS16 : IBUF_WORDS8)
                              || cp_k_nw > 40'(ACC_WORDS)
                              || (cp_bypass ? cp_k_byp : cp_k_wend > 40'(prec16 ? WBUF_WORDS16 : WBUF_WORDS8)));

  // ---- pipeline
  logic cp_s1_v, cp_s1_first, cp_s1_last, cp_s1_two;
  logic cp_s2_v, cp_s2_first, cp_s2_last, cp_s2_two;
  logic cp_s3_v, cp_s3_last, cp_s3_two;
  logic [AC_AW-1:0] cp_s1_aw0, cp_s1_aw1, cp_s2_aw0, cp_s2_aw1, cp_s3_aw0, cp_s3_aw1;
  logic [31:0] cp_s1_boff;                             // bypass: lane of the first element
  logic [TN*16-1:0] ib_rd_a [2];
  logic [TN*16-1:0] ib_rd_b [2];
  logic [WL*16-1:0] wb_rd [2];
  logic [TM*ACC_W-1:0] acc_rd_a [2];
  logic [TM*ACC_W-1:0] acc_rd_b [2];
  logic [TM*16-1:0] cp_byp, cp_byp_q;                  // bypass elements (S1, S2)
  logic [TM*ACC_W-1:0] pe_sum0, pe_sum1;
  logic signed [ACC_W-1:0] cp_run0 [TM];               // running sums of the output word(s)
  logic signed [ACC_W-1:0] cp_run1 [TM];
  wire [31:0] cp_aw0 = cp_awp + cp_o;
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      {cp_s1_v, cp_s2_v, cp_s3_v} <= '0;
    end else begin
      cp_s1_v <= cp_issue;
      cp_s2_v <= cp_s1_v;
      cp_s3_v <= cp_s2_v;
    end
    cp_s1_first <= cp_first;
    cp_s1_last <= cp_last;
    cp_s1_two <= cp_two;
    cp_s1_aw0 <= AC_AW'(cp_aw0);
    cp_s1_aw1 <= AC_AW'(cp_aw0 + cp_og);
    cp_s1_boff <= TM >= TN ? 32'd0 : 32'(cp_bo[LOG2_TN-1:0]);   // (o*Tm is a multiple of Tn when Tm >= Tn)
    {cp_s2_first, cp_s2_last, cp_s2_two, cp_s2_aw0, cp_s2_aw1} <= {cp_s1_first, cp_s1_last, cp_s1_two, cp_s1_aw0, cp_s1_aw1};
    {cp_s3_last, cp_s3_two, cp_s3_aw0, cp_s3_aw1} <= {cp_s2_last, cp_s2_two, cp_s2_aw0, cp_s2_aw1};
    cp_byp_q <= cp_byp;
  end
  always_comb begin
    for (int m = 0; m < TM; m++) begin
      logic [31:0] rel;
      rel = cp_s1_boff + 32'(m);
      cp_byp[16 * m +: 16] = rel < 32'(TN) ? ib_rd_a[cp_ibuf_bank][16 * LOG2_TN'(rel) +: 16]
                                           : ib_rd_b[cp_ibuf_bank][16 * LOG2_TN'(rel) +: 16];
    end
  end
  pe_array u_pe (
    .clk, .p16(prec16), .x0(ib_rd_a[cp_ibuf_bank]), .x1(cp_s1_two ? ib_rd_b[cp_ibuf_bank] : '0),
    .w(wb_rd[cp_wbuf_bank]), .sum0(pe_sum0), .sum1(pe_sum1));
  logic signed [ACC_W-1:0] cp_new0 [TM];               // S2: the word(s) so far
  logic signed [ACC_W-1:0] cp_new1 [TM];
  always_comb begin
    for (int m = 0; m < TM; m++) begin
      logic signed [ACC_W-1:0] s0, s1;
      s0 = cp_bypass ? ACC_W'(signed'(cp_byp_q[16 * m +: 16])) : signed'(pe_sum0[ACC_W * m +: ACC_W]);
      s1 = cp_bypass ? '0 : signed'(pe_sum1[ACC_W * m +: ACC_W]);
      cp_new0[m] = (cp_s2_first ? '0 : cp_run0[m]) + s0;
      cp_new1[m] = (cp_s2_first ? '0 : cp_run1[m]) + s1;
    end
  end
  always_ff @(posedge clk) begin
    if (cp_s2_v) begin
      for (int m = 0; m < TM; m++) begin
        cp_run0[m] <= cp_new0[m];
        cp_run1[m] <= cp_new1[m];
      end
    end
  end
  // S3: ACC = (acc_init ? 0 : ACC) + the tile's partial sums (ACC read at S2)
  wire cp_wr = cp_s3_v && cp_s3_last;
  logic [TM*ACC_W-1:0] cp_wd0, cp_wd1;
  always_comb begin
    for (int m = 0; m < TM; m++) begin
      cp_wd0[ACC_W * m +: ACC_W] = cp_acc_init ? cp_run0[m] : cp_run0[m] + signed'(acc_rd_a[cp_acc_bank][ACC_W * m +: ACC_W]);
      cp_wd1[ACC_W * m +: ACC_W] = cp_acc_init ? cp_run1[m] : cp_run1[m] + signed'(acc_rd_b[cp_acc_bank][ACC_W * m +: ACC_W]);
    end
  end

  // ======================================================================================= STORE module
  // POST: issue stage (one (y, x, o, dy, dx) step per cycle: ACC and PBUF addresses), then requantization and
  // max-pool on the RAM outputs, OBUF write on the window's last step (OBUF port A). STORE: burst addresses run
  // ahead through a descriptor FIFO; a read stage reads the OBUF window of one beat per cycle (port B) into an
  // output FIFO that drives the W channel, so the beats go out one per cycle.
  typedef enum logic [2:0] {S_IDLE, P_SETUP, P_RUN, P_DRAIN, S_SETUP, S_RUN, S_DONE} st_state_t;
  st_state_t st_state;
  logic [INSN_BITS-1:0] st_ins;
  wire [3:0] sq_op = sq_rdata[H_OPCODE_LSB +: H_OPCODE_W];
  wire st_go = st_state == S_IDLE && run && !stop && !sq_empty && !(sq_rdata[H_POP_PREV_LSB] && tok_c2s == 0);
  assign sq_rd = st_go;
  assign st_pop_c2s = st_go && sq_rdata[H_POP_PREV_LSB];
  assign st_push_s2c = st_state == S_DONE && st_ins[H_PUSH_PREV_LSB];
  // the RTL reads the Tm records of an output group from one PBUF row: pbuf_oc must be a multiple of Tm
  assign post_err = st_go && sq_op == OP_POST && sq_rdata[F_POST_PBUF_OC_LSB +: LOG2_TM] != 0;
  // POST fields
  wire        pp_acc_bank = st_ins[F_POST_ACC_BANK_LSB +: F_POST_ACC_BANK_W];
  wire [31:0] pp_oh = 32'(st_ins[F_POST_OH_LSB +: F_POST_OH_W]);
  wire [31:0] pp_ow = 32'(st_ins[F_POST_OW_LSB +: F_POST_OW_W]);
  wire [31:0] pp_og = 32'(st_ins[F_POST_OG_LSB +: F_POST_OG_W]);
  wire [31:0] pp_pbuf_oc = 32'(st_ins[F_POST_PBUF_OC_LSB +: F_POST_PBUF_OC_W]);
  wire        pp_act = st_ins[F_POST_ACT_LSB +: F_POST_ACT_W] != 0;
  wire [31:0] pp_pk_f = 32'(st_ins[F_POST_POOL_K_LSB +: F_POST_POOL_K_W]);
  wire [31:0] pp_ps_f = 32'(st_ins[F_POST_POOL_S_LSB +: F_POST_POOL_S_W]);
  wire [31:0] pp_up_f = 32'(st_ins[F_POST_UP_LSB +: F_POST_UP_W]);
  wire [15:0] pp_zp = 16'(st_ins[F_POST_ZP_OUT_LSB +: F_POST_ZP_OUT_W]);
  wire [31:0] pp_pk = pp_pk_f == 0 ? 32'd1 : pp_pk_f;
  wire [31:0] pp_ps = pp_ps_f == 0 ? 32'd1 : pp_ps_f;
  wire [31:0] pp_up = pp_up_f == 0 ? 32'd1 : pp_up_f;
  logic [31:0] pp_rows, pp_cols;                        // (out_rows / up) * up, (out_cols / up) * up
  logic [31:0] pp_rowwords, pp_lastrow, pp_lastcol;     // ACC words per tile row (ow*og), of row oh-1, of col ow-1
  logic [31:0] pp_psrow, pp_pscol;                      // ACC words per ps rows, per ps columns
  logic [31:0] pp_y, pp_x, pp_o, pp_dy, pp_dx;
  logic [31:0] pp_yu, pp_xu, pp_yb, pp_xb;              // y mod up, x mod up, (y/up)*ps, (x/up)*ps
  logic [31:0] pp_ay, pp_ax, pp_ady, pp_adx;            // ACC words of row yb, column xb, dy rows, dx columns
  logic [31:0] pp_oidx;                                 // OBUF element of (y, x, o): ((y*cols + x)*og + o)*Tm
  logic signed [15:0] pp_max [TM];
  logic signed [15:0] pp_res [TM];
  wire pp_wfirst = pp_dy == 0 && pp_dx == 0;
  wire pp_wlast = pp_dy + 32'd1 >= pp_pk && pp_dx + 32'd1 >= pp_pk;
  wire pp_issue = st_state == P_RUN && pp_rows != 0 && pp_cols != 0 && pp_og != 0;
  wire [31:0] pp_yy = pp_yb + pp_dy;
  wire [31:0] pp_xx = pp_xb + pp_dx;
  logic [AC_AW-1:0] pp_aw;
  wire [PB_AW-1:0] pp_prow = PB_AW'((pp_pbuf_oc >> LOG2_TM) + pp_o);
  logic pp1_v, pp1_first, pp1_last;
  logic [31:0] pp1_oidx;
  logic [PREC_W*TM-1:0] pb_rd;

  /* verilator lint_off UNUSEDSIGNAL */  // the reserved bytes of the parameter record
  // q = clamp(((v*M + 2^(s-1)) >> s) + zp), v = acc + bias on ACC_W + 1 bits (the quantizer keeps the bias within
  // the accumulator range), M and s of the negative side when act and v < 0
  function automatic logic signed [15:0] requant(input logic signed [ACC_W-1:0] acc,
                                                 input logic [PREC_W-1:0] rec, input logic act,
                                                 input logic [15:0] zp, input logic p16);
    logic signed [ACC_W:0] v;
    logic signed [15:0] mlt;
    logic signed [ACC_W+16:0] pm;
    logic signed [26:0] vl;
    logic signed [ACC_W-26:0] vh;
    logic signed [42:0] pl;
    logic signed [ACC_W-10:0] ph;
    logic signed [63:0] t, q, qmin, qmax;
    logic [7:0] sh;
    logic neg;
    v = (ACC_W + 1)'(acc) + (ACC_W + 1)'(signed'(rec[PR_BIAS_LSB +: 64]));
    neg = act && v < 0;
    mlt = neg ? signed'(rec[PR_MULT_NEG_LSB +: 16]) : signed'(rec[PR_MULT_POS_LSB +: 16]);
    sh = neg ? rec[PR_SHIFT_NEG_LSB +: 8] : rec[PR_SHIFT_POS_LSB +: 8];
    // v * M as two DSP48E2-sized multiplies (UG579: 27 x 18 signed): the low 26 bits of v (zero-extended to 27)
    // and the high ACC_W - 25 bits (signed), summed in the fabric
    vl = {1'b0, v[25:0]};
    vh = v[ACC_W:26];
    pl = vl * mlt;
    ph = vh * mlt;
    pm = ((ACC_W + 17)'(ph) <<< 26) + (ACC_W + 17)'(pl);
    // (the shift is at most isa.MAX_SHIFT = 63: 6 bits)
    t = 64'(pm) + (64'sd1 <<< (sh[5:0] - 6'd1));
    q = (t >>> sh[5:0]) + 64'(signed'(zp));
    qmin = p16 ? -64'sd32768 : -64'sd128;
    qmax = p16 ? 64'sd32767 : 64'sd127;
    if (q < qmin) q = qmin;
    if (q > qmax) q = qmax;
    requant = q[15:0];
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  // S0: ACC word (yy*ow + xx)*og + o of the window element (y, x, o, dy, dx), yy = (y/up)*ps + dy and
  // xx = (x/up)*ps + dx clamped to the tile (kept incrementally: no multiply or divide per cycle)
  always_comb begin
    logic [31:0] rp, cp;
    rp = pp_yy > pp_oh - 32'd1 ? pp_lastrow : pp_ay + pp_ady;
    cp = pp_xx > pp_ow - 32'd1 ? pp_lastcol : pp_ax + pp_adx;
    pp_aw = AC_AW'(rp + cp + pp_o);
  end
  // S1: requantize the Tm accumulators, max over the pooling window
  always_comb begin
    for (int m = 0; m < TM; m++) begin
      logic signed [15:0] q;
      q = requant(signed'(acc_rd_a[pp_acc_bank][ACC_W * m +: ACC_W]), pb_rd[PREC_W * m +: PREC_W], pp_act, pp_zp,
                  prec16);
      pp_res[m] = (pp1_first || q > pp_max[m]) ? q : pp_max[m];
    end
  end
  always_ff @(posedge clk) begin
    if (!rst_n || clr) pp1_v <= 1'b0;
    else pp1_v <= pp_issue;
    pp1_first <= pp_wfirst;
    pp1_last <= pp_wlast;
    pp1_oidx <= pp_oidx;
    if (pp1_v) begin
      for (int m = 0; m < TM; m++) pp_max[m] <= pp_res[m];
    end
  end
  // POST range checks: stage 1 in P_SETUP; ACC / PBUF compared in the first P_RUN cycle, the OBUF elements
  // (rows x cols x og words) registered then and compared the cycle after; the POST cannot finish earlier than
  // that (P_RUN, P_DRAIN, S_DONE), so the next instruction of the STORE module never starts after an error.
  logic pp_chk1, pp_chk2, pp_k_pb, pp_k_zero;
  logic [39:0] pp_k_cog, pp_k_ob;
  logic [15:0] pp_k_r;                                  // output rows (at most 4095)
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      pp_chk1 <= 1'b0;
      pp_chk2 <= 1'b0;
    end else begin
      pp_chk1 <= st_state == P_SETUP;
      pp_chk2 <= pp_chk1;
    end
    if (pp_chk1) pp_k_ob <= mul40(pp_k_cog, pp_k_r);
  end
  // (ACC words oh*ow*og = (oh-1)*ow*og + ow*og, both set up in P_SETUP)
  assign pp_oob = !pp_k_zero && ((pp_chk1 && (33'(pp_lastrow) + 33'(pp_rowwords) > 33'(ACC_WORDS) || pp_k_pb))
                                 || (pp_chk2 && pp_k_ob > 40'(prec16 ? OBUF_WORDS16 : OBUF_WORDS8)));

  // OBUF lane writes: element pp1_oidx + m goes to lane (pp1_oidx + m) % OL
  wire ob_pwr = pp1_v && pp1_last;
  logic [OL-1:0] obw_we;
  logic [16*OL-1:0] obw_data;
  logic [OB_AW*OL-1:0] obw_row;
  always_comb begin
    for (int l = 0; l < OL; l++) begin
      logic [LOG2_OL-1:0] rel;
      logic [31:0] row;
      // (pp1_oidx is a multiple of Tm: with OL = Tm, lane l always takes element m = l)
      rel = OL == TM ? LOG2_OL'(l) : LOG2_OL'(l) - pp1_oidx[LOG2_OL-1:0];
      row = (pp1_oidx >> LOG2_OL) + (OL == TM ? 32'd0 : 32'(LOG2_OL'(l) < pp1_oidx[LOG2_OL-1:0]));
      obw_we[l] = ob_pwr && 32'(rel) < 32'(TM) && row < 32'(OB_D);
      obw_data[16 * l +: 16] = pp_res[32'(rel) < 32'(TM) ? 32'(rel) : 32'd0];
      obw_row[OB_AW * l +: OB_AW] = OB_AW'(row);
    end
  end

  // STORE fields. Address side: the transfer is cut into segments (the whole transfer when rows and pixels are
  // contiguous, else one per row when the pixels of a row are, else one per pixel run; pixels are merged only if
  // they are contiguous in DDR and in OBUF, elems = src_pitch*Tm), each segment into bursts (4 KB / 256 beats),
  // one burst address per cycle into a descriptor FIFO, up to ST_OUTST bursts ahead of the data. Data side: a read
  // stage takes the beats of the head descriptor one per cycle and reads their OBUF window (port B); the cycle
  // after, the beat's bytes are selected and pushed into an output FIFO that drives the W channel, so the beats go
  // out back to back across bursts, segments and pixels. Done when every write response is in.
  localparam int ST_OUTST = 16;
  localparam int OQ_DEPTH = 4;
  wire [1:0]  sd_base_reg = sq_rdata[F_STORE_BASE_REG_LSB +: F_STORE_BASE_REG_W];   // (read at dispatch)
  wire [31:0] sd_ddr_offset = 32'(sq_rdata[F_STORE_DDR_OFFSET_LSB +: F_STORE_DDR_OFFSET_W]);
  wire [31:0] sd_rows = 32'(st_ins[F_STORE_ROWS_LSB +: F_STORE_ROWS_W]);
  wire [31:0] sd_cols = 32'(st_ins[F_STORE_COLS_LSB +: F_STORE_COLS_W]);
  wire [31:0] sd_elems = 32'(st_ins[F_STORE_ELEMS_LSB +: F_STORE_ELEMS_W]);
  wire [63:0] sd_row_stride = 64'(st_ins[F_STORE_ROW_STRIDE_LSB +: F_STORE_ROW_STRIDE_W]);
  wire [63:0] sd_pix_stride = 64'(st_ins[F_STORE_PIX_STRIDE_LSB +: F_STORE_PIX_STRIDE_W]);
  wire [31:0] sd_src_pitch = 32'(st_ins[F_STORE_SRC_PITCH_LSB +: F_STORE_SRC_PITCH_W]);
  wire [31:0] sd_run = prec16 ? sd_elems << 1 : sd_elems;             // bytes of a pixel run
  logic sd_row_contig, sd_all_contig;                                 // (set up per instruction)
  logic [63:0] sd_seg_bytes;                                          // bytes of one segment
  logic [31:0] sd_seg_elstep;                                         // OBUF element index step per segment
  logic [31:0] sd_r, sd_c;                                            // next segment
  logic [63:0] sd_rowaddr, sd_pixaddr;                                // DDR address of row sd_r / run (sd_r, sd_c)
  logic [31:0] sd_segel;                                              // OBUF element of the next segment's start
  logic sd_seg_v;                                                     // a segment is being issued:
  logic [63:0] sd_cur, sd_left;                                       //   its next burst address, beats left
  logic [PW-1:0] sd_lo, sd_hi;                                        //   first byte of the next burst, end of the
                                                                      //   segment's last beat (valid bytes)
  logic [31:0] sd_u;                                                  //   OBUF position of the next burst
  logic [15:0] sd_outst;      // write bursts awaiting their response
  // OBUF position of a DDR byte: (element index << prec16) + byte within the element (the byte index of OBUF
  // read as elements of elem_bytes bytes); a burst's first beat may start before its segment (negative offset).
  // Next burst of the segment: up to the segment end, within 4 KB and 256 beats.
  logic [8:0] sd_blen;
  logic sd_blast;                                                     // it ends the segment
  always_comb begin
    logic [63:0] cap;
    cap = (64'd4096 - {52'b0, sd_cur[11:0]}) >> LOG2_BYTES;
    if (cap > 64'd256) cap = 64'd256;
    sd_blast = sd_left <= cap;
    sd_blen = sd_blast ? 9'(sd_left) : 9'(cap);
  end
  // AW descriptors: {OBUF position of the burst's first beat, beats, first valid byte of the first beat, end of
  // the last beat's valid bytes}
  localparam int SDQ_W = 32 + 9 + 2 * PW;
  logic sdq_empty, sdq_full;
  logic [SDQ_W-1:0] sdq_rdata;
  logic [$clog2(ST_OUTST):0] sdq_count;
  wire aw_fire = m_axi_awvalid && m_axi_awready;
  logic sr_go, sr_last;                                               // the read stage takes a beat, its burst's last
  sync_fifo #(.W(SDQ_W), .DEPTH(ST_OUTST)) u_sdq (
    .clk, .rst_n, .clr, .wr(aw_fire), .wdata({sd_u, sd_blen, sd_lo, sd_blast ? sd_hi : PW'(AXI_BYTES)}),
    .rd(sr_go && sr_last), .rdata(sdq_rdata), .empty(sdq_empty), .full(sdq_full), .count(sdq_count));
  wire [31:0]   sdh_u = sdq_rdata[SDQ_W-1 -: 32];
  wire [8:0]    sdh_blen = sdq_rdata[2 * PW +: 9];
  wire [PW-1:0] sdh_lo = sdq_rdata[PW +: PW];
  wire [PW-1:0] sdh_hi = sdq_rdata[0 +: PW];
  assign m_axi_awid = '0;
  assign m_axi_awsize = 3'(LOG2_BYTES);
  assign m_axi_awburst = 2'b01;
  assign m_axi_awlock = 1'b0;
  assign m_axi_awcache = 4'b0011;
  assign m_axi_awprot = 3'b000;
  assign m_axi_awvalid = st_state == S_RUN && sd_seg_v && !sdq_full;
  assign m_axi_awaddr = AXI_AW'(sd_cur);
  assign m_axi_awlen = 8'(sd_blen - 9'd1);
  assign m_axi_bready = 1'b1;
  // read stage: beat sr_beat of the head burst; its OBUF window [Ew, Ew + OL) (Ew: element of its first byte),
  // lane l holding the element congruent to l. A beat is taken only while the output FIFO has room for it and the
  // one still in the read stage.
  logic oq_empty, oq_full;
  logic [$clog2(OQ_DEPTH):0] oq_count;
  logic [8:0] sr_beat;
  logic sr1_v, sr1_last;                                              // the beat whose window the RAMs output
  logic [LOG2_OL:0] sr1_u;
  logic [PW-1:0] sr1_lo, sr1_hi;
  wire [31:0] sr_u = sdh_u + (32'(sr_beat) << LOG2_BYTES);
  assign sr_last = sr_beat + 9'd1 >= sdh_blen;
  assign sr_go = !sdq_empty && 32'(oq_count) + 32'(sr1_v) < 32'(OQ_DEPTH);
  logic [OB_AW*OL-1:0] obr_row;
  always_comb begin
    logic [31:0] ew, r0;
    ew = prec16 ? 32'(signed'(sr_u) >>> 1) : sr_u;
    r0 = ew >> LOG2_OL;
    for (int l = 0; l < OL; l++)
      obr_row[OB_AW * l +: OB_AW] = OB_AW'(r0 + 32'(LOG2_OL'(l) < ew[LOG2_OL-1:0]));
  end
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      sr_beat <= '0;
      sr1_v <= 1'b0;
    end else begin
      sr1_v <= sr_go;
      if (sr_go) sr_beat <= sr_last ? 9'd0 : sr_beat + 9'd1;
    end
    sr1_u <= (LOG2_OL + 1)'(sr_u);
    sr1_lo <= sr_beat == 0 ? sdh_lo : '0;
    sr1_hi <= sr_last ? sdh_hi : PW'(AXI_BYTES);
    sr1_last <= sr_last;
  end
  // beat bytes: [lo, hi) are the transfer's; byte j is at OBUF position u + j
  logic [16*OL-1:0] ob_rd;
  logic [AXI_DW-1:0] sr1_data;
  logic [AXI_BYTES-1:0] sr1_strb;
  always_comb begin
    for (int j = 0; j < AXI_BYTES; j++) begin
      logic [LOG2_OL:0] v;
      logic [LOG2_OL-1:0] e;
      logic [15:0] el;
      v = sr1_u + (LOG2_OL + 1)'(j);
      e = prec16 ? v[LOG2_OL:1] : v[LOG2_OL-1:0];
      el = ob_rd[16 * e +: 16];
      sr1_strb[j] = PW'(j) >= sr1_lo && PW'(j) < sr1_hi;
      sr1_data[8 * j +: 8] = sr1_strb[j] ? ((prec16 && v[0]) ? el[15:8] : el[7:0]) : 8'd0;
    end
  end
  // output FIFO: the W channel
  sync_fifo #(.W(1 + AXI_BYTES + AXI_DW), .DEPTH(OQ_DEPTH)) u_soq (
    .clk, .rst_n, .clr, .wr(sr1_v), .wdata({sr1_last, sr1_strb, sr1_data}), .rd(m_axi_wready),
    .rdata({m_axi_wlast, m_axi_wstrb, m_axi_wdata}), .empty(oq_empty), .full(oq_full), .count(oq_count));
  assign m_axi_wvalid = !oq_empty;
  // next segment: the one at (sd_r, sd_c), taken when none is being issued or its last burst address goes out
  wire sd_take = st_state == S_RUN && !sd_oob && (!sd_seg_v || (aw_fire && sd_blast)) && sd_r < sd_rows;
  // range checks: DDR bytes [ddr_offset, end) of the base register's buffer and the OBUF elements
  // (rows*cols - 1)*src_pitch*Tm + elems, computed in S_SETUP, compared in the first S_RUN cycle, which issues no
  // address yet (sd_seg_v is still 0): a refused STORE writes nothing
  logic sd_chk;
  logic [63:0] sd_ddr_end;
  logic [39:0] sd_ob_end;
  wire [1:0] sd_ins_base = st_ins[F_STORE_BASE_REG_LSB +: F_STORE_BASE_REG_W];
  assign sd_oob = sd_chk && (sd_ddr_end > 64'(ddr_size[sd_ins_base])
                             || sd_ob_end > 40'(prec16 ? OBUF_WORDS16 : OBUF_WORDS8) << LOG2_TM);

  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      st_state <= S_IDLE;
      st_ins <= '0;
      end_done <= 1'b0;
      {pp_y, pp_x, pp_o, pp_dy, pp_dx, pp_oidx} <= '0;
      {pp_yu, pp_xu, pp_yb, pp_xb, pp_ay, pp_ax, pp_ady, pp_adx} <= '0;
      {pp_rows, pp_cols, pp_rowwords, pp_lastrow, pp_lastcol, pp_psrow, pp_pscol} <= '0;
      {sd_row_contig, sd_all_contig, sd_seg_v} <= '0;
      {sd_seg_bytes, sd_seg_elstep} <= '0;
      {sd_r, sd_c, sd_segel, sd_u} <= '0;
      {sd_rowaddr, sd_pixaddr, sd_cur, sd_left} <= '0;
      {sd_lo, sd_hi} <= '0;
      sd_outst <= '0;
      sd_chk <= 1'b0;
      {sd_ddr_end, sd_ob_end} <= '0;
    end else begin
      sd_chk <= st_state == S_SETUP;
      sd_outst <= sd_outst + 16'(aw_fire) - 16'(m_axi_bvalid);
      case (st_state)
        S_IDLE:
          if (st_go) begin
            st_ins <= sq_rdata;
            {pp_y, pp_x, pp_o, pp_dy, pp_dx, pp_oidx} <= '0;
            {pp_yu, pp_xu, pp_yb, pp_xb, pp_ay, pp_ax, pp_ady, pp_adx} <= '0;
            sd_r <= '0;
            sd_c <= '0;
            sd_segel <= '0;
            sd_seg_v <= 1'b0;
            sd_rowaddr <= base_addr[sd_base_reg] + 64'(sd_ddr_offset);
            sd_pixaddr <= base_addr[sd_base_reg] + 64'(sd_ddr_offset);
            st_state <= S_DONE;
            if (sq_op == OP_END) end_done <= 1'b1;
            if (sq_op == OP_POST) st_state <= P_SETUP;
            if (sq_op == OP_STORE && sq_rdata[F_STORE_ROWS_LSB +: F_STORE_ROWS_W] != 0
                && sq_rdata[F_STORE_COLS_LSB +: F_STORE_COLS_W] != 0
                && sq_rdata[F_STORE_ELEMS_LSB +: F_STORE_ELEMS_W] != 0) st_state <= S_SETUP;
          end
        P_SETUP: begin                                  // per-instruction constants (LUT multiplies)
          logic [31:0] rw, rc, cc;
          logic pl;
          logic [F_POST_OUT_ROWS_W-1:0] orows, rq;
          logic [F_POST_OUT_COLS_W-1:0] ocols, cq;
          logic [F_POST_UP_W-1:0] up;
          // (divisions on the fields' own widths: a 12-bit by 3-bit divider each)
          orows = st_ins[F_POST_OUT_ROWS_LSB +: F_POST_OUT_ROWS_W];
          ocols = st_ins[F_POST_OUT_COLS_LSB +: F_POST_OUT_COLS_W];
          up = F_POST_UP_W'(pp_up);
          rq = orows / F_POST_OUT_ROWS_W'(up);
          cq = ocols / F_POST_OUT_COLS_W'(up);
          rw = 32'(mul_lut(64'(pp_ow), 16'(pp_og)));
          // range checks, stage 1: ACC words oh*ow*og, PBUF entries, the output rows / columns x og (no pooling:
          // the tile's top-left rows and columns, at most oh x ow, as the golden simulator)
          pl = pp_pk > 32'd1 || pp_ps > 32'd1;
          rc = pl || 32'(rq) < pp_oh ? 32'(rq) : pp_oh;
          cc = pl || 32'(cq) < pp_ow ? 32'(cq) : pp_ow;
          pp_k_pb <= pp_pbuf_oc + (pp_og << LOG2_TM) > 32'(PBUF_ENTRIES);
          pp_k_zero <= pp_oh == 0 || pp_ow == 0 || pp_og == 0;
          pp_k_r <= 16'(mul40(40'(rc), 16'(up)));
          pp_k_cog <= mul40(mul40(40'(cc), 16'(up)), 16'(pp_og));
          pp_rows <= 32'(mul_lut(64'(rq), 16'(up)));
          pp_cols <= 32'(mul_lut(64'(cq), 16'(up)));
          pp_rowwords <= rw;
          pp_lastrow <= 32'(mul_lut(64'(rw), 16'(pp_oh - 32'd1)));
          pp_lastcol <= 32'(mul_lut(64'(pp_og), 16'(pp_ow - 32'd1)));
          pp_psrow <= 32'(mul_lut(64'(rw), 16'(pp_ps)));
          pp_pscol <= 32'(mul_lut(64'(pp_og), 16'(pp_ps)));
          st_state <= P_RUN;
        end
        P_RUN:
          if (!pp_issue) begin
            st_state <= S_DONE;
          end else if (!pp_wlast) begin
            if (pp_dx + 32'd1 < pp_pk) begin
              pp_dx <= pp_dx + 32'd1;
              pp_adx <= pp_adx + pp_og;
            end else begin
              pp_dx <= '0;
              pp_adx <= '0;
              pp_dy <= pp_dy + 32'd1;
              pp_ady <= pp_ady + pp_rowwords;
            end
          end else begin
            pp_dx <= '0;
            pp_dy <= '0;
            pp_adx <= '0;
            pp_ady <= '0;
            pp_oidx <= pp_oidx + 32'(TM);
            if (pp_o + 32'd1 < pp_og) pp_o <= pp_o + 32'd1;
            else begin
              pp_o <= '0;
              if (pp_x + 32'd1 < pp_cols) begin
                pp_x <= pp_x + 32'd1;
                if (pp_xu + 32'd1 < pp_up) pp_xu <= pp_xu + 32'd1;
                else begin
                  pp_xu <= '0;
                  pp_xb <= pp_xb + pp_ps;
                  pp_ax <= pp_ax + pp_pscol;
                end
              end else begin
                pp_x <= '0;
                pp_xu <= '0;
                pp_xb <= '0;
                pp_ax <= '0;
                pp_y <= pp_y + 32'd1;
                if (pp_yu + 32'd1 < pp_up) pp_yu <= pp_yu + 32'd1;
                else begin
                  pp_yu <= '0;
                  pp_yb <= pp_yb + pp_ps;
                  pp_ay <= pp_ay + pp_psrow;
                end
                if (pp_y + 32'd1 >= pp_rows) st_state <= P_DRAIN;
              end
            end
          end
        P_DRAIN: st_state <= S_DONE;                  // the last step's OBUF write
        S_SETUP: begin                                  // per-instruction segment constants (LUT multiplies)
          logic rc, ac, oc;
          logic [63:0] rowbytes;
          logic [31:0] pix;
          pix = sd_src_pitch << LOG2_TM;                // OBUF elements per pixel
          oc = sd_elems == pix;                         // the pixels' elements are contiguous in OBUF
          rowbytes = mul_lut(64'(sd_run), 16'(sd_cols));
          rc = sd_cols == 1 || (oc && sd_pix_stride == 64'(sd_run));
          ac = rc && (sd_rows == 1 || (oc && sd_row_stride == rowbytes));
          sd_row_contig <= rc;
          sd_all_contig <= ac;
          sd_seg_bytes <= ac ? mul_lut(rowbytes, 16'(sd_rows)) : rc ? rowbytes : 64'(sd_run);
          sd_seg_elstep <= rc ? 32'(mul_lut(64'(pix), 16'(sd_cols))) : pix;
          sd_ddr_end <= 64'(st_ins[F_STORE_DDR_OFFSET_LSB +: F_STORE_DDR_OFFSET_W])
                        + 64'(mul48(48'(sd_row_stride), 16'(sd_rows - 32'd1)))
                        + 64'(mul48(48'(sd_pix_stride), 16'(sd_cols - 32'd1))) + 64'(sd_run);
          // (pix*cols: the segment step's multiply)
          sd_ob_end <= mul40(40'(mul_lut(64'(pix), 16'(sd_cols))), 16'(sd_rows)) - 40'(pix) + 40'(sd_elems);
          st_state <= S_RUN;
        end
        S_RUN: begin
          if (aw_fire) begin
            sd_cur <= sd_cur + (64'(sd_blen) << LOG2_BYTES);
            sd_left <= sd_left - 64'(sd_blen);
            sd_u <= sd_u + (32'(sd_blen) << LOG2_BYTES);
            sd_lo <= '0;
            if (sd_blast) sd_seg_v <= 1'b0;
          end
          if (sd_oob) begin
            st_state <= S_DONE;                         // refused: nothing written
          end else if (sd_take) begin
            logic [LOG2_BYTES-1:0] a0, a1;
            a0 = sd_pixaddr[LOG2_BYTES-1:0];
            a1 = a0 + LOG2_BYTES'(sd_seg_bytes);          // (segment end within its last beat; 0: full beat)
            sd_seg_v <= 1'b1;
            sd_cur <= sd_pixaddr & ~64'(AXI_BYTES - 1);
            sd_left <= (64'(a0) + sd_seg_bytes + 64'(AXI_BYTES - 1)) >> LOG2_BYTES;
            sd_lo <= PW'(a0);
            sd_hi <= a1 == 0 ? PW'(AXI_BYTES) : PW'(a1);
            sd_u <= (sd_segel << prec16) - 32'(a0);
            sd_segel <= sd_segel + sd_seg_elstep;
            if (sd_all_contig) begin
              sd_r <= sd_rows;
            end else if (sd_row_contig || sd_c + 32'd1 >= sd_cols) begin
              sd_c <= '0;
              sd_r <= sd_r + 32'd1;
              sd_rowaddr <= sd_rowaddr + sd_row_stride;
              sd_pixaddr <= sd_rowaddr + sd_row_stride;
            end else begin
              sd_c <= sd_c + 32'd1;
              sd_pixaddr <= sd_pixaddr + sd_pix_stride;
            end
          end else if (!sd_seg_v && sdq_empty && !sr1_v && oq_empty && sd_outst == 0 && !m_axi_bvalid) begin
            st_state <= S_DONE;                         // every burst written and acknowledged
          end
        end
        S_DONE: st_state <= S_IDLE;
        default: st_state <= S_IDLE;
      endcase
    end
  end

  // ======================================================================================= buffer memories
  for (genvar b = 0; b < 2; b++) begin : g_bank
    wire ld_here = ld_bank == 1'(b);
    for (genvar n = 0; n < TN; n++) begin : g_ibuf
      wire [1:0] we = ld_here ? ibw_we[0][2 * n +: 2] : 2'b00;
      wire [1:0] we_b = ld_here ? ibw_we[1][2 * n +: 2] : 2'b00;
      ram_tdp #(.W(16), .D(IB_D), .NB(2), .STYLE(IBUF_STYLE)) u_ram (
        .clk,
        .a_en(1'b1), .a_we(we), .a_addr(we != 0 ? ibw_row[0][IB_AW * n +: IB_AW] : cp_ib_a),
        .a_wdata(ibw_data[0][16 * n +: 16]), .a_rdata(ib_rd_a[b][16 * n +: 16]),
        .b_en(1'b1), .b_we(we_b), .b_addr(we_b != 0 ? ibw_row[1][IB_AW * n +: IB_AW] : cp_ib_b),
        .b_wdata(ibw_data[1][16 * n +: 16]), .b_rdata(ib_rd_b[b][16 * n +: 16]));
    end
    for (genvar m = 0; m < TM; m++) begin : g_wbuf
      wire [2*TN-1:0] we = ld_here ? wbw_we[2 * TN * m +: 2 * TN] : '0;
      /* verilator lint_off PINCONNECTEMPTY */
      ram_tdp #(.W(16 * TN), .D(WB_D), .NB(2 * TN), .STYLE(WBUF_STYLE)) u_ram (
        .clk,
        .a_en(1'b1), .a_we(we), .a_addr(wbw_row), .a_wdata(wbw_data[16 * TN * m +: 16 * TN]), .a_rdata(),
        .b_en(1'b1), .b_we('0), .b_addr(cp_wb_a), .b_wdata('0), .b_rdata(wb_rd[b][16 * TN * m +: 16 * TN]));
      /* verilator lint_on PINCONNECTEMPTY */
    end
    wire cw = cp_wr && cp_acc_bank == 1'(b);
    wire post_here = st_state == P_RUN && pp_acc_bank == 1'(b);
    for (genvar m = 0; m < TM; m++) begin : g_acc
      ram_tdp #(.W(ACC_W), .D(ACC_WORDS), .NB(1), .STYLE(ACC_STYLE)) u_ram (
        .clk,
        .a_en(1'b1), .a_we(cw && cp_s3_two), .a_addr(cw && cp_s3_two ? cp_s3_aw0 : post_here ? pp_aw : cp_s2_aw0),
        .a_wdata(cp_wd0[ACC_W * m +: ACC_W]), .a_rdata(acc_rd_a[b][ACC_W * m +: ACC_W]),
        .b_en(1'b1), .b_we(cw), .b_addr(cw ? (cp_s3_two ? cp_s3_aw1 : cp_s3_aw0) : cp_s2_aw1),
        .b_wdata(cp_s3_two ? cp_wd1[ACC_W * m +: ACC_W] : cp_wd0[ACC_W * m +: ACC_W]),
        .b_rdata(acc_rd_b[b][ACC_W * m +: ACC_W]));
    end
  end
  for (genvar l = 0; l < OL; l++) begin : g_obuf
    /* verilator lint_off PINCONNECTEMPTY */
    ram_tdp #(.W(16), .D(OB_D), .NB(1), .STYLE(OBUF_STYLE)) u_ram (
      .clk,
      .a_en(1'b1), .a_we(obw_we[l]), .a_addr(obw_row[OB_AW * l +: OB_AW]), .a_wdata(obw_data[16 * l +: 16]),
      .a_rdata(),
      .b_en(1'b1), .b_we(1'b0), .b_addr(obr_row[OB_AW * l +: OB_AW]), .b_wdata('0), .b_rdata(ob_rd[16 * l +: 16]));
    /* verilator lint_on PINCONNECTEMPTY */
  end
  for (genvar l = 0; l < TM; l++) begin : g_pbuf
    /* verilator lint_off PINCONNECTEMPTY */
    ram_tdp #(.W(PREC_W), .D(PB_D), .NB(PARAM_BYTES), .STYLE(PBUF_STYLE)) u_ram (
      .clk,
      .a_en(1'b1), .a_we(pbw_we[PARAM_BYTES * l +: PARAM_BYTES]), .a_addr(pbw_row[PB_AW * l +: PB_AW]),
      .a_wdata(pbw_data[PREC_W * l +: PREC_W]), .a_rdata(),
      .b_en(1'b1), .b_we('0), .b_addr(pp_prow), .b_wdata('0), .b_rdata(pb_rd[PREC_W * l +: PREC_W]));
    /* verilator lint_on PINCONNECTEMPTY */
  end

  // ======================================================================================= completion
  wire all_idle = ld_state == LD_IDLE && cp_state == C_IDLE && st_state == S_IDLE && fe_state == FE_IDLE
                  && rq_empty;
  wire queues_empty = lq_empty && cq_empty && sq_empty;
  wire fe_exhausted = !fe_more && ifq_empty && !disp_end;
  assign finish = run && !start_pulse && all_idle
                  && (stop || (end_done && queues_empty) || (fe_exhausted && queues_empty));
  // TOKENS_LEFT: the program ended (END executed, every module idle, the queues empty) with tokens in a FIFO
  assign tokens_left = finish && !stop && end_done && queues_empty && tok_any;
  // watchdog: cycles of a run without progress (no module executing, no instruction fetched or dispatched, no read
  // in flight); without progress no token can arrive, so WATCHDOG_CYCLES of them are a deadlock
  localparam int WDW = $clog2(WATCHDOG_CYCLES) + 1;
  logic [WDW-1:0] wd_cnt;
  wire wd_progress = ld_state != LD_IDLE || cp_state != C_IDLE || st_state != S_IDLE || fe_state != FE_IDLE
                     || ifq_wr || ifq_rd || !rq_empty;
  always_ff @(posedge clk) begin
    if (!rst_n || clr || !run || stop || wd_progress) wd_cnt <= '0;
    else wd_cnt <= wd_cnt + WDW'(1);
  end
  assign wd_fire = run && !stop && wd_cnt == WDW'(WATCHDOG_CYCLES - 1);

  // ---- debug counters (not in the register map; the cocotb bench samples them for the per-layer cycle report)
  logic [31:0] dbg_st_retired;   // instructions the STORE module finished (POST, STORE, END)
  logic [31:0] dbg_ld_busy;      // cycles the LOAD module was executing an instruction
  logic [31:0] dbg_cp_busy;      // cycles the PE array was computing
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      dbg_st_retired <= '0;
      dbg_ld_busy <= '0;
      dbg_cp_busy <= '0;
    end else begin
      dbg_st_retired <= dbg_st_retired + 32'(st_state == S_DONE);
      dbg_ld_busy <= dbg_ld_busy + 32'(ld_state != LD_IDLE);
      dbg_cp_busy <= dbg_cp_busy + 32'(cp_state == C_RUN);
    end
  end

  // unused inputs (IDs, responses, write strobes of the control port)
  wire unused = &{1'b0, s_axil_wstrb, m_axi_bid, m_axi_bresp, m_axi_rid, m_axi_rresp, lq_count, cq_count,
                  sq_count, cp_ins[H_PUSH_NEXT_LSB], rq_full, rq_count, ldq_empty, ldq_full, ldq_count, sdq_count,
                  oq_full, dbg_st_retired, dbg_ld_busy, dbg_cp_busy, 1'b0};
endmodule
`default_nettype wire
