// Instruction fetch and dispatch. Fetch: from the $readmemh instruction ROM (fetch_ddr = 0, one instruction per
// cycle) or from DDR at insns_addr (fetch_ddr = 1: bursts of up to FETCH_BURST instructions, not across an
// AXI_BOUNDARY, only while the fetch FIFO has room for a whole burst), n_insns (or ROM_WORDS) instructions at most,
// none after END. Dispatch: the head of the fetch FIFO goes to the LOAD (CONFIG, LOAD), COMPUTE (NOP, COMPUTE,
// SYNC) or STORE module (POST, STORE, END) queue, one per cycle, until END.
// Errors found here: ILLEGAL_OPCODE (opcode outside the ISA, non-zero bits above its format (UNUSED_MASKS), a
// token flag towards a neighbour the module lacks), CONFIG_MISSING (first instruction not CONFIG), NO_END (the
// fetch ran off the program's end without an END, every fetched instruction dispatched).
// Prefixes: fe_ fetch, ifq_ fetched-instruction FIFO, d_ the instruction at the head of it (dispatch),
// lq_ / cq_ / sq_ the LOAD / COMPUTE / STORE module queues.
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
  output logic                  illegal,        // ILLEGAL_OPCODE this cycle
  output logic                  cfg_missing,    // CONFIG_MISSING this cycle
  output logic                  no_end,         // NO_END
  output logic                  fe_idle,
  output logic                  fe_exhausted,   // nothing more to fetch, nothing left to dispatch, no END
  output logic                  insn_moved,     // an instruction fetched or dispatched this cycle
  output logic                  queues_empty    // the three module queues
);
  localparam int BEATS_PER_INSN = INSN_BITS / AXI_DW;
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

  // ======================================================================================= fetch
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
  logic [31:0] fe_left, fe_to_bound, fe_cnt;
  always_comb begin
    fe_left = fe_limit - fe_pc;
    fe_to_bound = (32'(AXI_BOUNDARY) - 32'(fe_addr[$clog2(AXI_BOUNDARY)-1:0])) / 32'(INSN_BITS / 8);
    fe_cnt = 32'(FETCH_BURST);
    if (fe_left < fe_cnt) fe_cnt = fe_left;
    if (fe_to_bound < fe_cnt) fe_cnt = fe_to_bound;
  end
  assign fe_arvalid = fe_state == FE_AR;
  assign fe_araddr = fe_addr;
  assign fe_arlen = 8'(32'(fe_n) * 32'(BEATS_PER_INSN) - 32'd1);
  assign fe_rready = fe_state == FE_R;
  wire [INSN_BITS-1:0] fe_next_buf = (fe_buf >> AXI_DW) | (INSN_BITS'(rdata) << (INSN_BITS - AXI_DW));
  wire fe_beat_ok = fe_state == FE_R && fe_rvalid;
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
            if (rlast) fe_state <= FE_REL;
          end
        FE_REL: fe_state <= FE_IDLE;
        default: fe_state <= FE_IDLE;
      endcase
    end
  end

  // ======================================================================================= dispatch
  logic lq_wr, cq_wr, sq_wr, lq_full, cq_full, sq_full;
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
  wire [3:0] d_op = ifq_rdata[H_OPCODE_LSB +: H_OPCODE_W];
  function automatic logic [INSN_BITS-1:0] unused_mask(input logic [3:0] op);
    unused_mask = '0;
    for (int k = 0; k < N_OPCODES; k++)
      if (32'(op) == k) unused_mask = UNUSED_MASKS[k * INSN_BITS +: INSN_BITS];
  endfunction
  wire d_to_ld = d_op == OP_CONFIG || d_op == OP_LOAD;
  wire d_to_cp = d_op == OP_NOP || d_op == OP_COMPUTE || d_op == OP_SYNC;
  wire d_to_st = d_op == OP_POST || d_op == OP_STORE || d_op == OP_END;
  // malformed: an opcode outside the ISA, bits above its format, a token flag towards a neighbour its module does
  // not have (LOAD module: no prev, STORE module: no next)
  wire d_bad = 32'(d_op) >= 32'(N_OPCODES) || (ifq_rdata & unused_mask(d_op)) != '0
               || (d_to_ld && (ifq_rdata[H_POP_PREV_LSB] || ifq_rdata[H_PUSH_PREV_LSB]))
               || (d_to_st && (ifq_rdata[H_POP_NEXT_LSB] || ifq_rdata[H_PUSH_NEXT_LSB]));
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
  assign no_end = run && !stop && !fe_end && fe_pc >= fe_limit && fe_state == FE_IDLE && ifq_empty && !disp_end;
  assign fe_idle = fe_state == FE_IDLE;
  assign fe_exhausted = !fe_more && ifq_empty && !disp_end;
  assign insn_moved = ifq_wr || ifq_rd;
  assign queues_empty = lq_empty && cq_empty && sq_empty;
  wire unused = &{1'b0, lq_count, cq_count, sq_count, 1'b0};
endmodule
`default_nettype wire
