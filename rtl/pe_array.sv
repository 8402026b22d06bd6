// PE array: Tn x Tm processing elements, each exactly one signed 27 x 18 -> 45-bit multiply (one DSP48E2, UG579),
// followed by the per-output-lane adder trees. One pipeline register on the products (the DSP48E2 P register):
// sum0 / sum1 are valid one clock after x0 / x1 / w.
//   int8  (p16 = 0): A = x1 * 2^18 + x0 (two activations of adjacent output pixels packed in the 27-bit A port),
//         B = w; the low product x0*w is P[17:0] sign-extended, the high product x1*w is P[44:18] plus the
//         borrow P[17] of the low one. sum0 = sum_n x0[n]*w[m][n], sum1 = sum_n x1[n]*w[m][n].
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
  // A operand per input lane (shared by the Tm PEs of the lane)
  logic signed [26:0] a [TN];
  always_comb begin
    for (int n = 0; n < TN; n++) begin
      logic [15:0] v0;
      logic [8:0] v1;
      v0 = x0[16 * n +: 16];
      v1 = x1[16 * n +: 9];
      // int8: x1 * 2^18 + x0 = {x1 - sign(x0), x0 sign-extended to 18 bits} (9 + 18 bits)
      a[n] = p16 ? 27'(signed'(v0)) : {v1 - {8'b0, v0[7]}, 18'(signed'(v0))};
    end
  end

  logic signed [44:0] p_q [TN * TM];   // product registers (P)
  logic p16_q;
  always_ff @(posedge clk) begin
    p16_q <= p16;
    for (int m = 0; m < TM; m++)
      for (int n = 0; n < TN; n++) begin
        logic signed [17:0] b;
        b = 18'(signed'(w[16 * (m * TN + n) +: 16]));
        p_q[m * TN + n] <= a[n] * b;
      end
  end

  // adder trees on the product fields shared by both modes: A = sum P[44:18] (signed), B = sum P[17:0]
  // (unsigned), C = sum P[17]. int8: sum0 = sum sext(P[17:0]) = B - C * 2^18, sum1 = sum (P[44:18] + P[17]) = A + C;
  // int16: sum0 = sum P = A * 2^18 + B.
  localparam int LOG2_TN = $clog2(TN);
  localparam int SA = 27 + LOG2_TN, SB = 18 + LOG2_TN, SC = LOG2_TN + 1;
  always_comb begin
    for (int m = 0; m < TM; m++) begin
      logic signed [SA-1:0] sa;
      logic [SB-1:0] sb;
      logic [SC-1:0] sc;
      sa = '0;
      sb = '0;
      sc = '0;
      for (int n = 0; n < TN; n++) begin
        logic signed [44:0] p;
        logic signed [26:0] hi;
        p = p_q[m * TN + n];
        hi = p[44:18];
        sa = sa + SA'(hi);
        sb = sb + SB'(p[17:0]);
        sc = sc + SC'(p[17]);
      end
      if (p16_q) begin
        sum0[ACC_W * m +: ACC_W] = (ACC_W'(sa) << 18) + ACC_W'(sb);
        sum1[ACC_W * m +: ACC_W] = '0;
      end else begin
        sum0[ACC_W * m +: ACC_W] = ACC_W'(sb) - (ACC_W'(sc) << 18);
        sum1[ACC_W * m +: ACC_W] = ACC_W'(sa) + ACC_W'(sc);
      end
    end
  end
endmodule
`default_nettype wire
