// PE array: Tn x Tm processing elements, each exactly one signed DSP_A_W x DSP_B_W -> DSP_P_W multiply (27 x 18
// -> 45: one DSP48E2, UG579) with its three register stages, followed by the per-output-lane adder trees,
// registered every two adder levels. S = PACK_SHIFT (accel_pkg).
//   int8  (p16 = 0): A = x1 * 2^S + x0 (two activations of adjacent output pixels packed in the A port), B = w;
//         the low product x0*w is P[S-1:0] sign-extended, the high product x1*w is P[P_W-1:S] plus the borrow
//         P[S-1] of the low one. sum0 = sum_n x0[n]*w[m][n], sum1 = sum_n x1[n]*w[m][n].
//   int16 (p16 = 1): A = x0, B = w; sum0 = sum_n x0[n]*w[m][n], sum1 = 0.
// Elements are 16-bit two's complement (int8 values sign-extended); weight element (m, n) is w[(m*TN+n)*16 +: 16].
// Pipeline (PE_LAT = 3 + PE_TREE_ST clocks from x0 / x1 / w / p16 to sum0 / sum1, a new operand set every clock):
//   A/B  the packed A operand (the packing's 9-bit borrow subtract in LUTs) and B, registered (AREG / BREG);
//   M    the product (MREG);  P  the product again (PREG): Vivado absorbs all three registers into the DSP48E2;
//   tree log2(Tn) adder levels of the three product fields, then one level combining them into sum0 / sum1,
//        a register after every second level and after the last (PE_TREE_ST = ceil((log2(Tn) + 1) / 2) stages,
//        generator/spec/arch.py pe_tree_stages); every adder at most 32 bits wide.
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
  localparam int SA = HI_W + LOG2_TN, SB = PACK_SHIFT + LOG2_TN, SC = LOG2_TN + 1;
  localparam int NL = LOG2_TN + 1;                     // adder levels: the trees, then the combining level
  // ---- A/B registers: the A operand per input lane (shared by the Tm PEs of the lane), B per PE
  logic signed [DSP_A_W-1:0] a_q [TN];
  logic signed [DSP_B_W-1:0] b_q [TN * TM];
  always_ff @(posedge clk) begin
    for (int n = 0; n < TN; n++) begin
      logic [15:0] v0;
      logic [DSP_A_W-PACK_SHIFT-1:0] v1;
      v0 = x0[16 * n +: 16];
      v1 = x1[16 * n +: DSP_A_W - PACK_SHIFT];
      // int8: x1 * 2^S + x0 = {x1 - sign(x0), x0 sign-extended to S bits}
      a_q[n] <= p16 ? DSP_A_W'(signed'(v0)) : {v1 - (DSP_A_W - PACK_SHIFT)'(v0[7]), PACK_SHIFT'(signed'(v0))};
    end
    for (int k = 0; k < TN * TM; k++) b_q[k] <= DSP_B_W'(signed'(w[16 * k +: 16]));
  end
  // ---- M and P registers
  logic signed [DSP_P_W-1:0] m_q [TN * TM];
  logic signed [DSP_P_W-1:0] p_q [TN * TM];
  always_ff @(posedge clk) begin
    for (int m = 0; m < TM; m++)
      for (int n = 0; n < TN; n++) m_q[m * TN + n] <= a_q[n] * b_q[m * TN + n];
    for (int k = 0; k < TN * TM; k++) p_q[k] <= m_q[k];
  end
  // p16 along the pipeline: pq[0] beside the A/B registers, pq[1] M, pq[2] P, pq[2 + t] tree stage t
  logic pq [2 + PE_TREE_ST];
  always_ff @(posedge clk) begin
    pq[0] <= p16;
    for (int k = 1; k < 2 + PE_TREE_ST; k++) pq[k] <= pq[k - 1];
  end

  // ---- adder trees on the product fields shared by both modes: A = sum P[P_W-1:S] (signed), B = sum P[S-1:0]
  // (unsigned), C = sum P[S-1]. Node j of level l sums nodes 2j and 2j+1 of level l-1 (level 0: the products);
  // levels 2, 4, ... are registered. int8: sum0 = sum sext(P[S-1:0]) = B - C * 2^S, sum1 = sum (P[P_W-1:S] +
  // P[S-1]) = A + C; int16: sum0 = sum P = A * 2^S + B.
  for (genvar m = 0; m < TM; m++) begin : g_lane
    for (genvar l = 0; l < NL; l++) begin : g_lvl
      logic signed [SA-1:0] ta [TN >> l];
      logic [SB-1:0] tb [TN >> l];
      logic [SC-1:0] tc [TN >> l];
      for (genvar j = 0; j < (TN >> l); j++) begin : g_node
        if (l == 0) begin : g_leaf
          wire signed [DSP_P_W-1:0] p = p_q[m * TN + j];
          assign ta[j] = SA'(signed'(p[DSP_P_W-1:PACK_SHIFT]));
          assign tb[j] = SB'(p[PACK_SHIFT-1:0]);
          assign tc[j] = SC'(p[PACK_SHIFT-1]);
        end else begin : g_add
          wire signed [SA-1:0] sa = g_lvl[l - 1].ta[2 * j] + g_lvl[l - 1].ta[2 * j + 1];
          wire [SB-1:0] sb = g_lvl[l - 1].tb[2 * j] + g_lvl[l - 1].tb[2 * j + 1];
          wire [SC-1:0] sc = g_lvl[l - 1].tc[2 * j] + g_lvl[l - 1].tc[2 * j + 1];
          if (l % 2 == 0) begin : g_reg
            always_ff @(posedge clk) {ta[j], tb[j], tc[j]} <= {sa, sb, sc};
          end else begin : g_comb
            assign {ta[j], tb[j], tc[j]} = {sa, sb, sc};
          end
        end
      end
    end
    // the combining level, always registered: the high field added above the low field's S bits
    wire signed [SA-1:0] fa = g_lvl[NL - 1].ta[0];
    wire [SB-1:0] fb = g_lvl[NL - 1].tb[0];
    wire [SC-1:0] fc = g_lvl[NL - 1].tc[0];
    wire p16_t = pq[1 + PE_TREE_ST];
    wire signed [SA:0] hi16 = (SA + 1)'(fa) + (SA + 1)'($unsigned(fb[SB-1:PACK_SHIFT]));
    wire signed [SC:0] hi8 = (SC + 1)'($unsigned(fb[SB-1:PACK_SHIFT])) - (SC + 1)'($unsigned(fc));
    wire signed [SA-1:0] s1 = fa + signed'(SA'(fc));   // (SA bits wide: its carry chain ends there)
    always_ff @(posedge clk) begin
      sum0[ACC_W * m +: ACC_W] <= p16_t ? ACC_W'(signed'({hi16, fb[PACK_SHIFT-1:0]}))
                                        : ACC_W'(signed'({hi8, fb[PACK_SHIFT-1:0]}));
      sum1[ACC_W * m +: ACC_W] <= p16_t ? '0 : ACC_W'(s1);
    end
  end
endmodule
`default_nettype wire
