// COMPUTE's range checks (rtl/compute.sv; OUT_OF_RANGE, as the golden simulator): window columns
// (ow-1)*s + kw <= in_cols, IBUF words ibuf_word + ((oh-1)*s + kh)*in_cols*ig, ACC words oh*ow*og, WBUF words
// wbuf_word + og*ig*kh*kw (bypass: og*Tm <= ig*Tn channels). Free-running on the instruction register: registered
// shift-and-add multiplies (the IBUF extent's saturating at 2^22), sums and compares of at most 32 bits; the
// verdict in the cycle cp_ck == CK_LAT, before the instruction can finish (C_DRAIN waits for `done`), so nothing
// downstream starts after an error.
`default_nettype none
module compute_chk
  import accel_pkg::*;
#(
  parameter int RS_W = 1,                              // in_cols*ig bits (su_rs)
  parameter int BE_W = 1,                              // emul: operand B's first element bits (su_be)
  parameter int CK_LAT = 8                             // cycles from the setup's start to the verdict
) (
  input  wire                   clk,
  input  wire                   rst_n,
  input  wire                   clr,
  input  wire                   idle,           // COMPUTE idle: the count restarts
  input  wire [INSN_BITS-1:0]   ins,            // the COMPUTE (its fields constant while it runs)
  input  wire [RS_W-1:0]        su_rs,          // in_cols*ig (rtl/compute.sv's setup)
  input  wire [BE_W-1:0]        su_be,          // b_word*Tn
  output logic                  oob,            // OUT_OF_RANGE (one cycle)
  output logic                  done            // the verdict has been given
);
  wire        cp_bypass = ins[F_COMPUTE_BYPASS_LSB +: F_COMPUTE_BYPASS_W];
  wire        cp_p16 = 32'(ins[F_COMPUTE_PREC_LSB +: F_COMPUTE_PREC_W]) == PREC_INT16;
  wire [F_COMPUTE_OH_W-1:0] f_oh = ins[F_COMPUTE_OH_LSB +: F_COMPUTE_OH_W];
  wire [F_COMPUTE_OW_W-1:0] f_ow = ins[F_COMPUTE_OW_LSB +: F_COMPUTE_OW_W];
  wire [F_COMPUTE_OG_W-1:0] f_og = ins[F_COMPUTE_OG_LSB +: F_COMPUTE_OG_W];
  wire [F_COMPUTE_IG_W-1:0] f_ig = ins[F_COMPUTE_IG_LSB +: F_COMPUTE_IG_W];
  wire [F_COMPUTE_KH_W-1:0] f_kh = ins[F_COMPUTE_KH_LSB +: F_COMPUTE_KH_W];
  wire [F_COMPUTE_KW_W-1:0] f_kw = ins[F_COMPUTE_KW_LSB +: F_COMPUTE_KW_W];
  wire [F_COMPUTE_STRIDE_W-1:0] f_s = ins[F_COMPUTE_STRIDE_LSB +: F_COMPUTE_STRIDE_W];
  wire [F_COMPUTE_IN_COLS_W-1:0] f_in_cols = ins[F_COMPUTE_IN_COLS_LSB +: F_COMPUTE_IN_COLS_W];
  wire [F_COMPUTE_IBUF_WORD_W-1:0] f_ibuf_word = ins[F_COMPUTE_IBUF_WORD_LSB +: F_COMPUTE_IBUF_WORD_W];
  wire [F_COMPUTE_WBUF_WORD_W-1:0] f_wbuf_word = ins[F_COMPUTE_WBUF_WORD_LSB +: F_COMPUTE_WBUF_WORD_W];
  logic [3:0] cp_ck;
  logic [F_COMPUTE_OW_W-1:0] k_owm1;
  logic [F_COMPUTE_OH_W-1:0] k_ohm1;
  logic [F_COMPUTE_OH_W+F_COMPUTE_OW_W-1:0] k_ohow;
  logic [2*F_COMPUTE_OG_W-1:0] k_ogig;
  logic [2*F_COMPUTE_KH_W-1:0] k_khkw;
  logic [F_COMPUTE_OW_W+F_COMPUTE_STRIDE_W-1:0] k_wc, k_rsin;
  logic [F_COMPUTE_OW_W+F_COMPUTE_STRIDE_W:0] k_wcols, k_rowsin;
  logic [F_COMPUTE_OH_W+F_COMPUTE_OW_W+F_COMPUTE_OG_W-1:0] k_nw;
  logic [2*F_COMPUTE_OG_W+2*F_COMPUTE_KH_W-1:0] k_wsz;
  logic [F_COMPUTE_IBUF_WORD_W+1:0] k_ie, k_ie_lo;     // ((oh-1)*s + kh)*in_cols*ig, saturating: k_ie_ov
  logic [2*F_COMPUTE_OG_W+2*F_COMPUTE_KH_W+1:0] k_wend;
  logic k_byp, k_win, k_nw_oob, k_w_oob, k_ie_ov, k_ie_hi, k_i_oob;
  logic [F_COMPUTE_OG_W+LOG2_TM+LOG2_TN:0] k_bsum, k_ogtm;
  /* verilator lint_off PINCONNECTEMPTY */
  mul_tree #(.AW(F_COMPUTE_OH_W), .BW(F_COMPUTE_OW_W)) u_ohow (.clk, .a(f_oh), .b(f_ow), .p(k_ohow), .ovf());
  mul_tree #(.AW(F_COMPUTE_OG_W), .BW(F_COMPUTE_IG_W)) u_ogig (.clk, .a(f_og), .b(f_ig), .p(k_ogig), .ovf());
  mul_tree #(.AW(F_COMPUTE_KH_W), .BW(F_COMPUTE_KW_W)) u_khkw (.clk, .a(f_kh), .b(f_kw), .p(k_khkw), .ovf());
  mul_tree #(.AW(F_COMPUTE_OW_W), .BW(F_COMPUTE_STRIDE_W)) u_wc (.clk, .a(k_owm1), .b(f_s), .p(k_wc), .ovf());
  mul_tree #(.AW(F_COMPUTE_OH_W), .BW(F_COMPUTE_STRIDE_W)) u_rsin (.clk, .a(k_ohm1), .b(f_s), .p(k_rsin), .ovf());
  mul_tree #(.AW($bits(k_ohow)), .BW(F_COMPUTE_OG_W)) u_nw (.clk, .a(k_ohow), .b(f_og), .p(k_nw), .ovf());
  mul_tree #(.AW($bits(k_ogig)), .BW($bits(k_khkw))) u_wsz (.clk, .a(k_ogig), .b(k_khkw), .p(k_wsz), .ovf());
  /* verilator lint_on PINCONNECTEMPTY */
  mul_tree #(.AW(RS_W), .BW($bits(k_rowsin)), .PW($bits(k_ie))) u_ie (
    .clk, .a(su_rs), .b(k_rowsin), .p(k_ie), .ovf(k_ie_ov));
  always_ff @(posedge clk) begin
    if (!rst_n || clr || idle) cp_ck <= '0;
    else if (cp_ck <= 4'(CK_LAT)) cp_ck <= cp_ck + 1'b1;
    k_owm1 <= f_ow - 1'b1;
    k_ohm1 <= f_oh - 1'b1;
    // (emul: B's lanes end at b_word*Tn + og*Tm; the sum registered before the compare)
    k_ogtm <= (F_COMPUTE_OG_W + LOG2_TM + LOG2_TN + 1)'(times_tm(32'(f_og)));
    k_bsum <= k_ogtm + (ins[F_COMPUTE_EMUL_LSB] ? (F_COMPUTE_OG_W + LOG2_TM + LOG2_TN + 1)'(su_be) : '0);
    k_byp <= k_bsum > ((F_COMPUTE_OG_W + LOG2_TM + LOG2_TN + 1)'(f_ig) << LOG2_TN);
    k_wcols <= ($bits(k_wcols))'(k_wc) + ($bits(k_wcols))'(f_kw);
    k_rowsin <= ($bits(k_rowsin))'(k_rsin) + ($bits(k_rowsin))'(f_kh);
    k_win <= k_wcols > ($bits(k_wcols))'(f_in_cols);
    k_nw_oob <= k_nw > ($bits(k_nw))'(ACC_WORDS);
    k_wend <= ($bits(k_wend))'(f_wbuf_word) + ($bits(k_wend))'(k_wsz);
    k_w_oob <= k_wend > ($bits(k_wend))'(cp_p16 ? WBUF_WORDS16 : WBUF_WORDS8);
    k_ie_lo <= ($bits(k_ie_lo))'(f_ibuf_word) + k_ie;
    k_ie_hi <= k_ie[$bits(k_ie)-1];
    // (u_ie's overflow comes one clock after its product)
    k_i_oob <= k_ie_ov || k_ie_hi || k_ie_lo > ($bits(k_ie_lo))'(cp_p16 ? IBUF_WORDS16 : IBUF_WORDS8);
  end
  assign oob = cp_ck == 4'(CK_LAT) && (k_win || k_i_oob || k_nw_oob || (cp_bypass ? k_byp : k_w_oob));
  assign done = cp_ck > 4'(CK_LAT);

endmodule
`default_nettype wire
