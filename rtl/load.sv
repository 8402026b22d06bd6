// LOAD module: executes CONFIG (ISA / configuration checks), LOAD (DDR -> IBUF / WBUF / PBUF / TBUF) and PRE (handed
// to rtl/pre_insn.sv: pre_go with the queue head, LD_PRE until pre_done, after PRE's last write response).
// Precision: each LOAD's own prec field (ISA 6: int8 / int16 element bytes and IBUF / WBUF words of that
// precision; PBUF / TBUF records ignore it): decoded from the queue head at the dispatch (the run's bytes), read
// from the instruction register (the buffer extent's bound) and registered into the data side's constants (rq_p16)
// in LD_SETUP; the data side is empty before the LOAD completes, so each LOAD's beats are written in its own.
// Address side (here): seg_gen cuts the transfer into segments: the whole transfer (rows and pixels contiguous),
// one row of contiguous pixels, one row span (IBUF only: pixel runs that overlap, 0 < stride < run <= 2 x stride,
// run <= one beat, e.g. the folded first layer: every byte of the span is fetched once), or one pixel run; one
// burst address per cycle, up to LD_OUTST bursts in flight, each burst's descriptor to the data side.
// Data side: rtl/load_rd.sv (beat FIFO, registered rready, one chunk of a beat per cycle: the beat's bytes of one
// pixel run that touch each lane memory at most once; span segments: two whole runs per cycle from a two-beat
// window) and rtl/load_wr.sv (write formatting in registered stages): LD_DATA_STAGES cycles from a beat's arrival
// to its last write; the LOAD completes when the data side is empty.
// Range checks (OUT_OF_RANGE): extents computed in LD_SETUP, compared in the first LD_RUN cycle (no address yet).
// LD_SETUP takes LD_SETUP_CYC cycles: its multiplies are registered shift-and-add trees (rtl/mul_tree.sv)
// free-running on the instruction register, the extents' sums carry-select adds (accel_pkg addr_add), the compares
// split so that no carry chain passes 32 bits; the data side's constants (rq_*) are registered there too.
`default_nettype none
module load
  import accel_pkg::*;
(
  input  wire                   clk,
  input  wire                   rst_n,
  input  wire                   clr,
  input  wire                   run,
  input  wire                   stop,
  input  wire [4*64-1:0]        base_addrs,
  input  wire [4*32-1:0]        ddr_sizes,
  input  wire [INSN_BITS-1:0]   lq_rdata,
  input  wire                   lq_empty,
  output logic                  lq_rd,
  input  wire                   has_c2l,
  output logic                  pop_c2l,
  output logic                  push_l2c,
  output logic                  cfg_err_isa,    // ISA_VERSION_MISMATCH this cycle
  output logic                  cfg_err_cfg,    // CONFIG_MISMATCH this cycle
  output logic                  oob,            // OUT_OF_RANGE this cycle
  output logic                  idle,
  output logic                  pre_go,         // PRE: the queue head (lq_rdata) starts rtl/pre_insn.sv
  input  wire                   pre_done,       // PRE finished (its last write acknowledged, or refused)
  // read channel (through axi_rd_arb)
  output logic                  arvalid,
  output logic [63:0]           araddr,
  output logic [7:0]            arlen,
  input  wire                   ar_ok,
  input  wire                   rvalid,
  output logic                  rready,
  input  wire [AXI_DW-1:0]      rdata,
  input  wire                   rlast,
  // buffer writes (bank ld_bank)
  output logic                  bank,
  output logic [2*2*TN-1:0]     ibw_we,         // IBUF port A at [0 +: 2*TN], port B at [2*TN +: 2*TN]
  output logic [2*16*TN-1:0]    ibw_data,
  output logic [2*IB_AW*TN-1:0] ibw_row,
  output logic [2*WL-1:0]       wbw_we,
  output logic [16*WL-1:0]      wbw_data,
  output logic [WB_AW-1:0]      wbw_row,
  output logic [PARAM_BYTES*TM-1:0] pbw_we,
  output logic [PARAM_BYTES*TM-1:0] tbw_we,
  output logic [PREC_W*TM-1:0]  pbw_data,       // (PBUF and TBUF records)
  output logic [PW_AW*TM-1:0]   pbw_row
);
  typedef enum logic [2:0] {LD_IDLE, LD_SETUP, LD_RUN, LD_WAIT, LD_DONE, LD_PRE} ld_state_t;
  ld_state_t ld_state;
  logic [INSN_BITS-1:0] ld_ins;
  wire [1:0]  ld_buf = ld_ins[F_LOAD_BUF_LSB +: F_LOAD_BUF_W];
  assign bank = ld_ins[F_LOAD_BANK_LSB +: F_LOAD_BANK_W];
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
  wire        ld_p16 = 32'(ld_ins[F_LOAD_PREC_LSB +: F_LOAD_PREC_W]) == PREC_INT16;   // the LOAD's precision
  // decoded at the dispatch from the queue head (valid with ld_ins): the buffer, the bytes of a run, the element /
  // record index step per pixel (so that the setup multiplies start from registers)
  logic ld_is_pbuf, ld_is_wbuf, ld_is_tbuf;                           // (pbuf: PBUF or TBUF, 16-byte records)
  logic [31:0] ld_run, ld_step;
  wire ld_is_ibuf = !ld_is_pbuf && !ld_is_wbuf;
  logic ld_row_contig, ld_all_contig, ld_span;                        // (set up per instruction)
  logic [63:0] ld_seg_bytes;                                          // bytes of one segment
  logic [31:0] ld_seg_pbstep, ld_run_step;                            // element/entry index step per segment / run
  // DDR address of the transfer, its first element / record index (seg_gen takes them in LD_SETUP)
  wire [63:0] ld_start = 64'(addr_add(AXI_AW'(base_addrs[64 * ld_base_reg +: 64]), AXI_AW'(ld_ddr_offset)));
  wire [31:0] ld_pb_start = ld_is_pbuf ? ld_dst_word
                            : ld_is_wbuf ? (ld_dst_word << LOG2_WL) + ld_dst_elem
                                         : (ld_dst_word << LOG2_TN) + ld_dst_elem;
  logic [$clog2(LD_OUTST):0] ld_outst;                                // bursts issued, last beat not received

  // ---- address side
  logic ld_chk;                                                       // first LD_RUN cycle: range check
  logic [2:0] ld_su;                                                  // setup cycle
  logic ld_bad_buf;                                                   // LOAD.buf names no buffer
  logic sg_take, sg_more, sg_v, sg_blast, sg_first;
  logic [63:0] sg_nxt_addr, sg_cur, sg_start, sg_end;
  logic [31:0] sg_nxt_idx, sg_idx;
  logic [8:0] sg_blen;
  seg_gen u_seg (
    .clk, .rst_n, .clr, .init(ld_state == LD_SETUP), .init_addr(ld_start), .init_idx(ld_pb_start),
    .rows(ld_rows), .cols(ld_cols), .row_stride(ld_row_stride), .pix_stride(ld_pix_stride),
    .all_seg(ld_all_contig), .row_seg(ld_row_contig || ld_span), .seg_bytes(ld_seg_bytes), .idx_step(ld_seg_pbstep),
    .en(ld_state == LD_RUN && !oob), .fire(ar_ok), .take(sg_take), .nxt_addr(sg_nxt_addr), .nxt_idx(sg_nxt_idx),
    .more(sg_more), .seg_v(sg_v), .cur(sg_cur), .blen(sg_blen), .blast(sg_blast), .first(sg_first),
    .seg_start(sg_start), .seg_end(sg_end), .seg_idx(sg_idx));
  assign arvalid = ld_state == LD_RUN && sg_v && 32'(ld_outst) < 32'(LD_OUTST);
  assign araddr = sg_cur;
  assign arlen = 8'(sg_blen - 9'd1);
  // burst descriptors (load_rd): {first valid byte of its first beat (segment's first burst, else 0), the bytes of
  // the segment's last beat, the burst is the segment's last, element index of the segment, first burst}
  localparam int PW_ = BYTE_POS_W;
  wire [PW_-1:0] sg_lo0 = sg_first ? PW_'(sg_start[LOG2_BYTES-1:0]) : '0;
  wire [PW_-1:0] sg_hil = sg_end[LOG2_BYTES-1:0] == '0 ? PW_'(AXI_BYTES) : PW_'(sg_end[LOG2_BYTES-1:0]);
  logic ld_last_fire, rd_busy, wr_busy;

  wire [3:0] lq_op = lq_rdata[H_OPCODE_LSB +: H_OPCODE_W];
  wire ld_go = ld_state == LD_IDLE && run && !stop && !lq_empty && !(lq_rdata[H_POP_NEXT_LSB] && !has_c2l);
  assign lq_rd = ld_go;
  assign pre_go = ld_go && lq_op == OP_PRE;
  assign pop_c2l = ld_go && lq_rdata[H_POP_NEXT_LSB];
  assign push_l2c = ld_state == LD_DONE && ld_ins[H_PUSH_NEXT_LSB];
  assign idle = ld_state == LD_IDLE;
  // CONFIG's checks: compared on the queue head into registers every cycle (those of the instruction taken are
  // there in its LD_DONE cycle), raised in LD_DONE (before its token, if any, is pushed)
  logic ck_isa, ck_cfg;
  always_ff @(posedge clk) begin
    if (ld_go) begin
      logic [1:0] b;
      logic [31:0] el, dp;
      logic p16;
      b = lq_rdata[F_LOAD_BUF_LSB +: F_LOAD_BUF_W];
      el = 32'(lq_rdata[F_LOAD_ELEMS_LSB +: F_LOAD_ELEMS_W]);
      dp = 32'(lq_rdata[F_LOAD_DST_PITCH_LSB +: F_LOAD_DST_PITCH_W]);
      p16 = 32'(lq_rdata[F_LOAD_PREC_LSB +: F_LOAD_PREC_W]) == PREC_INT16;
      ld_is_pbuf <= 32'(b) == BUF_PBUF || 32'(b) == BUF_TBUF;
      ld_is_tbuf <= 32'(b) == BUF_TBUF;
      ld_is_wbuf <= 32'(b) == BUF_WBUF;
      ld_run <= (32'(b) == BUF_PBUF || 32'(b) == BUF_TBUF) ? el << LOG2_PB : (p16 ? el << 1 : el);
      ld_step <= (32'(b) == BUF_PBUF || 32'(b) == BUF_TBUF) ? el : 32'(b) == BUF_WBUF ? dp << LOG2_WL : dp << LOG2_TN;
    end
    ck_isa <= 32'(lq_rdata[F_CONFIG_ISA_VERSION_LSB +: F_CONFIG_ISA_VERSION_W]) != ISA_VERSION;
    ck_cfg <= 32'(lq_rdata[F_CONFIG_TN_LSB +: F_CONFIG_TN_W]) != TN
              || 32'(lq_rdata[F_CONFIG_TM_LSB +: F_CONFIG_TM_W]) != TM
              || lq_rdata[F_CONFIG_CONFIG_ID_LSB +: F_CONFIG_CONFIG_ID_W] != CONFIG_ID;
  end
  wire ld_cfg_done = ld_state == LD_DONE && ld_ins[H_OPCODE_LSB +: H_OPCODE_W] == OP_CONFIG;
  assign cfg_err_isa = ld_cfg_done && ck_isa;
  assign cfg_err_cfg = ld_cfg_done && !ck_isa && ck_cfg;

  // ---- setup values, free-running on ld_ins (valid from the first LD_SETUP cycle, 1): the cycle each is valid in
  localparam int RUN_W = F_LOAD_ELEMS_W + LOG2_PB;                    // bytes of a run
  localparam int STEP_W = F_LOAD_DST_PITCH_W + (LOG2_WL > LOG2_TN ? LOG2_WL : LOG2_TN);
  logic [F_LOAD_ROWS_W-1:0] su_rows1;                                 // 2: rows - 1
  logic [F_LOAD_COLS_W-1:0] su_cols1;                                 // 2: cols - 1
  logic su_rc, su_ac, su_sp0, su_sp;                                  // 3, 5, 3, 6
  logic [RUN_W-1:0] su_run;                                           // 2: bytes of a run
  logic su_sp_ok;                                                     // 2: span conditions not on the run
  logic su_rseq;                                                      // 4: row_stride == run * cols
  logic [31:0] su_rowbytes, su_colstep, su_tot, su_segall;            // 3, 3, 5, 5
  logic [31:0] su_spanp, su_rsr;                                      // 4, 4
  logic su_rowbytes_ov, su_tot_ov, su_segall_ov, su_spanp_ov, su_rsr_ov;   // one cycle after their products
  logic [AXI_AW-1:0] su_span;                                         // 5: pix_stride * (cols - 1) + run
  logic [AXI_AW-1:0] su_e1, su_e2, su_e3;                             // 5, 5, 6: the DDR extent's sums
  logic su_ddr_oob;                                                   // 7
  logic [31:0] su_pb, su_k0;                                          // 2: first element / record; 3: + elems
  logic [AXI_AW-1:0] su_nstep;                                        // 2: -step
  logic [AXI_AW-1:0] su_k1, su_b;                                     // 4: that - step; 6: + tot (the buffer extent)
  logic su_buf_oob;                                                   // 7
  // (buffer capacity in the LOAD's index space: PBUF / TBUF records and WBUF elements at their 2^k lane pitch)
  wire [31:0] ld_buf_cap = ld_is_pbuf ? (ld_is_tbuf ? 32'(TB_D * TM_PITCH) : 32'(PB_D * TM_PITCH))
                           : ld_is_wbuf ? 32'(ld_p16 ? WBUF_WORDS16 : WBUF_WORDS8) << LOG2_WL
                                        : 32'(ld_p16 ? IBUF_WORDS16 : IBUF_WORDS8) << LOG2_TN;
  mul_tree #(.AW(RUN_W), .BW(F_LOAD_COLS_W), .PW(32)) u_rb (
    .clk, .a(RUN_W'(ld_run)), .b(F_LOAD_COLS_W'(ld_cols)), .p(su_rowbytes), .ovf(su_rowbytes_ov));
  /* verilator lint_off PINCONNECTEMPTY */
  mul_tree #(.AW(STEP_W), .BW(F_LOAD_COLS_W), .PW(32)) u_cs (
    .clk, .a(STEP_W'(ld_step)), .b(F_LOAD_COLS_W'(ld_cols)), .p(su_colstep), .ovf());
  /* verilator lint_on PINCONNECTEMPTY */
  mul_tree #(.AW(32), .BW(F_LOAD_ROWS_W), .PW(32)) u_tot (
    .clk, .a(su_colstep), .b(F_LOAD_ROWS_W'(ld_rows)), .p(su_tot), .ovf(su_tot_ov));
  mul_tree #(.AW(32), .BW(F_LOAD_ROWS_W), .PW(32)) u_sa (
    .clk, .a(su_rowbytes), .b(F_LOAD_ROWS_W'(ld_rows)), .p(su_segall), .ovf(su_segall_ov));
  mul_tree #(.AW(F_LOAD_PIX_STRIDE_W), .BW(F_LOAD_COLS_W), .PW(32)) u_sp (
    .clk, .a(F_LOAD_PIX_STRIDE_W'(ld_pix_stride)), .b(su_cols1), .p(su_spanp), .ovf(su_spanp_ov));
  mul_tree #(.AW(F_LOAD_ROW_STRIDE_W), .BW(F_LOAD_ROWS_W), .PW(32)) u_rs (
    .clk, .a(F_LOAD_ROW_STRIDE_W'(ld_row_stride)), .b(su_rows1), .p(su_rsr), .ovf(su_rsr_ov));
  always_ff @(posedge clk) begin
    su_rows1 <= F_LOAD_ROWS_W'(ld_rows) - 1'b1;
    su_cols1 <= F_LOAD_COLS_W'(ld_cols) - 1'b1;
    su_run <= RUN_W'(ld_run);
    su_rc <= ld_cols == 1 || ld_pix_stride == 64'(su_run);
    su_rseq <= ld_row_stride == 64'(su_rowbytes);
    su_ac <= su_rc && (ld_rows == 1 || (!su_rowbytes_ov && su_rseq));
    // row span (generator/spec/timing.py use_span): IBUF runs that overlap, fit one beat and the lanes, and whose
    // span takes no more beats than the runs one by one
    su_sp_ok <= ld_is_ibuf && ld_pix_stride != 0 && ld_elems <= 32'(TN) && ld_dst_pitch != 0;
    su_sp0 <= !(ld_cols == 1 || ld_pix_stride == 64'(su_run)) && su_sp_ok && ld_pix_stride < 64'(su_run)
              && 64'(su_run) <= ld_pix_stride << 1 && su_run <= RUN_W'(AXI_BYTES);
    su_span <= addr_add(AXI_AW'(su_spanp), AXI_AW'(ld_run));
    // ceil(span / AXI_BYTES) <= cols, as span <= cols * AXI_BYTES
    su_sp <= su_sp0 && !su_spanp_ov && su_span[AXI_AW-1:32] == '0
             && su_span[31:0] <= 32'(F_LOAD_COLS_W'(ld_cols)) << LOG2_BYTES;
    su_e1 <= addr_add(AXI_AW'(ld_ddr_offset), AXI_AW'(su_rsr));
    su_e2 <= addr_add(AXI_AW'(su_spanp), AXI_AW'(ld_run));
    su_e3 <= addr_add(su_e1, su_e2);
    su_ddr_oob <= su_rsr_ov || su_spanp_ov || su_e3[AXI_AW-1:32] != '0
                  || su_e3[31:0] > ddr_sizes[32 * ld_base_reg +: 32];
    // the buffer extent: first element + tot - step + elems, in that order of availability
    su_pb <= ld_pb_start;                             // (its own carry chain, then + elems: one chain per path)
    su_k0 <= su_pb + ld_elems;
    su_nstep <= {{(AXI_AW - 32){ld_step != 0}}, 32'd0 - ld_step};     // -step on AXI_AW bits
    su_k1 <= addr_add(AXI_AW'(su_k0), su_nstep);
    su_b <= addr_add(su_k1, AXI_AW'(su_tot));
    su_buf_oob <= su_tot_ov || su_b[AXI_AW-1:32] != '0 || su_b[31:0] > ld_buf_cap;
  end
  wire unused_su = &{1'b0, su_segall_ov, 1'b0};
  assign oob = ld_chk && (ld_bad_buf || su_ddr_oob || su_buf_oob);

  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      ld_state <= LD_IDLE;
      ld_ins <= '0;
      {ld_row_contig, ld_span, ld_all_contig} <= '0;
      {ld_seg_bytes, ld_seg_pbstep, ld_run_step} <= '0;
      ld_chk <= 1'b0;
      ld_su <= '0;
      ld_bad_buf <= 1'b0;
    end else begin
      ld_chk <= ld_state == LD_SETUP && ld_su == 3'(LD_SETUP_CYC - 1);
      case (ld_state)
        LD_IDLE:
          if (ld_go) begin
            ld_ins <= lq_rdata;
            ld_su <= '0;
            ld_state <= lq_op == OP_PRE ? LD_PRE : LD_DONE;
            if (lq_op == OP_LOAD && lq_rdata[F_LOAD_ROWS_LSB +: F_LOAD_ROWS_W] != 0
                         && lq_rdata[F_LOAD_COLS_LSB +: F_LOAD_COLS_W] != 0
                         && lq_rdata[F_LOAD_ELEMS_LSB +: F_LOAD_ELEMS_W] != 0) begin
              ld_state <= LD_SETUP;
            end
          end
        LD_SETUP: begin                                 // segment constants (registered above), LD_SETUP_CYC cycles
          ld_su <= ld_su + 1'b1;
          ld_row_contig <= su_rc;
          ld_all_contig <= su_ac;
          ld_span <= su_sp;
          ld_seg_bytes <= su_ac ? 64'(su_segall) : su_rc ? 64'(su_rowbytes) : su_sp ? 64'(su_span) : 64'(ld_run);
          ld_seg_pbstep <= su_ac ? su_tot : (su_rc || su_sp) ? su_colstep : ld_step;
          ld_bad_buf <= !ld_is_pbuf && !ld_is_wbuf && 32'(ld_buf) != BUF_IBUF;
          ld_run_step <= ld_step;
          if (ld_su == 3'(LD_SETUP_CYC - 1)) ld_state <= LD_RUN;
        end
        LD_RUN:                                         // one segment set up, or one burst address, per cycle
          if (oob) ld_state <= LD_WAIT;                 // refused: nothing issued
          else if (!sg_v && !sg_more) ld_state <= LD_WAIT;   // every segment issued
        LD_WAIT: if (ld_outst == 0 && !rd_busy && !wr_busy) ld_state <= LD_DONE;
        LD_DONE: ld_state <= LD_IDLE;
        LD_PRE: if (pre_done) ld_state <= LD_DONE;
        default: ld_state <= LD_IDLE;
      endcase
    end
  end

  // ---- data side: constants of the LOAD (registered in LD_SETUP), load_rd, load_wr
  localparam int SPD_W = LOG2_BYTES + 4;
  logic rq_wbuf, rq_pbuf, rq_ibuf, rq_tbuf, rq_p16;
  logic [RUN_W-1:0] rq_run;
  logic [F_LOAD_COLS_W-1:0] rq_cols;
  logic [SPD_W-1:0] rq_stride;
  always_ff @(posedge clk) begin
    if (ld_state == LD_SETUP) begin
      {rq_ibuf, rq_wbuf, rq_pbuf, rq_tbuf} <= {ld_is_ibuf, ld_is_wbuf, ld_is_pbuf, ld_is_tbuf};
      rq_p16 <= ld_p16;
      rq_run <= RUN_W'(ld_run);
      rq_cols <= F_LOAD_COLS_W'(ld_cols);
      rq_stride <= SPD_W'(ld_pix_stride);
    end
  end
  logic w_chunk, w_span;
  logic [1:0] w_spe;
  logic [AXI_DW-1:0] w_data, w_prev;
  logic [PW_-1:0] w_j0, w_cnt;
  logic [RUN_W-1:0] w_e;
  logic [31:0] w_pb, w_qpb;
  logic [SPD_W-1:0] w_d0;
  load_rd #(.RUN_W(RUN_W), .SPD_W(SPD_W)) u_rd (
    .clk, .rst_n, .clr, .init(ld_state == LD_SETUP), .prec16(rq_p16), .is_wbuf(rq_wbuf), .is_pbuf(rq_pbuf),
    .span(ld_span), .run_bytes(rq_run),
    .run_step(ld_run_step), .cols(rq_cols), .sp_stride(rq_stride),
    .wl_lo(ld_dst_elem[LOG2_WL-1:0]), .dq_wr(ar_ok),
    .dq_wdata({sg_lo0, sg_hil, sg_blast, sg_idx, sg_first}), .rvalid, .rdata, .rlast, .rready,
    .last_fire(ld_last_fire), .busy(rd_busy), .w_chunk, .w_span, .w_spe, .w_data, .w_prev, .w_j0, .w_cnt, .w_e,
    .w_pb, .w_d0, .w_qpb);
  load_wr #(.RUN_W(RUN_W), .SPD_W(SPD_W)) u_wr (
    .clk, .rst_n, .clr, .prec16(rq_p16), .is_ibuf(rq_ibuf), .is_wbuf(rq_wbuf), .is_pbuf(rq_pbuf), .is_tbuf(rq_tbuf),
    .run_bytes(rq_run),
    .run_step(ld_run_step), .sp_stride(rq_stride), .w_chunk, .w_span, .w_spe, .w_data, .w_prev, .w_j0, .w_cnt,
    .w_e, .w_pb, .w_d0, .w_qpb, .busy(wr_busy), .ibw_we, .ibw_data, .ibw_row, .wbw_we, .wbw_data, .wbw_row,
    .pbw_we, .tbw_we, .pbw_data, .pbw_row);

  always_ff @(posedge clk) begin
    if (!rst_n || clr) ld_outst <= '0;
    else ld_outst <= ld_outst + ($clog2(LD_OUTST) + 1)'(ar_ok) - ($clog2(LD_OUTST) + 1)'(ld_last_fire);
  end
  wire unused = &{1'b0, sg_nxt_addr, sg_nxt_idx, sg_take, sg_cur, sg_start[63:LOG2_BYTES], sg_end[63:LOG2_BYTES],
                  1'b0};
endmodule
`default_nettype wire
