// PE array: Tn x Tm processing elements, each exactly one signed DSP_A_W x DSP_B_W -> DSP_P_W multiply (27 x 18
// -> 45: one DSP48E2, UG579), followed by the per-output-lane adder trees. One pipeline register on the products
// (the DSP48E2 P register): sum0 / sum1 are valid one clock after x0 / x1 / w. S = PACK_SHIFT (accel_pkg).
//   int8  (p16 = 0): A = x1 * 2^S + x0 (two activations of adjacent output pixels packed in the A port), B = w;
//         the low product x0*w is P[S-1:0] sign-extended, the high product x1*w is P[P_W-1:S] plus the borrow
//         P[S-1] of the low one. sum0 = sum_n x0[n]*w[m][n], sum1 = sum_n x1[n]*w[m][n].
//   int16 (p16 = 1): A = x0, B = w; sum0 = sum_n x0[n]*w[m][n], sum1 = 0.
// Elements are 16-bit two's complement (int8 values sign-extended); weight element (m, n) is w[(m*TN+n)*16 +: 16].
`default_nettype none
module pe_array
  import accel_pkg::*;
(
  input  wire                     clk,
  input  wire                     p16,
  input  wire [TN*16-1:0]         x0,
  input  wire [TN*16-1:0]         x1,
  input  wire [TN*TM*16-1:0]      w,
  output logic [TM*ACC_W-1:0]     sum0,
  output logic [TM*ACC_W-1:0]     sum1
);
  localparam int HI_W = DSP_P_W - PACK_SHIFT;          // high field P[P_W-1:S]
  // A operand per input lane (shared by the Tm PEs of the lane)
  logic signed [DSP_A_W-1:0] a [TN];
  always_comb begin
    for (int n = 0; n < TN; n++) begin
      logic [15:0] v0;
      logic [DSP_A_W-PACK_SHIFT-1:0] v1;
      v0 = x0[16 * n +: 16];
      v1 = x1[16 * n +: DSP_A_W - PACK_SHIFT];
      // int8: x1 * 2^S + x0 = {x1 - sign(x0), x0 sign-extended to S bits}
      a[n] = p16 ? DSP_A_W'(signed'(v0)) : {v1 - (DSP_A_W - PACK_SHIFT)'(v0[7]), PACK_SHIFT'(signed'(v0))};
    end
  end

  logic signed [DSP_P_W-1:0] p_q [TN * TM];   // product registers (P)
  logic p16_q;
  always_ff @(posedge clk) begin
    p16_q <= p16;
    for (int m = 0; m < TM; m++)
      for (int n = 0; n < TN; n++) begin
        logic signed [DSP_B_W-1:0] b;
        b = DSP_B_W'(signed'(w[16 * (m * TN + n) +: 16]));
        p_q[m * TN + n] <= a[n] * b;
      end
  end

  // adder trees on the product fields shared by both modes: A = sum P[P_W-1:S] (signed), B = sum P[S-1:0]
  // (unsigned), C = sum P[S-1]. int8: sum0 = sum sext(P[S-1:0]) = B - C * 2^S, sum1 = sum (P[P_W-1:S] + P[S-1])
  // = A + C; int16: sum0 = sum P = A * 2^S + B.
  localparam int SA = HI_W + LOG2_TN, SB = PACK_SHIFT + LOG2_TN, SC = LOG2_TN + 1;
  always_comb begin
    for (int m = 0; m < TM; m++) begin
      logic signed [SA-1:0] sa;
      logic [SB-1:0] sb;
      logic [SC-1:0] sc;
      sa = '0;
      sb = '0;
      sc = '0;
      for (int n = 0; n < TN; n++) begin
        logic signed [DSP_P_W-1:0] p;
        logic signed [HI_W-1:0] hi;
        p = p_q[m * TN + n];
        hi = p[DSP_P_W-1:PACK_SHIFT];
        sa = sa + SA'(hi);
        sb = sb + SB'(p[PACK_SHIFT-1:0]);
        sc = sc + SC'(p[PACK_SHIFT-1]);
      end
      if (p16_q) begin
        sum0[ACC_W * m +: ACC_W] = (ACC_W'(sa) << PACK_SHIFT) + ACC_W'(sb);
        sum1[ACC_W * m +: ACC_W] = '0;
      end else begin
        sum0[ACC_W * m +: ACC_W] = ACC_W'(sb) - (ACC_W'(sc) << PACK_SHIFT);
        sum1[ACC_W * m +: ACC_W] = ACC_W'(sa) + ACC_W'(sc);
      end
    end
  end
endmodule
`default_nettype wire
