// COMPUTE module: COMPUTE (and NOP / SYNC: tokens only) on the Tn x Tm PE array (rtl/pe_array.sv).
// Issue stage (S0, one (i, ky, kx) step per cycle, addresses kept incrementally), S1: IBUF / WBUF words out of the
// RAMs into the PE array, S2: PE sums (after the product registers), running sums updated, ACC read for the
// read-modify-write of an output word, S3: ACC write. int8: two output pixels (x0, x1 = x0 + 1) per step (packed
// DSP), int16 and bypass: one. int8 accumulation into ACC (acc_init = 0) of a K = ig*kh*kw = 1 instruction issues
// every other cycle (cp_alt: the two ACC ports serve both pixels' read and write).
// Legend: cp_s1_ / cp_s2_ / cp_s3_ pipeline stage registers; aw0 / aw1 ACC words of pixel x0 / x1; cp_k_ range
// check extents; bypass: a copy of IBUF elements through the accumulators (Tm elements from two IBUF words).
`default_nettype none
module compute
  import accel_pkg::*;
(
  input  wire                   clk,
  input  wire                   rst_n,
  input  wire                   clr,
  input  wire                   run,
  input  wire                   stop,
  input  wire                   prec16,
  input  wire [INSN_BITS-1:0]   cq_rdata,
  input  wire                   cq_empty,
  output logic                  cq_rd,
  input  wire                   has_l2c,
  input  wire                   has_s2c,
  output logic                  pop_l2c,
  output logic                  pop_s2c,
  output logic                  push_c2l,
  output logic                  push_c2s,
  output logic                  oob,            // OUT_OF_RANGE this cycle
  output logic                  idle,
  output logic                  pe_busy,        // computing (C_RUN; debug counter)
  // buffer reads: both banks (bank b at [b * width +: width])
  input  wire [2*16*TN-1:0]     ib_rd_a,
  input  wire [2*16*TN-1:0]     ib_rd_b,
  input  wire [2*16*WL-1:0]     wb_rd,
  input  wire [2*ACC_W*TM-1:0]  acc_rd_a,
  input  wire [2*ACC_W*TM-1:0]  acc_rd_b,
  output logic [IB_AW-1:0]      cp_ib_a,        // IBUF read words, ports A / B
  output logic [IB_AW-1:0]      cp_ib_b,
  output logic [WB_AW-1:0]      cp_wb_a,        // WBUF read word
  // ACC read-modify-write: read words at S2 (aw0 port A, aw1 port B), write at S3
  output logic                  cp_acc_bank,
  output logic                  cp_wr,
  output logic                  cp_s3_two,
  output logic [AC_AW-1:0]      cp_s2_aw0, cp_s2_aw1, cp_s3_aw0, cp_s3_aw1,
  output logic [TM*ACC_W-1:0]   cp_wd0, cp_wd1
);
  // Issue stage (S0, one (i, ky, kx) step per cycle, addresses kept incrementally), S1: IBUF / WBUF words out of
  // the RAMs into the PE array, S2: PE sums (after the product registers), running sums updated, ACC read for
  // the read-modify-write of an output word, S3: ACC write. int8 accumulation into ACC (acc_init = 0) of a
  // K = ig*kh*kw = 1 instruction issues every other cycle (the two ACC ports serve both pixels' read and write).
  typedef enum logic [2:0] {C_IDLE, C_SETUP, C_RUN, C_DRAIN, C_DONE} cp_state_t;
  cp_state_t cp_state;
  logic [INSN_BITS-1:0] cp_ins;
  assign      cp_acc_bank = cp_ins[F_COMPUTE_ACC_BANK_LSB +: F_COMPUTE_ACC_BANK_W];
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
               && !(cq_rdata[H_POP_PREV_LSB] && !has_l2c) && !(cq_rdata[H_POP_NEXT_LSB] && !has_s2c);
  assign cq_rd = cp_go;
  assign pop_l2c = cp_go && cq_rdata[H_POP_PREV_LSB];
  assign pop_s2c = cp_go && cq_rdata[H_POP_NEXT_LSB];
  assign push_c2l = cp_state == C_DONE && cp_ins[H_PUSH_PREV_LSB];
  assign push_c2s = cp_state == C_DONE && cp_ins[H_PUSH_NEXT_LSB];
  // output pixels this step: 2 in int8 (packed DSP), 1 in int16 and bypass
  wire cp_two = !prec16 && !cp_bypass && cp_ox + 32'd1 < cp_ow;
  wire cp_first = cp_i == 0 && cp_ky == 0 && cp_kx == 0;
  wire cp_last = cp_bypass || (cp_kx + 32'd1 >= cp_kw && cp_ky + 32'd1 >= cp_kh && cp_i + 32'd1 >= cp_ig);
  wire cp_issue = cp_state == C_RUN && !(cp_alt && cp_issued);
  wire [31:0] cp_iw0 = cp_pw + cp_off;
  wire [31:0] cp_bw = cp_pw + (cp_bo >> LOG2_TN);                       // bypass: first IBUF word of the o group
  assign cp_ib_a = IB_AW'(cp_bypass ? cp_bw : cp_iw0);
  assign cp_ib_b = IB_AW'(cp_bypass ? cp_bw + 32'd1 : cp_iw0 + cp_sig);
  assign cp_wb_a = WB_AW'(cp_ww);

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
  assign oob = cp_chk2 && (cp_k_win || cp_k_iend > 40'(prec16 ? IBUF_WORDS16 : IBUF_WORDS8)
                              || cp_k_nw > 40'(ACC_WORDS)
                              || (cp_bypass ? cp_k_byp : cp_k_wend > 40'(prec16 ? WBUF_WORDS16 : WBUF_WORDS8)));

  // ---- pipeline
  logic cp_s1_v, cp_s1_first, cp_s1_last, cp_s1_two;
  logic cp_s2_v, cp_s2_first, cp_s2_last, cp_s2_two;
  logic cp_s3_v, cp_s3_last;
  logic [AC_AW-1:0] cp_s1_aw0, cp_s1_aw1;
  logic [31:0] cp_s1_boff;                             // bypass: lane of the first element
  wire [TN*16-1:0] ib_a = ib_rd_a[16 * TN * cp_ibuf_bank +: 16 * TN];    // the read words of the banks in use
  wire [TN*16-1:0] ib_b = ib_rd_b[16 * TN * cp_ibuf_bank +: 16 * TN];
  wire [WL*16-1:0] wb = wb_rd[16 * WL * cp_wbuf_bank +: 16 * WL];
  wire [TM*ACC_W-1:0] acc_a = acc_rd_a[ACC_W * TM * cp_acc_bank +: ACC_W * TM];
  wire [TM*ACC_W-1:0] acc_b = acc_rd_b[ACC_W * TM * cp_acc_bank +: ACC_W * TM];
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
    {cp_s2_first, cp_s2_last, cp_s2_two, cp_s2_aw0, cp_s2_aw1}
      <= {cp_s1_first, cp_s1_last, cp_s1_two, cp_s1_aw0, cp_s1_aw1};
    {cp_s3_last, cp_s3_two, cp_s3_aw0, cp_s3_aw1} <= {cp_s2_last, cp_s2_two, cp_s2_aw0, cp_s2_aw1};
    cp_byp_q <= cp_byp;
  end
  always_comb begin
    for (int m = 0; m < TM; m++) begin
      logic [31:0] rel;
      rel = cp_s1_boff + 32'(m);
      cp_byp[16 * m +: 16] = rel < 32'(TN) ? ib_a[16 * LOG2_TN'(rel) +: 16]
                                           : ib_b[16 * LOG2_TN'(rel) +: 16];
    end
  end
  pe_array u_pe (
    .clk, .p16(prec16), .x0(ib_a), .x1(cp_s1_two ? ib_b : '0),
    .w(wb), .sum0(pe_sum0), .sum1(pe_sum1));
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
  assign cp_wr = cp_s3_v && cp_s3_last;
  always_comb begin
    for (int m = 0; m < TM; m++) begin
      cp_wd0[ACC_W * m +: ACC_W] = cp_acc_init ? cp_run0[m] : cp_run0[m] + signed'(acc_a[ACC_W * m +: ACC_W]);
      cp_wd1[ACC_W * m +: ACC_W] = cp_acc_init ? cp_run1[m] : cp_run1[m] + signed'(acc_b[ACC_W * m +: ACC_W]);
    end
  end
  assign idle = cp_state == C_IDLE;
  assign pe_busy = cp_state == C_RUN;
  wire unused = &{1'b0, cp_ins[H_PUSH_NEXT_LSB], 1'b0};
endmodule
`default_nettype wire
