// YOLO accelerator: AXI-Lite control (Vitis HLS ap_ctrl_hs register map), AXI4 master to DDR, instruction
// fetch (ROM or DDR) and dispatch, and the LOAD / COMPUTE / STORE modules running concurrently, synchronised by
// the four dependency-token FIFOs of the ISA (generator/isa.py). Every constant comes from accel_pkg, which
// generator/rtl.py renders from the ISA tables and the board file.
//
// Microarchitecture:
// * LOAD: the transfer is cut into DDR segments (whole transfer / contiguous row / row span of overlapping pixel
//   runs / single run), one burst address per cycle (split at 4 KB and 256 beats), LD_OUTST bursts in flight;
//   every byte of a beat is written straight into its IBUF/WBUF element(s) (int8: low byte, int16: both bytes)
//   or PBUF record byte.
// * COMPUTE: one (output pixel group, output-channel word) at a time, one (i, ky, kx) step per cycle on the
//   Tn x Tm PE array. int8: each PE is one DSP48E2-style 27x18 multiply of two packed activations (adjacent
//   output pixels) by one weight, so two output pixels advance per cycle; int16: one pixel per cycle.
// * STORE module: POST (bias, requantization, activation, max-pool, nearest upsample; Tm lanes per cycle) and
//   STORE (segments as LOAD without spans; write addresses run ahead of the back-to-back data beats through a
//   descriptor FIFO, byte strobes from OBUF elements; done when every write response is in).
// The latency model of generator/hwmodel.py describes this timing; invoke sim compares the two per layer.
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
        status_r <= status_r | err_bits;
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
  logic stop;                 // an error stopped the run: no new instruction starts
  logic prec16;               // CONFIG.precision: 0 int8, 1 int16
  logic end_done;             // the STORE module executed END
  wire clr = start_pulse;
  always_ff @(posedge clk) begin
    if (!rst_n || clr) stop <= 1'b0;
    else if (err_bits != 0) stop <= 1'b1;
  end

  // ---- on-chip buffers (elements are 16 bits; int8 mode uses the low byte, sign-extended on read)
  logic [15:0] ibuf_m [2 * IBUF_ELEMS];
  logic [15:0] wbuf_m [2 * WBUF_ELEMS];
  logic [8*PARAM_BYTES-1:0] pbuf_m [PBUF_ENTRIES];
  logic signed [ACC_W-1:0] acc_m [2 * ACC_WORDS * TM];
  logic [15:0] obuf_m [OBUF_ELEMS];

  function automatic logic signed [15:0] elem(input logic [15:0] raw, input logic p16);
    return p16 ? raw : {{8{raw[7]}}, raw[7:0]};
  endfunction

  // ---- dependency tokens
  logic [15:0] tok_l2c, tok_c2l, tok_c2s, tok_s2c;
  logic ld_pop_c2l, ld_push_l2c, cp_pop_l2c, cp_pop_s2c, cp_push_c2l, cp_push_c2s, st_pop_c2s, st_push_s2c;
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      tok_l2c <= '0;
      tok_c2l <= '0;
      tok_c2s <= '0;
      tok_s2c <= '0;
    end else begin
      tok_l2c <= tok_l2c + 16'(ld_push_l2c) - 16'(cp_pop_l2c);
      tok_c2l <= tok_c2l + 16'(cp_push_c2l) - 16'(ld_pop_c2l);
      tok_c2s <= tok_c2s + 16'(cp_push_c2s) - 16'(st_pop_c2s);
      tok_s2c <= tok_s2c + 16'(st_push_s2c) - 16'(cp_pop_s2c);
    end
  end

  // ---- read channel: AR arbitration per address (fetch first; a pending address is held until accepted) and
  // in-order R routing by a FIFO of the owners of the outstanding bursts (one AXI ID, data returns in order).
  // Fetch keeps at most one burst and LOAD at most LD_OUTST bursts in flight, so the owner FIFO never fills.
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
  localparam int RQ_DEPTH = 2 ** $clog2(LD_OUTST + 1);   // owners of the bursts in flight (LOAD + fetch)
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
    return left[8:0];
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
  logic illegal;
  wire [3:0] d_op = ifq_rdata[H_OPCODE_LSB +: H_OPCODE_W];
  wire d_to_ld = d_op == OP_CONFIG || d_op == OP_LOAD;
  wire d_to_cp = d_op == OP_NOP || d_op == OP_COMPUTE || d_op == OP_SYNC;
  wire d_to_st = d_op == OP_POST || d_op == OP_STORE || d_op == OP_END;
  always_comb begin
    lq_wr = 1'b0;
    cq_wr = 1'b0;
    sq_wr = 1'b0;
    ifq_rd = 1'b0;
    illegal = 1'b0;
    if (run && !stop && !disp_end && !ifq_empty) begin
      if (32'(d_op) >= 32'(N_OPCODES)) begin
        illegal = 1'b1;
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
    if (!rst_n || clr) disp_end <= 1'b0;
    else if (sq_wr && d_op == OP_END) disp_end <= 1'b1;
  end

  // ======================================================================================= LOAD module
  // Address side: the transfer is cut into DDR segments, each a run of pixel runs at a fixed byte stride: the
  // whole transfer (rows x cols contiguous), one row of contiguous pixels, one row *span* (pixel runs that overlap
  // or nearly touch, e.g. the folded first layer: every byte of the span is fetched once and written to each of
  // the at most two runs holding it), or a single pixel run. Each segment is cut into bursts (4 KB / 256 beats);
  // one burst address per cycle, up to LD_OUTST bursts in flight, so pixel-wise transfers stream at the DDR rate.
  // Addresses advance incrementally (no multiplier). Data side: every beat is written into its buffer elements
  // from the descriptor of its burst (segment start/end, first pixel, run stride), popped from a FIFO filled as
  // the addresses are issued.
  typedef enum logic [2:0] {LD_IDLE, LD_RUN, LD_WAIT, LD_DONE} ld_state_t;
  ld_state_t ld_state;
  logic [INSN_BITS-1:0] ld_ins;
  logic cfg_err_isa, cfg_err_cfg;
  wire [1:0]  ld_buf = ld_ins[F_LOAD_BUF_LSB +: F_LOAD_BUF_W];
  wire        ld_bank = ld_ins[F_LOAD_BANK_LSB +: F_LOAD_BANK_W];
  wire [31:0] ld_rows = 32'(ld_ins[F_LOAD_ROWS_LSB +: F_LOAD_ROWS_W]);
  wire [31:0] ld_cols = 32'(ld_ins[F_LOAD_COLS_LSB +: F_LOAD_COLS_W]);
  wire [31:0] ld_elems = 32'(ld_ins[F_LOAD_ELEMS_LSB +: F_LOAD_ELEMS_W]);
  wire [63:0] ld_row_stride = 64'(ld_ins[F_LOAD_ROW_STRIDE_LSB +: F_LOAD_ROW_STRIDE_W]);
  wire [63:0] ld_pix_stride = 64'(ld_ins[F_LOAD_PIX_STRIDE_LSB +: F_LOAD_PIX_STRIDE_W]);
  wire [31:0] ld_dst_word = 32'(ld_ins[F_LOAD_DST_WORD_LSB +: F_LOAD_DST_WORD_W]);
  wire [31:0] ld_dst_elem = 32'(ld_ins[F_LOAD_DST_ELEM_LSB +: F_LOAD_DST_ELEM_W]);
  wire [31:0] ld_dst_pitch = 32'(ld_ins[F_LOAD_DST_PITCH_LSB +: F_LOAD_DST_PITCH_W]);
  wire ld_is_pbuf = 32'(ld_buf) == BUF_PBUF;
  wire [31:0] ld_lanes = (32'(ld_buf) == BUF_WBUF) ? 32'(TN * TM) : 32'(TN);
  wire [31:0] ld_eb = ld_is_pbuf ? 32'(PARAM_BYTES) : (prec16 ? 32'd2 : 32'd1);
  wire [31:0] ld_run = ld_elems * ld_eb;                              // bytes of one pixel run
  wire ld_row_contig = ld_cols == 1 || ld_pix_stride == 64'(ld_run);
  wire ld_all_contig = ld_row_contig && (ld_rows == 1 || ld_row_stride == 64'(ld_cols) * 64'(ld_run));
  // row span: runs 0 < stride < run <= 2 * stride (each byte in at most two runs), when fetching the span takes
  // no more beats than fetching run by run (the latency model's rule, generator/hwmodel.py)
  wire [63:0] ld_span = 64'(ld_cols - 32'd1) * ld_pix_stride + 64'(ld_run);
  wire ld_row_span = !ld_row_contig && ld_pix_stride != 0 && ld_pix_stride < 64'(ld_run)
                     && 64'(ld_run) <= 2 * ld_pix_stride
                     && ((ld_span + 64'(AXI_BYTES - 1)) >> LOG2_BYTES)
                        <= 64'(ld_cols) * ((64'(ld_run) + 64'(AXI_BYTES - 1)) >> LOG2_BYTES);
  logic [31:0] ld_r, ld_c;                                            // next segment (row, column)
  logic [63:0] ld_row_addr, ld_pix_addr;                              // DDR address of (ld_r, 0) and (ld_r, ld_c)
  logic ld_seg_v;                                                     // a segment is being issued
  logic [63:0] ld_sstart, ld_send, ld_cur;                             // segment being issued, next burst address
  logic [31:0] ld_spix, ld_sstride;                                   // its first pixel index, bytes between runs
  logic [$clog2(LD_OUTST):0] ld_outst;                                // bursts issued, last beat not received
  // burst descriptors: {burst address, segment start, segment end, first pixel, run stride}
  localparam int LDQ_W = 64 + 64 + 64 + 32 + 32;
  logic ldq_empty, ldq_full;
  logic [LDQ_W-1:0] ldq_rdata;
  logic [$clog2(LD_OUTST):0] ldq_count;
  wire ld_beat = !rq_empty && rq_head_ld && m_axi_rvalid;             // (ld_rready is always 1)
  sync_fifo #(.W(LDQ_W), .DEPTH(LD_OUTST)) u_ldq (
    .clk, .rst_n, .clr, .wr(ld_ar_ok), .wdata({ld_cur, ld_sstart, ld_send, ld_spix, ld_sstride}),
    .rd(ld_beat && m_axi_rlast), .rdata(ldq_rdata), .empty(ldq_empty), .full(ldq_full), .count(ldq_count));
  wire [63:0] ldr_burst = ldq_rdata[LDQ_W-1 -: 64];
  wire [63:0] ldr_start = ldq_rdata[LDQ_W-65 -: 64];
  wire [63:0] ldr_end = ldq_rdata[LDQ_W-129 -: 64];
  wire [31:0] ldr_pix0 = ldq_rdata[63:32];
  wire [31:0] ldr_stride = ldq_rdata[31:0];
  logic [7:0] ldr_beat;                                               // beat within the current burst
  wire [63:0] ldr_cur = ldr_burst + 64'(ldr_beat) * 64'(AXI_BYTES);
  wire [3:0] lq_op = lq_rdata[H_OPCODE_LSB +: H_OPCODE_W];
  wire ld_go = ld_state == LD_IDLE && run && !stop && !lq_empty && !(lq_rdata[H_POP_NEXT_LSB] && tok_c2l == 0);
  wire [8:0] ld_blen = burst_beats(ld_cur, ld_send);
  assign lq_rd = ld_go;
  assign ld_pop_c2l = ld_go && lq_rdata[H_POP_NEXT_LSB];
  assign ld_push_l2c = ld_state == LD_DONE && ld_ins[H_PUSH_NEXT_LSB];
  assign ld_arvalid = ld_state == LD_RUN && ld_seg_v && 32'(ld_outst) < 32'(LD_OUTST);
  assign ld_araddr = ld_cur;
  assign ld_arlen = 8'(ld_blen - 9'd1);
  assign ld_rready = 1'b1;

  always_comb begin
    cfg_err_isa = 1'b0;
    cfg_err_cfg = 1'b0;
    if (ld_go && lq_op == OP_CONFIG) begin
      cfg_err_isa = 32'(lq_rdata[F_CONFIG_ISA_VERSION_LSB +: F_CONFIG_ISA_VERSION_W]) != ISA_VERSION;
      cfg_err_cfg = 32'(lq_rdata[F_CONFIG_TN_LSB +: F_CONFIG_TN_W]) != TN
                 || 32'(lq_rdata[F_CONFIG_TM_LSB +: F_CONFIG_TM_W]) != TM
                 || lq_rdata[F_CONFIG_CONFIG_ID_LSB +: F_CONFIG_CONFIG_ID_W] != CONFIG_ID
                 || 32'(lq_rdata[F_CONFIG_PRECISION_LSB +: F_CONFIG_PRECISION_W]) > 32'd1;
    end
  end
  always_comb begin
    err_bits = '0;
    err_bits[ST_ILLEGAL_OPCODE] = illegal;
    err_bits[ST_ISA_VERSION_MISMATCH] = cfg_err_isa;
    err_bits[ST_CONFIG_MISMATCH] = cfg_err_cfg;
  end

  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      ld_outst <= '0;
      ldr_beat <= '0;
    end else begin
      ld_outst <= ld_outst + ($clog2(LD_OUTST) + 1)'(ld_ar_ok) - ($clog2(LD_OUTST) + 1)'(ld_beat && m_axi_rlast);
      if (ld_beat) ldr_beat <= m_axi_rlast ? 8'd0 : ldr_beat + 8'd1;
    end
  end

  // next segment from (ld_r, ld_c): its start, end, first pixel, run stride, and the position after it
  logic [63:0] ldn_start, ldn_end, ldn_row_addr, ldn_pix_addr;
  logic [31:0] ldn_pix, ldn_stride, ldn_r, ldn_c;
  always_comb begin
    ldn_start = ld_pix_addr;
    ldn_pix = ld_r * ld_cols + ld_c;
    ldn_stride = ld_run;
    ldn_r = ld_r;
    ldn_c = ld_c;
    ldn_row_addr = ld_row_addr;
    ldn_pix_addr = ld_pix_addr;
    if (ld_all_contig) begin
      ldn_end = ld_pix_addr + 64'(ld_rows * ld_cols) * 64'(ld_run);
      ldn_r = ld_rows;
    end else if (ld_row_contig || ld_row_span) begin
      ldn_end = ld_pix_addr + (ld_row_span ? ld_span : 64'(ld_cols) * 64'(ld_run));
      if (ld_row_span) ldn_stride = 32'(ld_pix_stride);
      ldn_r = ld_r + 32'd1;
      ldn_row_addr = ld_row_addr + ld_row_stride;
      ldn_pix_addr = ldn_row_addr;
    end else begin
      ldn_end = ld_pix_addr + 64'(ld_run);
      if (ld_c + 32'd1 >= ld_cols) begin
        ldn_c = '0;
        ldn_r = ld_r + 32'd1;
        ldn_row_addr = ld_row_addr + ld_row_stride;
        ldn_pix_addr = ldn_row_addr;
      end else begin
        ldn_c = ld_c + 32'd1;
        ldn_pix_addr = ld_pix_addr + ld_pix_stride;
      end
    end
  end
  wire [63:0] ld_cur_next = ld_cur + 64'(ld_blen) * 64'(AXI_BYTES);
  wire ld_seg_end = ld_ar_ok && ld_cur_next >= ld_send;               // the segment's last burst is accepted
  wire ld_take = (!ld_seg_v || ld_seg_end) && ld_r < ld_rows;          // start the next segment this cycle

  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      ld_state <= LD_IDLE;
      ld_ins <= '0;
      prec16 <= 1'b0;
      ld_r <= '0;
      ld_c <= '0;
      ld_row_addr <= '0;
      ld_pix_addr <= '0;
      ld_seg_v <= 1'b0;
      ld_sstart <= '0;
      ld_send <= '0;
      ld_spix <= '0;
      ld_sstride <= '0;
      ld_cur <= '0;
    end else begin
      case (ld_state)
        LD_IDLE:
          if (ld_go) begin
            logic [63:0] a0;
            a0 = base_addr[lq_rdata[F_LOAD_BASE_REG_LSB +: F_LOAD_BASE_REG_W]]
                 + 64'(lq_rdata[F_LOAD_DDR_OFFSET_LSB +: F_LOAD_DDR_OFFSET_W]);
            ld_ins <= lq_rdata;
            ld_r <= '0;
            ld_c <= '0;
            ld_row_addr <= a0;
            ld_pix_addr <= a0;
            ld_seg_v <= 1'b0;
            ld_state <= LD_DONE;
            if (lq_op == OP_CONFIG) begin
              prec16 <= 32'(lq_rdata[F_CONFIG_PRECISION_LSB +: F_CONFIG_PRECISION_W]) == PREC_INT16;
            end else if (lq_op == OP_LOAD && lq_rdata[F_LOAD_ROWS_LSB +: F_LOAD_ROWS_W] != 0
                         && lq_rdata[F_LOAD_COLS_LSB +: F_LOAD_COLS_W] != 0
                         && lq_rdata[F_LOAD_ELEMS_LSB +: F_LOAD_ELEMS_W] != 0) begin
              ld_state <= LD_RUN;
            end
          end
        LD_RUN: begin
          if (ld_ar_ok) ld_cur <= ld_cur_next;
          if (ld_seg_end) ld_seg_v <= 1'b0;
          if (ld_take) begin
            ld_seg_v <= 1'b1;
            ld_sstart <= ldn_start;
            ld_send <= ldn_end;
            ld_cur <= ldn_start & ~64'(AXI_BYTES - 1);
            ld_spix <= ldn_pix;
            ld_sstride <= ldn_stride;
            ld_r <= ldn_r;
            ld_c <= ldn_c;
            ld_row_addr <= ldn_row_addr;
            ld_pix_addr <= ldn_pix_addr;
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

  // byte lanes of a read beat -> buffer elements: byte offset o in the segment lies in run p = o / stride at
  // byte e = o - p * stride if e < run, and (span segments) also in run p - 1 at byte e + stride if that is < run
  logic ld_we [2][AXI_BYTES];
  logic [31:0] ld_widx [2][AXI_BYTES];
  logic [3:0] ld_wbyte [2][AXI_BYTES];      // byte within the element / record
  always_comb begin
    for (int j = 0; j < AXI_BYTES; j++) begin
      logic [63:0] a;
      logic [31:0] off, p, e0;
      logic in_seg;
      a = ldr_cur + 64'(j);
      off = 32'(a - ldr_start);
      in_seg = ld_beat && a >= ldr_start && a < ldr_end;
      p = (ldr_stride == 0) ? 32'd0 : off / ldr_stride;
      e0 = off - p * ldr_stride;
      for (int d = 0; d < 2; d++) begin
        logic [31:0] pix, e, pixbase;
        pix = ldr_pix0 + p - 32'(d);
        e = e0 + (d == 1 ? ldr_stride : 32'd0);
        ld_we[d][j] = in_seg && e < ld_run && (d == 0 || p != 0);
        pixbase = ld_is_pbuf ? ld_dst_word + pix * ld_elems
                             : (ld_dst_word + pix * ld_dst_pitch) * ld_lanes + ld_dst_elem;
        if (ld_is_pbuf) begin
          ld_widx[d][j] = pixbase + (e >> 4);
          ld_wbyte[d][j] = e[3:0];
        end else if (prec16) begin
          ld_widx[d][j] = pixbase + (e >> 1);
          ld_wbyte[d][j] = {3'b0, e[0]};
        end else begin
          ld_widx[d][j] = pixbase + e;
          ld_wbyte[d][j] = 4'd0;
        end
      end
    end
  end
  always_ff @(posedge clk) begin
    for (int d = 0; d < 2; d++) begin
      for (int j = 0; j < AXI_BYTES; j++) begin
        if (ld_we[d][j]) begin
          if (ld_is_pbuf) begin
            if (ld_widx[d][j] < 32'(PBUF_ENTRIES))
              pbuf_m[ld_widx[d][j]][8 * ld_wbyte[d][j] +: 8] <= m_axi_rdata[8 * j +: 8];
          end else if (32'(ld_buf) == BUF_WBUF) begin
            if (ld_widx[d][j] < 32'(WBUF_ELEMS))
              wbuf_m[32'(ld_bank) * 32'(WBUF_ELEMS) + ld_widx[d][j]][8 * ld_wbyte[d][j][0] +: 8] <= m_axi_rdata[8 * j +: 8];
          end else begin
            if (ld_widx[d][j] < 32'(IBUF_ELEMS))
              ibuf_m[32'(ld_bank) * 32'(IBUF_ELEMS) + ld_widx[d][j]][8 * ld_wbyte[d][j][0] +: 8] <= m_axi_rdata[8 * j +: 8];
          end
        end
      end
    end
  end

  // ======================================================================================= COMPUTE module
  typedef enum logic [1:0] {C_IDLE, C_RUN, C_DONE} cp_state_t;
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
  wire [31:0] cp_s = 32'(cp_ins[F_COMPUTE_STRIDE_LSB +: F_COMPUTE_STRIDE_W]);
  wire [31:0] cp_in_cols = 32'(cp_ins[F_COMPUTE_IN_COLS_LSB +: F_COMPUTE_IN_COLS_W]);
  wire [31:0] cp_ibuf_word = 32'(cp_ins[F_COMPUTE_IBUF_WORD_LSB +: F_COMPUTE_IBUF_WORD_W]);
  wire [31:0] cp_wbuf_word = 32'(cp_ins[F_COMPUTE_WBUF_WORD_LSB +: F_COMPUTE_WBUF_WORD_W]);
  logic [31:0] cp_oy, cp_ox, cp_o, cp_i, cp_ky, cp_kx;
  logic signed [ACC_W-1:0] cp_lacc0 [TM];
  logic signed [ACC_W-1:0] cp_lacc1 [TM];
  logic signed [ACC_W-1:0] cp_sum0 [TM];
  logic signed [ACC_W-1:0] cp_sum1 [TM];
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
  wire [31:0] cp_np = cp_two ? 32'd2 : 32'd1;
  wire cp_first = cp_i == 0 && cp_ky == 0 && cp_kx == 0;
  wire cp_last = cp_kx + 32'd1 >= cp_kw && cp_ky + 32'd1 >= cp_kh && cp_i + 32'd1 >= cp_ig;
  wire cp_wb = cp_state == C_RUN && (cp_bypass || cp_last);     // write the output word(s) to ACC
  logic signed [ACC_W-1:0] cp_new0 [TM];
  logic signed [ACC_W-1:0] cp_new1 [TM];
  always_comb begin
    for (int m = 0; m < TM; m++) begin
      cp_new0[m] = (cp_first || cp_bypass ? '0 : cp_lacc0[m]) + cp_sum0[m];
      cp_new1[m] = (cp_first || cp_bypass ? '0 : cp_lacc1[m]) + cp_sum1[m];
    end
  end

  // DSP48E2-style multiply: 27-bit A (two packed int8 activations, or one int16) x 18-bit B (weight)
  function automatic logic signed [44:0] dsp_mul(input logic signed [26:0] a, input logic signed [17:0] b);
    return 45'(a) * 45'(b);
  endfunction

  always_comb begin
    logic [31:0] iw0, iw1, ww, ie0, ie1, we0, be;
    be = '0;
    iw0 = cp_ibuf_word + ((cp_oy * cp_s + cp_ky) * cp_in_cols + cp_ox * cp_s + cp_kx) * cp_ig + cp_i;
    iw1 = iw0 + cp_s * cp_ig;
    ww = cp_wbuf_word + ((cp_o * cp_ig + cp_i) * cp_kh + cp_ky) * cp_kw + cp_kx;
    ie0 = 32'(cp_ibuf_bank) * 32'(IBUF_ELEMS) + iw0 * 32'(TN);
    ie1 = 32'(cp_ibuf_bank) * 32'(IBUF_ELEMS) + iw1 * 32'(TN);
    we0 = 32'(cp_wbuf_bank) * 32'(WBUF_ELEMS) + ww * 32'(TN * TM);
    for (int m = 0; m < TM; m++) begin
      cp_sum0[m] = '0;
      cp_sum1[m] = '0;
      for (int n = 0; n < TN; n++) begin
        logic signed [15:0] x0, x1, w;
        logic signed [26:0] a;
        logic signed [17:0] b;
        logic signed [44:0] p;
        logic signed [17:0] lo;
        logic signed [26:0] hi;
        lo = '0;
        hi = '0;
        x0 = elem(ibuf_m[ie0 + 32'(n)], prec16);
        x1 = cp_two ? elem(ibuf_m[ie1 + 32'(n)], prec16) : 16'sd0;
        w = elem(wbuf_m[we0 + 32'(m * TN + n)], prec16);
        b = 18'(w);
        if (prec16) begin
          a = 27'(x0);
          p = dsp_mul(a, b);
          cp_sum0[m] = cp_sum0[m] + ACC_W'(p);
        end else begin
          // two int8 activations in one 27-bit operand: x1 * 2^18 + x0
          a = (27'(x1) <<< 18) + 27'(x0);
          p = dsp_mul(a, b);
          lo = p[17:0];                                  // x0 * w, sign-extended from bit 17
          hi = 27'(p[44:18] + 27'(p[17]));               // x1 * w: add back the borrow of the low product
          cp_sum0[m] = cp_sum0[m] + ACC_W'(lo);
          cp_sum1[m] = cp_sum1[m] + ACC_W'(hi);
        end
      end
    end
    if (cp_bypass) begin
      be = 32'(cp_ibuf_bank) * 32'(IBUF_ELEMS) + cp_ibuf_word * 32'(TN)
           + ((cp_oy * cp_s) * cp_in_cols + cp_ox * cp_s) * cp_ig * 32'(TN) + cp_o * 32'(TM);
      for (int m = 0; m < TM; m++) begin
        cp_sum0[m] = ACC_W'(elem(ibuf_m[be + 32'(m)], prec16));
        cp_sum1[m] = '0;
      end
    end
  end

  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      cp_state <= C_IDLE;
      cp_ins <= '0;
      {cp_oy, cp_ox, cp_o, cp_i, cp_ky, cp_kx} <= '0;
      for (int m = 0; m < TM; m++) begin
        cp_lacc0[m] <= '0;
        cp_lacc1[m] <= '0;
      end
    end else begin
      case (cp_state)
        C_IDLE:
          if (cp_go) begin
            cp_ins <= cq_rdata;
            {cp_oy, cp_ox, cp_o, cp_i, cp_ky, cp_kx} <= '0;
            cp_state <= C_DONE;
            if (cq_op == OP_COMPUTE && cq_rdata[F_COMPUTE_OH_LSB +: F_COMPUTE_OH_W] != 0
                && cq_rdata[F_COMPUTE_OW_LSB +: F_COMPUTE_OW_W] != 0
                && cq_rdata[F_COMPUTE_OG_LSB +: F_COMPUTE_OG_W] != 0) cp_state <= C_RUN;
          end
        C_RUN: begin
          for (int m = 0; m < TM; m++) begin
            cp_lacc0[m] <= cp_new0[m];
            cp_lacc1[m] <= cp_new1[m];
          end
          if (cp_wb) begin
            // last (i, ky, kx) step: the sums go to ACC this cycle (see below); next output word
            {cp_i, cp_ky, cp_kx} <= '0;
            if (cp_o + 32'd1 < cp_og) begin
              cp_o <= cp_o + 32'd1;
            end else begin
              cp_o <= '0;
              if (cp_ox + cp_np < cp_ow) begin
                cp_ox <= cp_ox + cp_np;
              end else begin
                cp_ox <= '0;
                cp_oy <= cp_oy + 32'd1;
                if (cp_oy + 32'd1 >= cp_oh) cp_state <= C_DONE;
              end
            end
          end else if (cp_kx + 32'd1 < cp_kw) begin
            cp_kx <= cp_kx + 32'd1;
          end else begin
            cp_kx <= '0;
            if (cp_ky + 32'd1 < cp_kh) begin
              cp_ky <= cp_ky + 32'd1;
            end else begin
              cp_ky <= '0;
              cp_i <= cp_i + 32'd1;
            end
          end
        end
        C_DONE: cp_state <= C_IDLE;
        default: cp_state <= C_IDLE;
      endcase
    end
  end

  // accumulator write-back (ACC = or += the tile's partial sums)
  wire [31:0] cp_aw0 = 32'(cp_acc_bank) * 32'(ACC_WORDS) + (cp_oy * cp_ow + cp_ox) * cp_og + cp_o;
  wire [31:0] cp_aw1 = cp_aw0 + cp_og;
  always_ff @(posedge clk) begin
    if (cp_wb) begin
      for (int m = 0; m < TM; m++) begin
        acc_m[cp_aw0 * 32'(TM) + 32'(m)] <= cp_acc_init ? cp_new0[m] : acc_m[cp_aw0 * 32'(TM) + 32'(m)] + cp_new0[m];
        if (cp_two)
          acc_m[cp_aw1 * 32'(TM) + 32'(m)] <= cp_acc_init ? cp_new1[m] : acc_m[cp_aw1 * 32'(TM) + 32'(m)] + cp_new1[m];
      end
    end
  end

  // ======================================================================================= STORE module
  typedef enum logic [2:0] {S_IDLE, P_RUN, S_RUN, S_DONE} st_state_t;
  st_state_t st_state;
  logic [INSN_BITS-1:0] st_ins;
  wire [3:0] sq_op = sq_rdata[H_OPCODE_LSB +: H_OPCODE_W];
  wire st_go = st_state == S_IDLE && run && !stop && !sq_empty && !(sq_rdata[H_POP_PREV_LSB] && tok_c2s == 0);
  assign sq_rd = st_go;
  assign st_pop_c2s = st_go && sq_rdata[H_POP_PREV_LSB];
  assign st_push_s2c = st_state == S_DONE && st_ins[H_PUSH_PREV_LSB];
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
  wire [31:0] pp_out_rows = 32'(st_ins[F_POST_OUT_ROWS_LSB +: F_POST_OUT_ROWS_W]);
  wire [31:0] pp_out_cols = 32'(st_ins[F_POST_OUT_COLS_LSB +: F_POST_OUT_COLS_W]);
  wire [31:0] pp_pk = pp_pk_f == 0 ? 32'd1 : pp_pk_f;
  wire [31:0] pp_ps = pp_ps_f == 0 ? 32'd1 : pp_ps_f;
  wire [31:0] pp_up = pp_up_f == 0 ? 32'd1 : pp_up_f;
  wire [31:0] pp_rows = (pp_out_rows / pp_up) * pp_up;
  wire [31:0] pp_cols = (pp_out_cols / pp_up) * pp_up;
  logic [31:0] pp_y, pp_x, pp_o, pp_dy, pp_dx;
  logic signed [15:0] pp_max [TM];
  logic signed [15:0] pp_res [TM];
  wire pp_wfirst = pp_dy == 0 && pp_dx == 0;
  wire pp_wlast = pp_dy + 32'd1 >= pp_pk && pp_dx + 32'd1 >= pp_pk;
  wire [31:0] pp_oidx = ((pp_y * pp_cols + pp_x) * pp_og + pp_o) * 32'(TM);

  /* verilator lint_off UNUSEDSIGNAL */  // the reserved bytes of the parameter record
  function automatic logic signed [15:0] requant(input logic signed [ACC_W-1:0] acc,
                                                 input logic [8*PARAM_BYTES-1:0] rec, input logic act,
                                                 input logic [15:0] zp, input logic p16);
    logic signed [63:0] v, mlt, t, q, qmin, qmax;
    logic [7:0] sh;
    logic neg;
    v = 64'(acc) + signed'(rec[PR_BIAS_LSB +: 64]);
    neg = act && v < 0;
    mlt = neg ? 64'(signed'(rec[PR_MULT_NEG_LSB +: 16])) : 64'(signed'(rec[PR_MULT_POS_LSB +: 16]));
    sh = neg ? rec[PR_SHIFT_NEG_LSB +: 8] : rec[PR_SHIFT_POS_LSB +: 8];
    t = v * mlt + (64'sd1 <<< (sh - 8'd1));
    q = (t >>> sh) + 64'(signed'(zp));
    qmin = p16 ? -64'sd32768 : -64'sd128;
    qmax = p16 ? 64'sd32767 : 64'sd127;
    if (q < qmin) q = qmin;
    if (q > qmax) q = qmax;
    return q[15:0];
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  always_comb begin
    logic [31:0] yy, xx, aw;
    yy = (pp_y / pp_up) * pp_ps + pp_dy;
    xx = (pp_x / pp_up) * pp_ps + pp_dx;
    if (yy > pp_oh - 32'd1) yy = pp_oh - 32'd1;
    if (xx > pp_ow - 32'd1) xx = pp_ow - 32'd1;
    aw = 32'(pp_acc_bank) * 32'(ACC_WORDS) + (yy * pp_ow + xx) * pp_og + pp_o;
    for (int m = 0; m < TM; m++) begin
      logic signed [15:0] q;
      logic [31:0] pe;
      pe = pp_pbuf_oc + pp_o * 32'(TM) + 32'(m);
      q = requant(acc_m[aw * 32'(TM) + 32'(m)], pbuf_m[pe < 32'(PBUF_ENTRIES) ? pe : 32'd0], pp_act, pp_zp, prec16);
      pp_res[m] = (pp_wfirst || q > pp_max[m]) ? q : pp_max[m];
    end
  end
  always_ff @(posedge clk) begin
    if (st_state == P_RUN) begin
      for (int m = 0; m < TM; m++) begin
        pp_max[m] <= pp_res[m];
        if (pp_wlast && pp_oidx + 32'(m) < 32'(OBUF_ELEMS)) obuf_m[pp_oidx + 32'(m)] <= pp_res[m];
      end
    end
  end

  // STORE fields. Address side: segments as in LOAD (whole transfer, contiguous row, or one pixel run; no spans:
  // gap bytes must not be written), one burst address per cycle into a descriptor FIFO, up to ST_OUTST bursts
  // ahead of the data. Data side: beats streamed back to back from OBUF by the descriptor at the FIFO head.
  localparam int ST_OUTST = 16;
  wire [31:0] sd_rows = 32'(st_ins[F_STORE_ROWS_LSB +: F_STORE_ROWS_W]);
  wire [31:0] sd_cols = 32'(st_ins[F_STORE_COLS_LSB +: F_STORE_COLS_W]);
  wire [31:0] sd_elems = 32'(st_ins[F_STORE_ELEMS_LSB +: F_STORE_ELEMS_W]);
  wire [63:0] sd_row_stride = 64'(st_ins[F_STORE_ROW_STRIDE_LSB +: F_STORE_ROW_STRIDE_W]);
  wire [63:0] sd_pix_stride = 64'(st_ins[F_STORE_PIX_STRIDE_LSB +: F_STORE_PIX_STRIDE_W]);
  wire [31:0] sd_src_pitch = 32'(st_ins[F_STORE_SRC_PITCH_LSB +: F_STORE_SRC_PITCH_W]);
  wire [31:0] sd_run = sd_elems * (prec16 ? 32'd2 : 32'd1);
  wire sd_row_contig = sd_cols == 1 || sd_pix_stride == 64'(sd_run);
  wire sd_all_contig = sd_row_contig && (sd_rows == 1 || sd_row_stride == 64'(sd_cols) * 64'(sd_run));
  logic [31:0] sd_r, sd_c;                          // next segment
  logic [63:0] sd_row_addr, sd_pix_addr;
  logic sd_seg_v;
  logic [63:0] sd_start, sd_end, sd_cur;           // segment being issued, next burst address
  logic [31:0] sd_spix;
  logic [15:0] sd_outst;      // write bursts awaiting their response
  // AW descriptors: {burst address, beats, segment start, segment end, first pixel}
  localparam int SDQ_W = 64 + 9 + 64 + 64 + 32;
  logic sdq_empty, sdq_full;
  logic [SDQ_W-1:0] sdq_rdata;
  logic [$clog2(ST_OUTST):0] sdq_count;
  wire [8:0] sd_blen = burst_beats(sd_cur, sd_end);
  wire aw_fire = m_axi_awvalid && m_axi_awready;
  wire w_fire = m_axi_wvalid && m_axi_wready;
  sync_fifo #(.W(SDQ_W), .DEPTH(ST_OUTST)) u_sdq (
    .clk, .rst_n, .clr, .wr(aw_fire), .wdata({sd_cur, sd_blen, sd_start, sd_end, sd_spix}),
    .rd(w_fire && m_axi_wlast), .rdata(sdq_rdata), .empty(sdq_empty), .full(sdq_full), .count(sdq_count));
  wire [63:0] sdw_burst = sdq_rdata[SDQ_W-1 -: 64];
  wire [8:0]  sdw_blen = sdq_rdata[SDQ_W-65 -: 9];
  wire [63:0] sdw_start = sdq_rdata[SDQ_W-74 -: 64];
  wire [63:0] sdw_end = sdq_rdata[SDQ_W-138 -: 64];
  wire [31:0] sdw_pix0 = sdq_rdata[31:0];
  logic [8:0] sd_wcnt;                              // beat within the burst at the FIFO head
  wire [63:0] sdw_cur = sdw_burst + 64'(sd_wcnt) * 64'(AXI_BYTES);
  assign m_axi_awid = '0;
  assign m_axi_awsize = 3'(LOG2_BYTES);
  assign m_axi_awburst = 2'b01;
  assign m_axi_awlock = 1'b0;
  assign m_axi_awcache = 4'b0011;
  assign m_axi_awprot = 3'b000;
  assign m_axi_awvalid = st_state == S_RUN && sd_seg_v && !sdq_full;
  assign m_axi_awaddr = AXI_AW'(sd_cur);
  assign m_axi_awlen = 8'(sd_blen - 9'd1);
  assign m_axi_wvalid = st_state == S_RUN && !sdq_empty;
  assign m_axi_wlast = sd_wcnt + 9'd1 >= sdw_blen;
  assign m_axi_bready = 1'b1;
  always_comb begin
    for (int j = 0; j < AXI_BYTES; j++) begin
      logic [63:0] a;
      logic [31:0] off, p, e, el_i;
      logic [15:0] el;
      a = sdw_cur + 64'(j);
      off = 32'(a - sdw_start);
      p = (sd_run == 0) ? 32'd0 : off / sd_run;
      e = off - p * sd_run;
      el_i = (sdw_pix0 + p) * sd_src_pitch * 32'(TM) + (prec16 ? e >> 1 : e);
      el = obuf_m[el_i < 32'(OBUF_ELEMS) ? el_i : 32'd0];
      m_axi_wstrb[j] = a >= sdw_start && a < sdw_end;
      m_axi_wdata[8 * j +: 8] = m_axi_wstrb[j] ? ((prec16 && e[0]) ? el[15:8] : el[7:0]) : 8'd0;
    end
  end

  // next segment from (sd_r, sd_c)
  logic [63:0] sdn_end, sdn_row_addr, sdn_pix_addr;
  logic [31:0] sdn_r, sdn_c;
  always_comb begin
    sdn_r = sd_r;
    sdn_c = sd_c;
    sdn_row_addr = sd_row_addr;
    sdn_pix_addr = sd_pix_addr;
    if (sd_all_contig) begin
      sdn_end = sd_pix_addr + 64'(sd_rows * sd_cols) * 64'(sd_run);
      sdn_r = sd_rows;
    end else if (sd_row_contig) begin
      sdn_end = sd_pix_addr + 64'(sd_cols) * 64'(sd_run);
      sdn_r = sd_r + 32'd1;
      sdn_row_addr = sd_row_addr + sd_row_stride;
      sdn_pix_addr = sdn_row_addr;
    end else begin
      sdn_end = sd_pix_addr + 64'(sd_run);
      if (sd_c + 32'd1 >= sd_cols) begin
        sdn_c = '0;
        sdn_r = sd_r + 32'd1;
        sdn_row_addr = sd_row_addr + sd_row_stride;
        sdn_pix_addr = sdn_row_addr;
      end else begin
        sdn_c = sd_c + 32'd1;
        sdn_pix_addr = sd_pix_addr + sd_pix_stride;
      end
    end
  end
  wire [63:0] sd_cur_next = sd_cur + 64'(sd_blen) * 64'(AXI_BYTES);
  wire sd_seg_end = aw_fire && sd_cur_next >= sd_end;
  wire sd_take = (!sd_seg_v || sd_seg_end) && sd_r < sd_rows;

  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      st_state <= S_IDLE;
      st_ins <= '0;
      end_done <= 1'b0;
      {pp_y, pp_x, pp_o, pp_dy, pp_dx} <= '0;
      {sd_r, sd_c, sd_spix} <= '0;
      {sd_row_addr, sd_pix_addr} <= '0;
      {sd_start, sd_end, sd_cur} <= '0;
      sd_seg_v <= 1'b0;
      sd_wcnt <= '0;
      sd_outst <= '0;
    end else begin
      sd_outst <= sd_outst + 16'(aw_fire) - 16'(m_axi_bvalid);
      if (w_fire) sd_wcnt <= m_axi_wlast ? 9'd0 : sd_wcnt + 9'd1;
      case (st_state)
        S_IDLE:
          if (st_go) begin
            logic [63:0] a0;
            a0 = base_addr[sq_rdata[F_STORE_BASE_REG_LSB +: F_STORE_BASE_REG_W]]
                 + 64'(sq_rdata[F_STORE_DDR_OFFSET_LSB +: F_STORE_DDR_OFFSET_W]);
            st_ins <= sq_rdata;
            {pp_y, pp_x, pp_o, pp_dy, pp_dx} <= '0;
            sd_r <= '0;
            sd_c <= '0;
            sd_row_addr <= a0;
            sd_pix_addr <= a0;
            sd_seg_v <= 1'b0;
            st_state <= S_DONE;
            if (sq_op == OP_END) end_done <= 1'b1;
            if (sq_op == OP_POST) st_state <= P_RUN;
            if (sq_op == OP_STORE && sq_rdata[F_STORE_ROWS_LSB +: F_STORE_ROWS_W] != 0
                && sq_rdata[F_STORE_COLS_LSB +: F_STORE_COLS_W] != 0
                && sq_rdata[F_STORE_ELEMS_LSB +: F_STORE_ELEMS_W] != 0) st_state <= S_RUN;
          end
        P_RUN:
          if (pp_rows == 0 || pp_cols == 0 || pp_og == 0) begin
            st_state <= S_DONE;
          end else if (!pp_wlast) begin
            if (pp_dx + 32'd1 < pp_pk) pp_dx <= pp_dx + 32'd1;
            else begin
              pp_dx <= '0;
              pp_dy <= pp_dy + 32'd1;
            end
          end else begin
            pp_dx <= '0;
            pp_dy <= '0;
            if (pp_o + 32'd1 < pp_og) pp_o <= pp_o + 32'd1;
            else begin
              pp_o <= '0;
              if (pp_x + 32'd1 < pp_cols) pp_x <= pp_x + 32'd1;
              else begin
                pp_x <= '0;
                pp_y <= pp_y + 32'd1;
                if (pp_y + 32'd1 >= pp_rows) st_state <= S_DONE;
              end
            end
          end
        S_RUN: begin
          if (aw_fire) sd_cur <= sd_cur_next;
          if (sd_seg_end) sd_seg_v <= 1'b0;
          if (sd_take) begin
            sd_seg_v <= 1'b1;
            sd_start <= sd_pix_addr;
            sd_end <= sdn_end;
            sd_cur <= sd_pix_addr & ~64'(AXI_BYTES - 1);
            sd_spix <= sd_r * sd_cols + sd_c;
            sd_r <= sdn_r;
            sd_c <= sdn_c;
            sd_row_addr <= sdn_row_addr;
            sd_pix_addr <= sdn_pix_addr;
          end else if (!sd_seg_v && !aw_fire && sd_r >= sd_rows && sdq_empty
                       && !(w_fire && m_axi_wlast) && sd_outst == 0 && !m_axi_bvalid) begin
            st_state <= S_DONE;                 // every burst written and acknowledged
          end
        end
        S_DONE: st_state <= S_IDLE;
        default: st_state <= S_IDLE;
      endcase
    end
  end

  // ======================================================================================= completion
  wire all_idle = ld_state == LD_IDLE && cp_state == C_IDLE && st_state == S_IDLE && fe_state == FE_IDLE
                  && rq_empty;
  wire queues_empty = lq_empty && cq_empty && sq_empty;
  wire fe_exhausted = !fe_more && ifq_empty && !disp_end;
  assign finish = run && !start_pulse && all_idle
                  && (stop || (end_done && queues_empty) || (fe_exhausted && queues_empty));

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
                  sq_count, cp_ins[H_PUSH_NEXT_LSB], rq_full, rq_count, ldq_empty, ldq_full, ldq_count, sdq_count, dbg_st_retired, dbg_ld_busy, dbg_cp_busy, 1'b0};
endmodule
`default_nettype wire
