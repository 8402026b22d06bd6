// COMPUTE module: COMPUTE (and NOP / SYNC: tokens only) on the Tn x Tm PE array (rtl/pe_array.sv; PUMP = 2:
// rtl/pe_array_2x.sv). Setup (CP_SETUP cycles): the address steps in_cols*ig, ig*stride and in_cols*ig*stride by
// registered shift-and-add multiplies (rtl/mul_tree.sv), the loop counters' reload values, the step plan's pixel
// counts and ACC / IBUF offsets (su_p*, su_og*, su_sig*: registered from the fields or from su_sig, valid by the
// first issue). Pipeline of a step, by stage:
//   0 issue: one (i, ky, kx) step per cycle; down-counters with registered last flags, addresses kept
//     incrementally;  1: the IBUF / WBUF read addresses registered into the RAMs;  2: the words out of the RAMs,
//     bank-selected, registered;  3: into the PE array (int8 pair) and the bypass lanes;  3 + PE_LAT (SR): the PE
//     sums (selected: PE, bypass or emul, registered), the ACC words read for the read-modify-write;
//     SR + 1: the ACC words (bank-selected) and the word's running sums registered;  SR + 2: their sum registered;
//     SR + 3 (NS): ACC written.
// int8: two output pixels (x0, x1 = x0 + 1) per step (packed DSP), int16 and bypass: one; double-pumped (PUMP = 2):
// four / two / one, pair B from IBUF copy 1 (ports C, D), ACC copy c the pixels of column parity c, each by its own
// compute_acc (docs/rtl.md, "COMPUTE on the pumped array"). int8 accumulation into ACC (acc_init = 0): a word's read
// must not fall 3 cycles after the previous word's write: K = ig*kh*kw = 1 issues every other cycle (su_alt), K = 3
// leaves a cycle after each word (su_gap).
// Legend: c_* loop down-counters and l_* their last flags; a_* addresses; su_* setup values; k_* range-check
// extents; q_* stage registers (index = stage); aw0 / aw1 ACC words of pixel x0 / x1; bypass: a copy of IBUF
// elements through the accumulators (Tm elements from two IBUF words). emul (a bypass variant, the element-wise
// product of two tensors): two steps per output word on the bypass path, operand A's lanes (element o*Tm), then
// B's (element b_word*Tn + o*Tm); at stage SR - 3 of B's step the delay line holds both, registered minus their
// zero points (SR - 2: 18-bit DSP48E2 A/B registers), multiplied (SR - 1: M register), SR: P register, the word's
// sum (A's step contributes 0).
// Precision: the COMPUTE's own prec field (cp_p16), read from the instruction register like its banks (replaced
// only once the pipeline has drained, C_DRAIN): the step plan (int8 pixel pairs, q_two with each step), the range
// checks' IBUF / WBUF words, the PE array's mode (delayed there with the operands, rtl/pe_array.sv).
`default_nettype none
module compute
  import accel_pkg::*;
(
  input  wire                   clk,
  input  wire                   clk2x,          // PUMP = 2: the PE array's clock (twice clk, edges aligned)
  input  wire                   rst_n,
  input  wire                   clr,
  input  wire                   run,
  input  wire                   stop,
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
  input  wire [2*16*TN-1:0]     ib_rd_c,        // PUMP = 2: IBUF copy 1, ports A / B (pair B)
  input  wire [2*16*TN-1:0]     ib_rd_d,
  input  wire [2*16*WL-1:0]     wb_rd,          // WB_ONE: the word of bank cp_wb_bank, else both banks'
  input  wire [2*ACC_W*TM-1:0]  acc_rd_a,
  input  wire [2*ACC_W*TM-1:0]  acc_rd_b,
  input  wire [2*ACC_W*TM-1:0]  acc_rd_c,       // PUMP = 2: ACC copy 1, ports A / B
  input  wire [2*ACC_W*TM-1:0]  acc_rd_d,
  output logic [IB_AW-1:0]      cp_ib_a,        // IBUF read words, ports A / B
  output logic [IB_AW-1:0]      cp_ib_b,
  output logic [IB_AW-1:0]      cp_ib_c,        // PUMP = 2: IBUF copy 1's read words
  output logic [IB_AW-1:0]      cp_ib_d,
  output logic [WB_AW-1:0]      cp_wb_a,        // WBUF read word
  output logic                  cp_wb_bank,     // and its bank (the instruction's wbuf_bank at stage 1)
  // ACC read-modify-write: read words at stage SR (s2: aw0 port A, aw1 port B), write at NS = SR + 3 (s3)
  output logic                  cp_acc_bank,
  output logic                  cp_wr,
  output logic                  cp_s3_two,
  output logic [AC_AW-1:0]      cp_s2_aw0, cp_s2_aw1, cp_s3_aw0, cp_s3_aw1,
  output logic [TM*ACC_W-1:0]   cp_wd0, cp_wd1,
  // PUMP = 2: ACC copy 1's read-modify-write (x1, x3; a bypass pixel of an odd column), as copy 0's (x0, x2)
  output logic                  cp_wr_b,
  output logic                  cp_s3_two_b,
  output logic [AC_AW-1:0]      cp_s2_aw2, cp_s2_aw3, cp_s3_aw2, cp_s3_aw3,
  output logic [TM*ACC_W-1:0]   cp_wd2, cp_wd3
);
  localparam int SR = 3 + PE_LAT;                      // stage of the PE sums (registers) and the ACC read
  localparam int NS = SR + ACC_RMW_D;                  // stages after issue (the last one writes ACC)
  if (ACC_RMW_D != 3) begin : g_bad_rmw
    $error("compute: the ACC read-modify-write has 3 stages (RAM read, registered operands, registered sum)");
  end
  localparam int CK_LAT = 8;                           // range check: setup start to verdict (rtl/compute_chk.sv)
  localparam int BO_W = F_COMPUTE_OG_W + LOG2_TM;      // bypass element offset o*Tm
  localparam int BE_W = (BO_W > F_COMPUTE_B_WORD_W + LOG2_TN ? BO_W : F_COMPUTE_B_WORD_W + LOG2_TN) + 1;
  if (PE_LAT < 4) begin : g_bad_emul
    $error("compute: emul takes its operands from the bypass delay line at stage SR - 3 (needs PE_LAT >= 4)");
  end
  localparam int RS_W = F_COMPUTE_IN_COLS_W + F_COMPUTE_IG_W;
  typedef enum logic [2:0] {C_IDLE, C_SETUP, C_RUN, C_DRAIN, C_DONE} cp_state_t;
  (* fsm_encoding = "none" *) cp_state_t cp_state;
  logic [INSN_BITS-1:0] cp_ins;
  assign      cp_acc_bank = cp_ins[F_COMPUTE_ACC_BANK_LSB +: F_COMPUTE_ACC_BANK_W];
  wire        cp_ibuf_bank = cp_ins[F_COMPUTE_IBUF_BANK_LSB +: F_COMPUTE_IBUF_BANK_W];
  wire        cp_wbuf_bank = cp_ins[F_COMPUTE_WBUF_BANK_LSB +: F_COMPUTE_WBUF_BANK_W];
  wire        cp_acc_init = cp_ins[F_COMPUTE_ACC_INIT_LSB +: F_COMPUTE_ACC_INIT_W];
  wire        cp_bypass = cp_ins[F_COMPUTE_BYPASS_LSB +: F_COMPUTE_BYPASS_W];
  wire        cp_emul = cp_bypass && cp_ins[F_COMPUTE_EMUL_LSB +: F_COMPUTE_EMUL_W];
  wire        cp_p16 = 32'(cp_ins[F_COMPUTE_PREC_LSB +: F_COMPUTE_PREC_W]) == PREC_INT16;
  wire [F_COMPUTE_B_WORD_W-1:0] f_b_word = cp_ins[F_COMPUTE_B_WORD_LSB +: F_COMPUTE_B_WORD_W];
  wire [F_COMPUTE_ZA_W-1:0] f_za = cp_ins[F_COMPUTE_ZA_LSB +: F_COMPUTE_ZA_W];
  wire [F_COMPUTE_ZB_W-1:0] f_zb = cp_ins[F_COMPUTE_ZB_LSB +: F_COMPUTE_ZB_W];
  wire [F_COMPUTE_OH_W-1:0] f_oh = cp_ins[F_COMPUTE_OH_LSB +: F_COMPUTE_OH_W];
  wire [F_COMPUTE_OW_W-1:0] f_ow = cp_ins[F_COMPUTE_OW_LSB +: F_COMPUTE_OW_W];
  wire [F_COMPUTE_OG_W-1:0] f_og = cp_ins[F_COMPUTE_OG_LSB +: F_COMPUTE_OG_W];
  wire [F_COMPUTE_IG_W-1:0] f_ig = cp_ins[F_COMPUTE_IG_LSB +: F_COMPUTE_IG_W];
  wire [F_COMPUTE_KH_W-1:0] f_kh = cp_ins[F_COMPUTE_KH_LSB +: F_COMPUTE_KH_W];
  wire [F_COMPUTE_KW_W-1:0] f_kw = cp_ins[F_COMPUTE_KW_LSB +: F_COMPUTE_KW_W];
  wire [F_COMPUTE_STRIDE_W-1:0] f_s = cp_ins[F_COMPUTE_STRIDE_LSB +: F_COMPUTE_STRIDE_W];
  wire [F_COMPUTE_IN_COLS_W-1:0] f_in_cols = cp_ins[F_COMPUTE_IN_COLS_LSB +: F_COMPUTE_IN_COLS_W];
  wire [F_COMPUTE_IBUF_WORD_W-1:0] f_ibuf_word = cp_ins[F_COMPUTE_IBUF_WORD_LSB +: F_COMPUTE_IBUF_WORD_W];
  wire [F_COMPUTE_WBUF_WORD_W-1:0] f_wbuf_word = cp_ins[F_COMPUTE_WBUF_WORD_LSB +: F_COMPUTE_WBUF_WORD_W];
  wire [3:0] cq_op = cq_rdata[H_OPCODE_LSB +: H_OPCODE_W];
  wire cp_go = cp_state == C_IDLE && run && !stop && !cq_empty
               && !(cq_rdata[H_POP_PREV_LSB] && !has_l2c) && !(cq_rdata[H_POP_NEXT_LSB] && !has_s2c);
  assign cq_rd = cp_go;
  assign pop_l2c = cp_go && cq_rdata[H_POP_PREV_LSB];
  assign pop_s2c = cp_go && cq_rdata[H_POP_NEXT_LSB];
  assign push_c2l = cp_state == C_DONE && cp_ins[H_PUSH_PREV_LSB];
  assign push_c2s = cp_state == C_DONE && cp_ins[H_PUSH_NEXT_LSB];

  // ---- setup values, free-running on the instruction register (valid by the last setup cycle): registered
  // shift-and-add multiplies (rtl/mul_tree.sv, 1-2 clocks each; in_cols*ig*s two in series, so CP_SETUP = 3); the
  // loop counters' reload values (count - 1) and whether those are 0
  logic [RS_W-1:0] su_rs;                              // in_cols*ig: IBUF words per input row
  logic [F_COMPUTE_IG_W+F_COMPUTE_STRIDE_W-1:0] su_sig;   // ig*s: per stride pixels
  logic [IB_AW-1:0] su_srow;                           // in_cols*ig*s: per stride rows (mod the IBUF words)
  logic [F_COMPUTE_KW_W-1:0] su_kx1, su_ky1;
  logic [F_COMPUTE_IG_W-1:0] su_i1, su_o1;
  logic [F_COMPUTE_OW_W-1:0] su_x1;                    // steps per row - 1 (int8: pixel pairs)
  logic [F_COMPUTE_OH_W-1:0] su_y1;
  logic su_kx0, su_ky0, su_i0, su_o0, su_x0, su_y0;    // reload value 0: the counter starts at its last
  logic su_pack, su_alt, su_gap;
  // the pixels of a step (int8 2 * PUMP, int16 PUMP, bypass 1) and of a row's last step (r = (ow - 1) mod that + 1):
  // whether it has x1 (su_p1), x2 (su_p2) and x3 (su_p3); ACC / IBUF word steps of a full / the last step
  logic su_p1, su_p2, su_p3;
  logic [AC_AW-1:0] su_og1, su_og3, su_ogb, su_nfull, su_nlast;   // copy 0's second pixel's ACC offset (x1; PUMP 2:
                                                       // x2), 3 og, copy 1's first pixel's (x1; bypass 0), PX og, r og
  logic [IB_AW-1:0] su_sigb, su_sig3, su_pwstep;          // pair B's first pixel's, x3's IBUF offsets; PX ig*s
  if (F_COMPUTE_STRIDE_W > 4 || CP_SETUP < 3) begin : g_sig_lat $error("compute: su_sig* after the setup"); end
  /* verilator lint_off PINCONNECTEMPTY */
  mul_tree #(.AW(F_COMPUTE_IN_COLS_W), .BW(F_COMPUTE_IG_W)) u_rs (.clk, .a(f_in_cols), .b(f_ig), .p(su_rs), .ovf());
  mul_tree #(.AW(F_COMPUTE_IG_W), .BW(F_COMPUTE_STRIDE_W)) u_sig (.clk, .a(f_ig), .b(f_s), .p(su_sig), .ovf());
  mul_tree #(.AW(IB_AW), .BW(F_COMPUTE_STRIDE_W), .PW(IB_AW)) u_srow (
    .clk, .a(IB_AW'(su_rs)), .b(f_s), .p(su_srow), .ovf());
  /* verilator lint_on PINCONNECTEMPTY */
  always_ff @(posedge clk) begin
    su_kx1 <= f_kw - 1'b1;
    su_ky1 <= f_kh - 1'b1;
    su_i1 <= f_ig - 1'b1;
    su_o1 <= f_og - 1'b1;
    su_y1 <= f_oh - 1'b1;
    su_pack <= !cp_p16 && !cp_bypass;
    su_be <= BE_W'(f_b_word) << LOG2_TN;
    su_x1 <= cp_bypass ? f_ow - 1'b1 : (f_ow - 1'b1) >> ($clog2(PUMP) + (cp_p16 ? 0 : 1));
    su_p1 <= !cp_bypass && (PUMP == 2 && !cp_p16 ? f_ow[1:0] != 2'd1 : (PUMP == 2 || !cp_p16) && !f_ow[0]);
    su_p2 <= PUMP == 2 && !cp_p16 && !cp_bypass && (f_ow[1:0] == 2'd3 || f_ow[1:0] == 2'd0);
    su_p3 <= PUMP == 2 && !cp_p16 && !cp_bypass && f_ow[1:0] == 2'd0;
    su_og1 <= PUMP == 2 ? AC_AW'(f_og) << 1 : AC_AW'(f_og);
    su_og3 <= AC_AW'(f_og) + (AC_AW'(f_og) << 1);
    su_ogb <= cp_bypass ? '0 : AC_AW'(f_og);
    su_nfull <= AC_AW'(f_og) << (cp_bypass ? 0 : $clog2(PUMP) + (cp_p16 ? 0 : 1));
    su_nlast <= su_p3 ? AC_AW'(f_og) << 2 : su_p2 ? su_og3 : su_p1 ? AC_AW'(f_og) << 1 : AC_AW'(f_og);
    su_sigb <= cp_p16 ? IB_AW'(su_sig) : IB_AW'(su_sig) << 1;
    su_sig3 <= IB_AW'(su_sig) + (IB_AW'(su_sig) << 1);
    su_pwstep <= IB_AW'(su_sig) << (cp_bypass ? 0 : $clog2(PUMP) + (cp_p16 ? 0 : 1));
    su_alt <= !cp_p16 && !cp_bypass && !cp_acc_init && f_ig == 1 && f_kh == 1 && f_kw == 1;
    su_gap <= !cp_p16 && !cp_bypass && !cp_acc_init && ((f_ig == 3 && f_kh == 1 && f_kw == 1)
              || (f_ig == 1 && f_kh == 3 && f_kw == 1) || (f_ig == 1 && f_kh == 1 && f_kw == 3));
    {su_kx0, su_ky0, su_i0, su_o0, su_x0, su_y0}
      <= {su_kx1 == 0, su_ky1 == 0, su_i1 == 0, su_o1 == 0, su_x1 == 0, su_y1 == 0};
  end

  // ---- issue stage: loop down-counters (c_) with registered last flags (l_), addresses (a_)
  logic [F_COMPUTE_KW_W-1:0] c_kx, c_ky;
  logic [F_COMPUTE_IG_W-1:0] c_i, c_o, c_ib;           // c_ib: input group, counting up
  logic [F_COMPUTE_OW_W-1:0] c_x;
  logic [F_COMPUTE_OH_W-1:0] c_y;
  logic l_kx, l_ky, l_i, l_o, l_x, l_y, k_first;
  logic [IB_AW-1:0] a_prow, a_pw, a_offrow, a_off;     // IBUF word of the row's / pixel's window origin; offsets
  logic [WB_AW-1:0] a_ww;                              // WBUF word
  logic [AC_AW-1:0] a_awp, a_ao;                       // ACC word of the pixel (p*og), of the output word
  logic [BO_W-1:0] a_bo;                               // bypass: element o*Tm
  logic [BE_W-1:0] a_be, su_be;                        // emul: operand B's element b_word*Tn + o*Tm; its start
  logic e_ph;                                          // emul: this step reads operand B (A's step came before)
  wire [BE_W-1:0] a_bsel = e_ph ? a_be : BE_W'(a_bo);   // the bypass's element: B's (emul phase 1), else A's
  logic [2:0] su_cnt;
  logic cp_issued, cp_gap;                             // a step / a word's last step issued last cycle
  wire cp_issue = cp_state == C_RUN && !(su_alt && cp_issued) && !(su_gap && cp_gap);
  wire w_done = cp_bypass ? (!cp_emul || e_ph) : (l_kx && l_ky && l_i);   // last step of the output word(s)
  // pixels of this step besides x0: x1 (int8; PUMP = 2 also int16), x2 and x3 (PUMP = 2, int8)
  wire cp_two = (su_pack || (PUMP == 2 && !cp_bypass)) && (!l_x || su_p1);
  wire cp_p2 = PUMP == 2 && su_pack && (!l_x || su_p2);
  wire cp_p3 = PUMP == 2 && su_pack && (!l_x || su_p3);
  logic c_xl;                                          // bypass, PUMP = 2: the pixel's column parity (its ACC copy)
  wire cp_sel = PUMP == 2 && cp_bypass && c_xl;
  wire o_wrap = w_done && l_o;
  // a_off / a_offrow / c_ib + 1, each + su_sig, su_sigb, su_sig3 (pixels x1, pair B, x3), kept beside them: each read
  // address one sum of two registers (one carry chain); su_sig* are valid by the last setup cycle (g_sig_lat)
  for (genvar k = 0; k < 3; k++) begin : g_sh
    wire [IB_AW-1:0] sg = k == 0 ? IB_AW'(su_sig) : k == 1 ? su_sigb : su_sig3;
    logic [IB_AW-1:0] o, r, c;
    always_ff @(posedge clk)
      if (cp_state == C_SETUP || (cp_issue && w_done)) {o, r, c} <= {sg, sg, sg + 1'b1};
      else if (cp_issue && !l_kx) o <= o + IB_AW'(f_ig);
      else if (cp_issue && !l_ky) {o, r} <= {2{r + IB_AW'(su_rs)}};
      else if (cp_issue) {o, r, c} <= {c, c, c + 1'b1};
  end
  wire x_wrap = o_wrap && l_x;
  wire [AC_AW-1:0] awp_next = a_awp + (l_x ? su_nlast : su_nfull);
  wire [IB_AW-1:0] ib_next = IB_AW'(c_ib) + 1'b1;
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      cp_state <= C_IDLE;
      cp_ins <= '0;
      cp_issued <= 1'b0;
      cp_gap <= 1'b0;
      su_cnt <= '0;
    end else begin
      cp_issued <= cp_issue;
      cp_gap <= cp_issue && w_done;
      case (cp_state)
        C_IDLE:
          if (cp_go) begin
            cp_ins <= cq_rdata;
            su_cnt <= '0;
            cp_state <= C_DONE;
            if (cq_op == OP_COMPUTE && cq_rdata[F_COMPUTE_OH_LSB +: F_COMPUTE_OH_W] != 0
                && cq_rdata[F_COMPUTE_OW_LSB +: F_COMPUTE_OW_W] != 0
                && cq_rdata[F_COMPUTE_OG_LSB +: F_COMPUTE_OG_W] != 0) cp_state <= C_SETUP;
          end
        C_SETUP: begin
          su_cnt <= su_cnt + 1'b1;
          if (su_cnt == 3'(CP_SETUP - 1)) cp_state <= C_RUN;
        end
        C_RUN: if (cp_issue && x_wrap && l_y) cp_state <= C_DRAIN;
        C_DRAIN: if (q_v == '0 && ck_done) cp_state <= C_DONE;
        C_DONE: cp_state <= C_IDLE;
        default: cp_state <= C_IDLE;
      endcase
    end
  end
  // counters and addresses (no reset: loaded in every setup cycle, the last load with valid setup values)
  always_ff @(posedge clk) begin
    if (cp_state == C_SETUP) begin
      {c_kx, c_ky, c_i, c_o, c_x, c_y} <= {su_kx1, su_ky1, su_i1, su_o1, su_x1, su_y1};
      {l_kx, l_ky, l_i, l_o, l_x, l_y} <= {su_kx0, su_ky0, su_i0, su_o0, su_x0, su_y0};
      k_first <= 1'b1;
      c_ib <= '0;
      {a_prow, a_pw} <= {2{IB_AW'(f_ibuf_word)}};
      {a_offrow, a_off} <= '0;
      a_ww <= WB_AW'(f_wbuf_word);
      {a_awp, a_ao, a_bo} <= '0;
      a_be <= su_be;
      e_ph <= 1'b0;
      c_xl <= '0;
    end else if (cp_issue) begin
      k_first <= w_done;
      e_ph <= cp_emul && !e_ph;
      // (i, ky, kx): kx innermost
      if (w_done || l_kx) {c_kx, l_kx} <= {su_kx1, su_kx0};
      else {c_kx, l_kx} <= {c_kx - 1'b1, c_kx == 1};
      if (w_done || l_kx) begin
        if (w_done || l_ky) {c_ky, l_ky} <= {su_ky1, su_ky0};
        else {c_ky, l_ky} <= {c_ky - 1'b1, c_ky == 1};
      end
      if (w_done || (l_kx && l_ky)) begin
        if (w_done || l_i) {c_i, l_i} <= {su_i1, su_i0};
        else {c_i, l_i} <= {c_i - 1'b1, c_i == 1};
      end
      if (w_done) begin
        {a_offrow, a_off, c_ib} <= '0;
        if (!l_o) begin                                 // next output word of the pixel(s)
          {c_o, l_o} <= {c_o - 1'b1, c_o == 1};
          a_ww <= a_ww + 1'b1;
          a_ao <= a_ao + 1'b1;
          a_bo <= a_bo + BO_W'(TM);
          a_be <= a_be + BE_W'(TM);
        end else begin                                  // next pixel (pair)
          {c_o, l_o} <= {su_o1, su_o0};
          a_ww <= WB_AW'(f_wbuf_word);
          a_bo <= '0;
          a_be <= su_be;
          a_awp <= awp_next;
          a_ao <= awp_next;
          c_xl <= !c_xl;
          if (!l_x) begin
            {c_x, l_x} <= {c_x - 1'b1, c_x == 1};
            a_pw <= a_pw + su_pwstep;
          end else begin                                // next output row
            c_xl <= '0;
            {c_x, l_x} <= {su_x1, su_x0};
            {c_y, l_y} <= {c_y - 1'b1, c_y == 1};
            a_prow <= a_prow + su_srow;
            a_pw <= a_prow + su_srow;
          end
        end
      end else begin
        a_ww <= a_ww + 1'b1;
        if (!l_kx) a_off <= a_off + IB_AW'(f_ig);
        else if (!l_ky) begin
          {a_offrow, a_off} <= {2{a_offrow + IB_AW'(su_rs)}};
        end else begin
          c_ib <= c_ib + 1'b1;
          {a_offrow, a_off} <= {2{ib_next}};
        end
      end
    end
  end

  // ---- range checks (OUT_OF_RANGE, rtl/compute_chk.sv): the verdict CK_LAT cycles into the setup, before the
  // instruction can finish (C_DRAIN waits for ck_done)
  wire ck_done;
  compute_chk #(.RS_W(RS_W), .BE_W(BE_W), .CK_LAT(CK_LAT)) u_chk (
    .clk, .rst_n, .clr, .idle(cp_state == C_IDLE), .ins(cp_ins), .su_rs, .su_be, .oob, .done(ck_done));

  // ---- pipeline: q_*[k] holds the step issued k cycles ago
  logic [NS:1] q_v, q_first, q_last, q_two, q_p2, q_p3, q_sel;
  logic [AC_AW-1:0] q_aw0 [NS:1];
  logic [AC_AW-1:0] q_aw1 [NS:2];
  logic [AC_AW-1:0] q_aw2 [NS:2];
  logic [AC_AW-1:0] q_aw3 [NS:2];
  logic [LOG2_TN-1:0] q1_boff;                         // bypass: lane of the first element
  logic [IB_AW-1:0] q1_ia, q1_ib, q1_ic, q1_id;
  wire [IB_AW:0] byp_next = {a_pw, 1'b1} + {IB_AW'(a_bsel >> LOG2_TN), 1'b1};
  wire unused_bn = byp_next[0];                        // (always 0: the carry-in's own bit)
  logic [WB_AW-1:0] q1_wa;
  logic q1_wb;
  always_ff @(posedge clk) begin
    if (!rst_n || clr) q_v <= '0;
    else q_v <= {q_v[NS-1:1], cp_issue};
    q_first <= {q_first[NS-1:1], k_first};
    q_last <= {q_last[NS-1:1], w_done};
    q_two <= {q_two[NS-1:1], cp_two};
    q_p2 <= {q_p2[NS-1:1], cp_p2};
    q_p3 <= {q_p3[NS-1:1], cp_p3};
    q_sel <= {q_sel[NS-1:1], cp_sel};
    q_aw0[1] <= a_ao;
    for (int k = 2; k <= NS; k++) q_aw0[k] <= q_aw0[k - 1];
    q_aw1[2] <= q_aw0[1] + su_og1;                     // copy 0's second pixel: x1 (PUMP = 2: x2)
    q_aw2[2] <= q_aw0[1] + su_ogb;                     // copy 1's first: x1 (bypass: x0's word, when q_sel)
    q_aw3[2] <= q_aw0[1] + su_og3;
    for (int k = 3; k <= NS; k++) {q_aw1[k], q_aw2[k], q_aw3[k]} <= {q_aw1[k - 1], q_aw2[k - 1], q_aw3[k - 1]};
    q1_boff <= TM % TN == 0 ? '0 : a_bo[LOG2_TN-1:0];  // (o*Tm is a multiple of Tn when Tn divides Tm; B's offset
                                                         // b_word*Tn + o*Tm has the same lane)
    // stage 1: the RAM read addresses (bypass: the first IBUF word of the o group and the next; emul B: of B's)
    q1_ia <= cp_bypass ? a_pw + IB_AW'(a_bsel >> LOG2_TN) : a_pw + a_off;
    // (bypass: the word after q1_ia's, a_pw + w + 1 as one adder with the 1 as carry-in: {a_pw, 1} + {w, 1})
    q1_ib <= cp_bypass ? byp_next[IB_AW:1] : a_pw + g_sh[0].o;   // (a_pw + a_off + su_sig)
    q1_ic <= a_pw + g_sh[1].o;                         // (a_pw + a_off + su_sigb)
    q1_id <= a_pw + g_sh[2].o;                         // (a_pw + a_off + su_sig3)
    q1_wa <= a_ww;
    q1_wb <= cp_wbuf_bank;
  end
  assign {cp_ib_a, cp_ib_b, cp_ib_c, cp_ib_d, cp_wb_a, cp_wb_bank} = {q1_ia, q1_ib, q1_ic, q1_id, q1_wa, q1_wb};

  // stage 2: the words of the banks in use out of the RAMs, registered; stage 3: into the PE array
  logic [TN*16-1:0] ib_a, ib_b, ib_c, ib_d;
  logic [WL*16-1:0] wb;
  always_ff @(posedge clk) begin
    ib_a <= cp_ibuf_bank ? ib_rd_a[16 * TN +: 16 * TN] : ib_rd_a[0 +: 16 * TN];
    ib_b <= cp_ibuf_bank ? ib_rd_b[16 * TN +: 16 * TN] : ib_rd_b[0 +: 16 * TN];
    ib_c <= cp_ibuf_bank ? ib_rd_c[16 * TN +: 16 * TN] : ib_rd_c[0 +: 16 * TN];
    ib_d <= cp_ibuf_bank ? ib_rd_d[16 * TN +: 16 * TN] : ib_rd_d[0 +: 16 * TN];
    wb <= WB_ONE || !cp_wbuf_bank ? wb_rd[0 +: 16 * WL] : wb_rd[16 * WL +: 16 * WL];   // (WB_ONE: in the address)
  end
  logic [TM*16-1:0] cp_byp, q_byp [PE_LAT];           // bypass elements (stage 3), delayed to stage SR
  logic [LOG2_TN-1:0] q1_boff_2, q1_boff_3;            // the bypass lane of the words at stage 2, 3
  // lane m takes element boff + m of {ib_b, ib_a} (boff + m < 2 Tn): a logarithmic funnel shifter, not a 2 Tn : 1
  // multiplexer per lane (boff is 0 when Tn divides Tm: the stages fold away)
  localparam int BL = TN + TM;
  wire [16*BL-1:0] byp_c, byp_s;
  for (genvar j = 0; j < BL; j++) begin : g_bc
    assign byp_c[16 * j +: 16] = j < TN ? ib_a[16 * (j % TN) +: 16] : ib_b[16 * (j % TN) +: 16];
  end
  log_shift #(.E(16), .N(BL), .S(LOG2_TN), .ROT(1'b0), .UP(1'b0)) u_byp (.sh(q1_boff_3), .x(byp_c), .y(byp_s));
  assign cp_byp = byp_s[0 +: 16 * TM];
  wire unused_byp = &{1'b0, byp_s[16 * BL - 1 : 16 * TM], 1'b0};   // (never reached: boff + m < BL)
  always_ff @(posedge clk) begin
    {q1_boff_3, q1_boff_2} <= {q1_boff_2, q1_boff};
    q_byp[0] <= cp_byp;
    for (int k = 1; k < PE_LAT; k++) q_byp[k] <= q_byp[k - 1];
  end
  // emul: at stage SR - 3 of B's step, q_byp[PE_LAT - 4] holds B's lanes and q_byp[PE_LAT - 3] A's (one step
  // ahead); minus the zero points into the DSP48E2 A/B registers, M, P: the product at SR
  localparam int EJ = PE_LAT - 4;
  logic signed [17:0] em_a [TM], em_b [TM];
  logic signed [35:0] em_m [TM], em_p [TM];
  always_ff @(posedge clk) begin
    for (int m = 0; m < TM; m++) begin
      em_a[m] <= 18'(signed'(q_byp[EJ + 1][16 * m +: 16])) - 18'(signed'(f_za));
      em_b[m] <= 18'(signed'(q_byp[EJ][16 * m +: 16])) - 18'(signed'(f_zb));
      em_m[m] <= em_a[m] * em_b[m];
      em_p[m] <= em_m[m];
    end
  end
  logic [TM*ACC_W-1:0] pe_sum0, pe_sum1, pe_sum2, pe_sum3;
  if (PUMP == 2) begin : g_pe2
    pe_array_2x u_pe (
      .clk, .clk2x, .p16(cp_p16), .xa0(ib_a), .xa1(q_two[3] && !cp_p16 ? ib_b : '0),
      .xb0((cp_p16 ? q_two[3] : q_p2[3]) ? ib_c : '0), .xb1(q_p3[3] ? ib_d : '0), .w(wb),
      .sa0(pe_sum0), .sa1(pe_sum1), .sb0(pe_sum2), .sb1(pe_sum3));
  end else begin : g_pe
    pe_array u_pe (
      .clk, .p16(cp_p16), .x0(ib_a), .x1(q_two[3] ? ib_b : '0),
      .w(wb), .sum0(pe_sum0), .sum1(pe_sum1));
    assign {pe_sum2, pe_sum3} = '0;
  end

  // stage SR: the step's sums; ACC = (acc_init ? 0 : ACC) + the tile's partial sums, written at NS (compute_acc.sv:
  // the sums registered at SR, the ACC words and running sums at SR + 1, their sum at SR + 2); copy 1 (pair B,
  // PUMP = 2: x1, x3) takes a bypass pixel's sums as copy 0 does, written in the copy of its column (q_sel)
  logic [TM*ACC_W-1:0] s0, s1;
  always_comb begin
    for (int m = 0; m < TM; m++) begin
      s0[ACC_W * m +: ACC_W] = cp_emul ? (q_last[SR] ? ACC_W'(em_p[m]) : '0)
                               : cp_bypass ? ACC_W'(signed'(q_byp[PE_LAT-1][16 * m +: 16]))
                               : pe_sum0[ACC_W * m +: ACC_W];
      s1[ACC_W * m +: ACC_W] = cp_bypass ? '0 : PUMP == 2 ? pe_sum2[ACC_W * m +: ACC_W] : pe_sum1[ACC_W * m +: ACC_W];
    end
  end
  compute_acc u_acc0 (
    .clk, .v(q_v[SR]), .first(q_first[SR]), .acc_init(cp_acc_init), .bank(cp_acc_bank), .s0, .s1,
    .acc_rd_a, .acc_rd_b, .wd0(cp_wd0), .wd1(cp_wd1));
  assign cp_s2_aw0 = q_aw0[SR];
  assign cp_s2_aw1 = q_aw1[SR];
  assign cp_s3_aw0 = q_aw0[NS];
  assign cp_s3_aw1 = q_aw1[NS];
  assign cp_s3_two = PUMP == 2 ? q_p2[NS] : q_two[NS];
  assign cp_wr = q_v[NS] && q_last[NS] && !q_sel[NS];
  if (PUMP == 2) begin : g_acc1
    compute_acc u_acc1 (
      .clk, .v(q_v[SR]), .first(q_first[SR]), .acc_init(cp_acc_init), .bank(cp_acc_bank),
      .s0(cp_bypass ? s0 : cp_p16 ? pe_sum2 : pe_sum1), .s1(cp_bypass ? '0 : pe_sum3), .acc_rd_a(acc_rd_c),
      .acc_rd_b(acc_rd_d), .wd0(cp_wd2), .wd1(cp_wd3));
    assign cp_wr_b = q_v[NS] && q_last[NS] && (cp_bypass ? q_sel[NS] : q_two[NS]);
  end else begin : g_acc1_none
    assign {cp_wd2, cp_wd3, cp_wr_b} = '0;
  end
  assign cp_s2_aw2 = q_aw2[SR];
  assign cp_s2_aw3 = q_aw3[SR];
  assign cp_s3_aw2 = q_aw2[NS];
  assign cp_s3_aw3 = q_aw3[NS];
  assign cp_s3_two_b = q_p3[NS];
  assign idle = cp_state == C_IDLE;
  assign pe_busy = cp_state == C_RUN;
  wire unused = &{1'b0, cp_ins[H_PUSH_NEXT_LSB], q_first[NS], q_last[SR], su_sig, f_ibuf_word, f_wbuf_word,
                  clk2x, ib_rd_c, ib_rd_d, ib_c, ib_d, acc_rd_c, acc_rd_d, pe_sum2, pe_sum3, q_sel[SR], 1'b0};
endmodule
`default_nettype wire
