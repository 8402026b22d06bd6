// Instruction fetch and dispatch. Fetch: from the $readmemh instruction ROM (fetch_ddr = 0, one instruction per
// cycle) or from DDR at insns_addr (fetch_ddr = 1: bursts of up to FETCH_BURST instructions, not across an
// AXI_BOUNDARY, only while the fetch FIFO has room for a whole burst), n_insns (or ROM_WORDS) instructions at most,
// none after END. Dispatch: the head of the fetch FIFO goes to the LOAD (CONFIG, LOAD, PRE), COMPUTE (NOP, COMPUTE,
// SYNC) or STORE module (POST, STORE, END) queue, one per cycle, until END.
// Errors found here: ILLEGAL_OPCODE (opcode outside the ISA, non-zero bits above its format (UNUSED_MASKS), a
// token flag towards a neighbour the module lacks), CONFIG_MISSING (first instruction not CONFIG), NO_END (the
// fetch ran off the program's end without an END, every fetched instruction dispatched).
// Pipelined for the clock: the ROM is read synchronously and every fetched instruction passes two register stages
// (fq_: the instruction; fq2_: the bits above each opcode's format OR-reduced in groups, per opcode; then checked and
// classified); the
// fetched-instruction FIFO holds those verdicts next to it, so dispatch decides from a few registered bits. Addresses are AXI_AW bits: the page offset and the page number
// count separately; the instructions left to fetch are a down-counter.
// Prefixes: fe_ fetch, fq_ the fetched instruction's check stage, ifq_ fetched-instruction FIFO, d_ the
// instruction at the head of it (dispatch), lq_ / cq_ / sq_ the LOAD / COMPUTE / STORE module queues.
`default_nettype none
module fetch_dispatch
  import accel_pkg::*;
#(
  parameter string ROM_FILE = ""
) (
  input  wire                   clk,
  input  wire                   rst_n,
  input  wire                   clr,
  input  wire                   run,
  input  wire                   stop,
  input  wire                   fetch_ddr,
  input  wire [63:0]            insns_addr,
  input  wire [31:0]            n_insns,
  // read channel (through axi_rd_arb)
  output logic                  fe_arvalid,
  output logic [63:0]           fe_araddr,
  output logic [7:0]            fe_arlen,
  input  wire                   fe_ar_ok,
  input  wire                   fe_rvalid,
  output logic                  fe_rready,
  input  wire [AXI_DW-1:0]      rdata,
  input  wire                   rlast,
  // module queues
  input  wire                   lq_rd, cq_rd, sq_rd,
  output logic [INSN_BITS-1:0]  lq_rdata, cq_rdata, sq_rdata,
  output logic                  lq_empty, cq_empty, sq_empty,
  // status
  output logic                  illegal,        // ILLEGAL_OPCODE (registered: found last cycle)
  output logic                  cfg_missing,    // CONFIG_MISSING (registered)
  output logic                  no_end,         // NO_END
  output logic                  fe_idle,
  output logic                  fe_exhausted,   // nothing more to fetch, nothing left to dispatch, no END
  output logic                  insn_moved,     // an instruction fetched or dispatched this cycle
  output logic                  queues_empty    // the three module queues
);
  // an instruction is BEATS_PER_INSN beats (AXI_DW <= INSN_BITS), or a beat holds IPB instructions (a 512-bit
  // m_axi: two; a burst starting on a beat's second instruction, as a PRE prologue after a program of odd length
  // does, reads from the beat's start and drops its first instruction)
  localparam int BEATS_PER_INSN = AXI_DW >= INSN_BITS ? 1 : INSN_BITS / AXI_DW;
  localparam int IPB = AXI_DW > INSN_BITS ? AXI_DW / INSN_BITS : 1;
  if (IPB > 2 || FETCH_BURST % IPB != 0) begin : g_bad_ipb
    $error("fetch_dispatch: at most two instructions per beat, FETCH_BURST a multiple of them");
  end
  localparam int PG_W = $clog2(AXI_BOUNDARY);               // page offset bits (4 KB)
  // fetched-instruction FIFO entry: {bad, config, end, to_ld, to_cp, to_st, instruction}
  localparam int IFQ_W = INSN_BITS + 6;
  logic ifq_wr, ifq_rd, ifq_empty, ifq_full;
  logic [IFQ_W-1:0] ifq_wdata, ifq_rdata;
  logic [$clog2(IFQ_DEPTH):0] ifq_count;
  sync_fifo #(.W(IFQ_W), .DEPTH(IFQ_DEPTH)) u_ifq (
    .clk, .rst_n, .clr, .wr(ifq_wr), .wdata(ifq_wdata), .rd(ifq_rd), .rdata(ifq_rdata), .empty(ifq_empty),
    .full(ifq_full), .count(ifq_count));

  logic [INSN_BITS-1:0] rom [ROM_WORDS];
  initial begin
    if (ROM_FILE != "") $readmemh(ROM_FILE, rom);
  end

  // ======================================================================================= fetch
  typedef enum logic [2:0] {FE_IDLE, FE_REQ, FE_AR, FE_R, FE_REL} fe_state_t;
  fe_state_t fe_state;
  logic [31:0] fe_pc;         // instructions fetched (requested, in DDR mode)
  logic [31:0] fe_left;       // instructions left to fetch: fe_limit - fe_pc
  logic [AXI_AW-PG_W-1:0] fe_page;
  logic [PG_W-1:0] fe_off;    // the next instruction's DDR address: {fe_page, fe_off}
  logic fe_end;               // END fetched: fetch no more
  logic [3:0] fe_n;           // instructions in the current burst
  logic [7:0] fe_beat;
  logic [INSN_BITS-1:0] fe_buf;
  wire [31:0] fe_limit = fetch_ddr ? n_insns : 32'(ROM_WORDS);
  wire fe_more = run && !stop && !fe_end && fe_left != 0;
  logic [PG_W:0] fe_to_bound;
  logic [3:0] fe_cnt;
  always_comb begin
    fe_to_bound = (PG_W + 1)'((PG_W + 1)'(AXI_BOUNDARY) - (PG_W + 1)'(fe_off)) >> $clog2(INSN_BITS / 8);
    fe_cnt = 4'(FETCH_BURST);
    if (fe_left < 32'(fe_cnt)) fe_cnt = 4'(fe_left);
    if (fe_to_bound < (PG_W + 1)'(fe_cnt)) fe_cnt = 4'(fe_to_bound);
  end
  assign fe_arvalid = fe_state == FE_AR;
  localparam int IB = $clog2(INSN_BITS / 8);                  // an instruction's byte-offset bits
  wire fe_odd = IPB == 2 && fe_off[IB];                        // IPB = 2: the burst starts on a beat's second half
  assign fe_araddr = 64'({fe_page, fe_off & ~PG_W'(IPB == 2 ? INSN_BITS / 8 : 0)});
  // IPB = 2: a beat's second instruction is held in fe_hi (fe_hi_v) and taken the next cycle, rready low meanwhile
  logic fe_hi_v, fe_last;                   // (fe_last: the burst's last beat is in)
  logic fe_skip;                            // the burst's first beat's first instruction is not the program's
  logic [INSN_BITS-1:0] fe_hi;
  logic [3:0] fe_k;                         // the burst's instructions not yet assembled
  localparam int SH = AXI_DW < INSN_BITS ? INSN_BITS - AXI_DW : 0;
  wire [2*INSN_BITS-1:0] rd2 = (2 * INSN_BITS)'(rdata);          // (AXI_DW <= 2 INSN_BITS, accel_pkg)
  assign fe_arlen = IPB == 2 ? ((8'(fe_n) + 8'(fe_odd) + 8'd1) >> 1) - 8'd1 : 8'(32'(fe_n) * 32'(BEATS_PER_INSN) - 32'd1);
  assign fe_rready = fe_state == FE_R && !fe_hi_v;
  wire [INSN_BITS-1:0] fe_next_buf = IPB == 2 ? (fe_hi_v ? fe_hi : rd2[INSN_BITS-1:0])
                                     : AXI_DW >= INSN_BITS ? rd2[INSN_BITS-1:0]
                                     : (fe_buf >> AXI_DW) | (INSN_BITS'(rdata) << SH);
  wire fe_beat_ok = fe_state == FE_R && fe_rvalid && !fe_hi_v;
  wire fe_insn_done = IPB == 2 ? fe_beat_ok && !fe_skip || fe_hi_v
                               : fe_beat_ok && (32'(fe_beat) % 32'(BEATS_PER_INSN)) == 32'(BEATS_PER_INSN - 1);
  // an instruction is fetched this cycle: a ROM read (room for it and the one in the check stage) or a whole
  // instruction assembled from DDR beats
  // room in the FIFO for one more ROM read, registered: its occupancy with the two check stages and a read in the
  // cycle the flag is computed
  logic fq_room;
  logic fq_v, fq2_v;                          // an instruction in the check stages
  always_ff @(posedge clk) begin
    if (!rst_n || clr) fq_room <= 1'b0;
    // count + fq_v + fq2_v + 2 <= IFQ_DEPTH (>= 4, accel_pkg): the count against three constants (one carry chain
    // each), selected by the stages' flags
    else fq_room <= fq_v && fq2_v ? 32'(ifq_count) <= 32'(IFQ_DEPTH - 4)
                  : fq_v || fq2_v ? 32'(ifq_count) <= 32'(IFQ_DEPTH - 3)
                                  : 32'(ifq_count) <= 32'(IFQ_DEPTH - 2);
  end
  wire fe_rom_rd = !fetch_ddr && fe_more && fq_room;
  wire fe_take = fetch_ddr ? fe_insn_done && !fe_end : fe_rom_rd;

  // ---- check stages: the fetched instruction, registered (fq_); the bits above each opcode's format OR-reduced
  // (fq2_any[k]: bits of UNUSED_MASKS[k]), classified and checked into the FIFO entry
  logic [INSN_BITS-1:0] fq_insn, fq2_insn;
  localparam int ANY_G = 8, ANY_W = INSN_BITS / ANY_G;  // the OR-reduction in groups (two LUT levels each)
  logic [ANY_G-1:0] fq2_any [N_OPCODES];
  wire [3:0] q_op = fq2_insn[H_OPCODE_LSB +: H_OPCODE_W];
  wire q_to_ld = q_op == OP_CONFIG || q_op == OP_LOAD || q_op == OP_PRE;
  wire q_to_cp = q_op == OP_NOP || q_op == OP_COMPUTE || q_op == OP_SYNC;
  wire q_to_st = q_op == OP_POST || q_op == OP_STORE || q_op == OP_END;
  // malformed: an opcode outside the ISA, bits above its format, a token flag towards a neighbour its module does
  // not have (LOAD module: no prev, STORE module: no next)
  wire q_bad = 32'(q_op) >= 32'(N_OPCODES) || fq2_any[q_op[$clog2(N_OPCODES)-1:0]] != '0
               || (q_to_ld && (fq2_insn[H_POP_PREV_LSB] || fq2_insn[H_PUSH_PREV_LSB]))
               || (q_to_st && (fq2_insn[H_POP_NEXT_LSB] || fq2_insn[H_PUSH_NEXT_LSB]));
  wire q_end = q_op == OP_END;
  assign ifq_wr = fq2_v && !fe_end;          // nothing after END
  assign ifq_wdata = {q_bad, q_op == OP_CONFIG, q_end, q_to_ld, q_to_cp, q_to_st, fq2_insn};

  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      fq_v <= 1'b0;
      fq2_v <= 1'b0;
    end else begin
      fq_v <= fe_take;
      fq2_v <= fq_v;
    end
    if (fe_rom_rd) fq_insn <= fe_pc < 32'(ROM_WORDS) ? rom[fe_pc] : '0;
    else if (fe_insn_done) fq_insn <= fe_next_buf;
    fq2_insn <= fq_insn;
    for (int k = 0; k < N_OPCODES; k++)
      for (int g = 0; g < ANY_G; g++)
        fq2_any[k][g] <= (fq_insn[g * ANY_W +: ANY_W] & UNUSED_MASKS[k * INSN_BITS + g * ANY_W +: ANY_W]) != '0;
  end

  // DDR mode: the next burst's size and whether it may start, registered (the fetch state is stable in FE_IDLE)
  logic [3:0] fe_n_q;
  logic fe_go_q;
  always_ff @(posedge clk) begin
    fe_n_q <= fe_cnt;
    if (!rst_n || clr) fe_go_q <= 1'b0;       // (the address is loaded in this cycle)
    else fe_go_q <= !fq_v && !fq2_v && 32'(ifq_count) + 32'(FETCH_BURST) <= 32'(IFQ_DEPTH) && fe_cnt != 0;
  end

  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      fe_state <= FE_IDLE;
      fe_pc <= '0;
      fe_left <= fe_limit;
      {fe_page, fe_off} <= AXI_AW'(insns_addr);
      fe_end <= 1'b0;
      fe_n <= '0;
      fe_beat <= '0;
      fe_buf <= '0;
      {fe_hi_v, fe_last, fe_k, fe_skip} <= '0;
    end else begin
      if (ifq_wr && q_end) fe_end <= 1'b1;
      if (fe_take) begin
        fe_pc <= fe_pc + 32'd1;
        fe_left <= fe_left - 32'd1;
      end
      if (fetch_ddr) begin
        case (fe_state)
          FE_IDLE:
            if (fe_more && fe_go_q && !fq_v && !fq2_v) begin
              fe_n <= fe_n_q;
              fe_state <= FE_REQ;
            end
          FE_REQ: fe_state <= FE_AR;
          FE_AR:
            if (fe_ar_ok) begin
              fe_state <= FE_R;
              fe_beat <= '0;
              {fe_k, fe_last, fe_skip} <= {fe_n, 1'b0, fe_odd};
            end
          FE_R: begin
            if (fe_insn_done) fe_k <= fe_k - 4'd1;
            if (fe_take) begin
              // the next instruction's address: the page number counts when the offset wraps
              fe_off <= fe_off + PG_W'(INSN_BITS / 8);
              if (&fe_off[PG_W-1:$clog2(INSN_BITS / 8)]) fe_page <= fe_page + 1'b1;
            end
            if (IPB == 2) begin
              if (fe_beat_ok) begin
                fe_hi <= rd2[2*INSN_BITS-1:INSN_BITS];
                fe_hi_v <= fe_skip || fe_k >= 4'd2;
                fe_skip <= 1'b0;
                fe_last <= rlast;
                if (rlast && !fe_skip && fe_k < 4'd2) fe_state <= FE_REL;
              end else if (fe_hi_v) begin
                fe_hi_v <= 1'b0;
                if (fe_last) fe_state <= FE_REL;
              end
            end else if (fe_beat_ok) begin
              fe_buf <= fe_next_buf;
              fe_beat <= fe_beat + 8'd1;
              if (rlast) fe_state <= FE_REL;
            end
          end
          FE_REL: fe_state <= FE_IDLE;
          default: fe_state <= FE_IDLE;
        endcase
      end
    end
  end

  // ======================================================================================= dispatch
  logic lq_wr, cq_wr, sq_wr, lq_full, cq_full, sq_full;
  logic [$clog2(MQ_DEPTH):0] lq_count, cq_count, sq_count;
  sync_fifo #(.W(INSN_BITS), .DEPTH(MQ_DEPTH)) u_lq (
    .clk, .rst_n, .clr, .wr(lq_wr), .wdata(d_insn), .rd(lq_rd), .rdata(lq_rdata), .empty(lq_empty),
    .full(lq_full), .count(lq_count));
  sync_fifo #(.W(INSN_BITS), .DEPTH(MQ_DEPTH)) u_cq (
    .clk, .rst_n, .clr, .wr(cq_wr), .wdata(d_insn), .rd(cq_rd), .rdata(cq_rdata), .empty(cq_empty),
    .full(cq_full), .count(cq_count));
  sync_fifo #(.W(INSN_BITS), .DEPTH(MQ_DEPTH)) u_sq (
    .clk, .rst_n, .clr, .wr(sq_wr), .wdata(d_insn), .rd(sq_rd), .rdata(sq_rdata), .empty(sq_empty),
    .full(sq_full), .count(sq_count));

  logic disp_end;             // END dispatched
  logic disp_first;           // no instruction dispatched yet this run
  wire d_bad = ifq_rdata[INSN_BITS + 5];
  wire d_config = ifq_rdata[INSN_BITS + 4];
  wire d_end = ifq_rdata[INSN_BITS + 3];
  wire d_to_ld = ifq_rdata[INSN_BITS + 2];
  wire d_to_cp = ifq_rdata[INSN_BITS + 1];
  wire d_to_st = ifq_rdata[INSN_BITS];
  wire [INSN_BITS-1:0] d_insn = ifq_rdata[INSN_BITS-1:0];
  logic ill_c, cfgm_c;
  always_comb begin
    lq_wr = 1'b0;
    cq_wr = 1'b0;
    sq_wr = 1'b0;
    ifq_rd = 1'b0;
    ill_c = 1'b0;
    cfgm_c = 1'b0;
    if (run && !stop && !illegal && !cfg_missing && !disp_end && !ifq_empty) begin
      if (d_bad) begin
        ill_c = 1'b1;
        ifq_rd = 1'b1;
      end else if (disp_first && !d_config) begin
        cfgm_c = 1'b1;
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
  // ILLEGAL_OPCODE / CONFIG_MISSING registered (raised the cycle after; no dispatch meanwhile, then stop)
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      disp_end <= 1'b0;
      disp_first <= 1'b1;
      illegal <= 1'b0;
      cfg_missing <= 1'b0;
    end else begin
      illegal <= ill_c;
      cfg_missing <= cfgm_c;
      if (sq_wr && d_end) disp_end <= 1'b1;
      if (lq_wr || cq_wr || sq_wr) disp_first <= 1'b0;
    end
  end
  assign no_end = run && !stop && !fe_end && fe_left == 0 && fe_state == FE_IDLE && !fq_v && !fq2_v && ifq_empty
                  && !disp_end;
  assign fe_idle = fe_state == FE_IDLE;
  assign fe_exhausted = !fe_more && !fq_v && !fq2_v && ifq_empty && !disp_end;
  assign insn_moved = fe_take || fq_v || ifq_wr || ifq_rd;
  assign queues_empty = lq_empty && cq_empty && sq_empty;
  wire unused = &{1'b0, lq_count, cq_count, sq_count, ifq_full, insns_addr[63:AXI_AW], 1'b0};
endmodule
`default_nettype wire
