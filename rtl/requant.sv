// Requantization of one output lane, pipelined for the clock (REQUANT_STAGES = RQ_LAT registers from `acc` to `q`):
//   q = clamp(((v*M + 2^(s-1)) >> s) + zp, qmin, qmax), v = (acc + bias) >> pre (arithmetic) on DSP_A_W = 27 bits
//   (isa.REQUANT_OPERAND_BITS: the compiler picks each channel's pre-shift so that it fits), (M, s) of the negative
//   side when `act` and v < 0 (the golden simulator's generator.ref.kernels.requantize; s in [1, 63], isa.MAX_SHIFT).
// Stages: R1 inputs registered (ACC RAM output, PBUF record); R2 low LO_W bits of acc + bias (carry out registered);
// R3 its high bits, the sign selects s (and at R5 M); R4 / R5 the pre-shift (by 8*pre[5:3], then pre[2:0]) down to the 27-bit
// DSP operand, registered as the A / B registers; R6 the one 27 x 18 multiply v*M (M register, UG579), R7 its P
// register; R8 / R9 arithmetic shift by s-1 (by 8*s[5:3], then s[2:0]); R10 the rounding and zp in one add
// (floor((x >> (s-1)) + 2*zp + 1) / 2 = round-half-up of x / 2^s, + zp) on 21 bits with the out-of-range flags
// (|x >> (s-1)| >= 2^18 saturates whatever zp); R11 the clamp to int8 / int16. No stage has a carry chain over
// 32 bits; one DSP48E2 per lane.
// For the identity above an activation table's window (rtl/act_table.sv, POST id_above) also, at R11 beside q:
// `above` (the unclamped p = ((v*M + 2^(s-1)) >> s) + zp > qmax) and `xi` = x = (v*M) >> (s-1) (p - zp = (x+1) >> 1)
// saturated to XI_W = 34 bits (exact in [-2^33, 2^33): whatever the table's id_shift <= 15 and zp_id, a larger x
// gives the same clamped result as the bound; R10 its top bits' all-ones / all-zeros flags, R11 the saturation).
// Legend: vl / vh the low (unsigned) / high (signed) part of acc + bias, va the pre-shifted operand, pm v*M.
`default_nettype none
module requant
  import accel_pkg::*;
#(
  parameter int XI_W = 34
)
(
  input  wire                       clk,
  input  wire signed [ACC_W-1:0]    acc,
  input  wire [PREC_W-1:0]          rec,            // PBUF parameter record (isa.PARAM_RECORD)
  input  wire                       act,            // negative-side (M, s) for v < 0
  input  wire [15:0]                zp,
  input  wire                       p16,            // clamp to int16 (else int8)
  output logic signed [15:0]        q,
  output logic                      above,          // p > qmax (beside q)
  output logic signed [XI_W-1:0]    xi              // (v*M) >> (s-1), saturated to XI_W bits (beside q)
);
  localparam int LO_W = DSP_A_W - 1;                   // the low part of acc + bias: LO_W bits, carry registered
  localparam int V_W = ACC_W + 1;
  localparam int HI_W = V_W - LO_W;                    // its high part: signed
  localparam int X_W = DSP_A_W + 7;                    // after the coarse pre-shift: the fine one moves <= 7 bits
  localparam int PM_W = DSP_A_W + 16;                  // v*M
  localparam int SAT = 18;                             // x >> (s-1) within [-2^SAT, 2^SAT): exact; else saturated

  // R1: inputs
  logic signed [ACC_W-1:0] r1_acc;
  logic [V_W-1:0] r1_bias;
  logic signed [15:0] r1_mp, r1_mn;
  logic [5:0] r1_sp, r1_sn, r1_pre;
  /* verilator lint_off UNUSEDSIGNAL */  // the record's upper bias bits, the shift fields' upper bits, reserved
  wire [PREC_W-1:0] rec_all = rec;
  /* verilator lint_on UNUSEDSIGNAL */
  always_ff @(posedge clk) begin
    r1_acc <= acc;
    r1_bias <= rec_all[PR_BIAS_LSB +: V_W];
    r1_mp <= signed'(rec_all[PR_MULT_POS_LSB +: 16]);
    r1_mn <= signed'(rec_all[PR_MULT_NEG_LSB +: 16]);
    r1_sp <= rec_all[PR_SHIFT_POS_LSB +: 6];
    r1_sn <= rec_all[PR_SHIFT_NEG_LSB +: 6];
    r1_pre <= rec_all[PR_PRE_SHIFT_LSB +: 6];
  end
  // R2: v[LO_W-1:0] with its carry; the high operands passed on
  logic [LO_W:0] r2_lo;
  logic [HI_W-1:0] r2_ah, r2_bh;
  logic signed [15:0] r2_mp, r2_mn;
  logic [5:0] r2_sp1, r2_sn1, r2_pre;                  // s - 1 of each side (its own carry chain, before the select)
  wire [V_W-1:0] acc_x = V_W'(r1_acc);                 // sign-extended
  always_ff @(posedge clk) begin
    r2_lo <= {1'b0, acc_x[LO_W-1:0]} + {1'b0, r1_bias[LO_W-1:0]};
    r2_ah <= acc_x[V_W-1:LO_W];
    r2_bh <= r1_bias[V_W-1:LO_W];
    {r2_mp, r2_mn, r2_pre} <= {r1_mp, r1_mn, r1_pre};
    r2_sp1 <= r1_sp - 6'd1;
    r2_sn1 <= r1_sn - 6'd1;
  end
  // R3: acc + bias complete (high part); s by its sign (M is selected at R5, straight into the DSP's B register:
  // a register fed by a register chain alone would become a shift-register LUT, which the DSP cannot absorb)
  wire [HI_W-1:0] vh = r2_ah + r2_bh + HI_W'(r2_lo[LO_W]);
  wire neg = act && vh[HI_W-1];
  logic signed [V_W-1:0] r3_v;
  logic signed [15:0] r3_mp, r3_mn;
  logic r3_neg;
  logic [5:0] r3_s1, r3_pre;                           // s - 1, the pre-shift
  always_ff @(posedge clk) begin
    r3_v <= signed'({vh, r2_lo[LO_W-1:0]});
    {r3_mp, r3_mn, r3_neg} <= {r2_mp, r2_mn, neg};
    r3_s1 <= neg ? r2_sn1 : r2_sp1;                   // (vh's carry chain, then a select: one chain per path)
    r3_pre <= r2_pre;
  end
  // R4 / R5: v = (acc + bias) >>> pre, by 8 * pre[5:3] then pre[2:0], down to the DSP's 27-bit A port (the A / B
  // registers at R5)
  wire signed [V_W+63:0] v_ext = (V_W + 64)'(r3_v);   // sign-extended: a shift past the top gives the sign
  logic signed [X_W-1:0] r4_x;
  logic [2:0] r4_pre;
  logic signed [15:0] r4_mp, r4_mn, r5_m;
  logic r4_neg;
  logic [5:0] r4_s1, r5_s1, r6_s1, r7_s1;
  logic signed [DSP_A_W-1:0] r5_va;
  wire signed [X_W+6:0] x_ext = (X_W + 7)'(r4_x);
  always_ff @(posedge clk) begin
    r4_x <= X_W'(v_ext >>> {r3_pre[5:3], 3'b000});
    r4_pre <= r3_pre[2:0];
    r5_va <= DSP_A_W'(x_ext >>> r4_pre);
    {r4_mp, r4_mn, r4_neg} <= {r3_mp, r3_mn, r3_neg};
    r5_m <= r4_neg ? r4_mn : r4_mp;
    {r4_s1, r5_s1, r6_s1, r7_s1} <= {r3_s1, r4_s1, r5_s1, r6_s1};
  end
  // R6 (M) and R7 (P): the multiply
  logic signed [PM_W-1:0] r6_p, r7_p;
  always_ff @(posedge clk) begin
    r6_p <= r5_va * r5_m;
    r7_p <= r6_p;
  end
  // R8 / R9: x >>> (s - 1), by 8 * (s-1)[5:3] then (s-1)[2:0]
  wire signed [PM_W-1:0] pm = r7_p;
  logic signed [PM_W-1:0] r8_x, r9_x;
  logic [2:0] r8_s;
  always_ff @(posedge clk) begin
    r8_x <= pm >>> {r7_s1[5:3], 3'b000};
    r8_s <= r7_s1[2:0];
    r9_x <= r8_x >>> r8_s;
  end
  // R10: round half up and + zp on SAT + 3 bits; whether x >> (s-1) leaves [-2^SAT, 2^SAT) (bits SAT and up not
  // all equal) as all-ones / all-zeros flags of 6-bit groups, combined in R11
  localparam int TOP_W = PM_W - SAT, NG = (TOP_W + 5) / 6;
  wire [6*NG-1:0] top = (6 * NG)'(signed'(r9_x[PM_W-1:SAT]));    // sign-extended: padding keeps the groups exact
  logic [NG-1:0] r10_one, r10_zero;
  logic r10_neg;
  logic signed [SAT+1:0] r10_qz;
  // (x + 1) >> 1 + zp = (x + 2*zp + 1) >> 1: one add
  wire signed [SAT+2:0] rx = (SAT + 3)'(signed'(r9_x[SAT:0])) + (SAT + 3)'(signed'({zp, 1'b1}));
  wire unused_rx = rx[0];                              // (the bit shifted out by the rounding)
  logic signed [XI_W-1:0] r10_x;
  logic r10_xone, r10_xzero;                           // x's bits XI_W-1 and up all ones / all zeros
  always_ff @(posedge clk) begin
    for (int g = 0; g < NG; g++) begin
      r10_one[g] <= &top[6 * g +: 6];
      r10_zero[g] <= ~|top[6 * g +: 6];
    end
    r10_neg <= r9_x[PM_W-1];
    r10_qz <= rx[SAT+2:1];
    r10_x <= r9_x[XI_W-1:0];
    r10_xone <= &r9_x[PM_W-1:XI_W-1];
    r10_xzero <= ~|r9_x[PM_W-1:XI_W-1];
  end
  wire r10_ovf = !(&r10_one) && !(&r10_zero);
  // R11: the clamp to int8 / int16
  wire signed [SAT+1:0] qz = r10_qz;
  wire signed [SAT+1:0] qmin = p16 ? -(SAT + 2)'(32768) : -(SAT + 2)'(128);
  wire signed [SAT+1:0] qmax = p16 ? (SAT + 2)'(32767) : (SAT + 2)'(127);
  always_ff @(posedge clk) begin
    if (r10_ovf) q <= r10_neg ? 16'(qmin) : 16'(qmax);
    else if (qz < qmin) q <= 16'(qmin);
    else if (qz > qmax) q <= 16'(qmax);
    else q <= 16'(qz);
    above <= r10_ovf ? !r10_neg : qz > qmax;
    if (r10_xone || r10_xzero) xi <= r10_x;
    else xi <= r10_neg ? {1'b1, (XI_W - 1)'(0)} : {1'b0, {(XI_W - 1){1'b1}}};
  end
endmodule
`default_nettype wire
