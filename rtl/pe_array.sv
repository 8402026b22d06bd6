// PE array: Tn x Tm processing elements, each one signed DSP_A_W x DSP_B_W multiply (27 x 18 -> 45: one DSP48E2,
// UG579, rtl/pe_dsp.sv), in cascades of PE_G DSP48E2s along the input lanes: chain position j (j = n % PE_G) adds
// its product to position j - 1's P in its post-adder (P = M + PCIN, the dedicated PCOUT -> PCIN route), so a
// chain sums PE_G products without fabric adders; per output lane an adder tree sums the Tn / PE_G chain outputs,
// registered every two adder levels. S = PACK_SHIFT (accel_pkg).
//   int8  (p16 = 0): A = x1 * 2^S + x0 (two activations of adjacent output pixels packed in the A port), B = w;
//         the low product x0*w is P[S-1:0] sign-extended, the high product x1*w is P[P_W-1:S] plus the borrow
//         P[S-1] of the low one; a chain's P holds the sum of its PE_G packed products the same way (PE_G <=
//         PACK_GROUP: the low field's sum stays within S signed bits). sum0 = sum_n x0[n]*w[m][n], sum1 = sum_n
//         x1[n]*w[m][n].
//   int16 (p16 = 1): A = x0, B = w; sum0 = sum_n x0[n]*w[m][n], sum1 = 0.
// Elements are 16-bit two's complement (int8 values sign-extended, so B = w sign-extended in both modes); weight
// element (m, n) is w[(m*TN+n)*16 +: 16].
// Pipeline (PE_LAT = 2 + PE_G + PE_TREE_ST clocks from x0 / x1 / w / p16 to sum0 / sum1, a new operand set every
// clock):
//   skew  chain position j takes its operands j clocks after position 0: the DSP's own input registers (AREG =
//         BREG = 1 at j = 0, 2 at j >= 1) and j - 1 fabric registers before them (j >= 2; A's per input lane,
//         shared by the Tm PEs of the lane; B's per PE);
//   A/B   the packed A operand (the packing's 9-bit borrow subtract in LUTs) into the A register, w into B;
//   M     the product;  P  position j: P <= M + P(j - 1) (position 0: + 0): a chain's sum after 2 + PE_G clocks;
//   tree  log2(Tn / PE_G) adder levels of the three product fields, then one level combining them into sum0 /
//         sum1, a register after every second level and after the last (PE_TREE_ST = ceil((log2(Tn / PE_G) + 1)
//         / 2) stages, generator/spec/arch.py pe_tree_stages); every adder at most 32 bits wide.
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
  localparam int NC = TN / PE_G, LOG2_NC = $clog2(NC); // chains per output lane
  localparam int SA = HI_W + LOG2_TN, SB = PACK_SHIFT + LOG2_TN, SC = LOG2_TN + 1;
  localparam int NL = LOG2_NC + 1;                     // adder levels: the trees, then the combining level
  localparam int SK = PE_G > 2 ? PE_G - 2 : 1;         // fabric skew registers of the last chain position
  // ---- the A operand per input lane: int8 x1 * 2^S + x0 = {x1 - sign(x0), x0 sign-extended to S bits}
  logic signed [DSP_A_W-1:0] a_in [TN];
  always_comb begin
    for (int n = 0; n < TN; n++) begin
      logic [15:0] v0;
      logic [DSP_A_W-PACK_SHIFT-1:0] v1;
      v0 = x0[16 * n +: 16];
      v1 = x1[16 * n +: DSP_A_W - PACK_SHIFT];
      a_in[n] = p16 ? DSP_A_W'(signed'(v0)) : {v1 - (DSP_A_W - PACK_SHIFT)'(v0[7]), PACK_SHIFT'(signed'(v0))};
    end
  end
  // ---- fabric skew (chain positions j >= 2: j - 1 registers before the DSP's two): A per lane, w per PE
  logic signed [DSP_A_W-1:0] a_sk [SK][TN];
  logic [15:0] w_sk [SK][TN * TM];
  always_ff @(posedge clk) begin
    for (int d = 0; d < SK; d++) begin
      for (int n = 0; n < TN; n++)
        if (n % PE_G >= d + 2) a_sk[d][n] <= d == 0 ? a_in[n] : a_sk[d - 1][n];
      for (int k = 0; k < TN * TM; k++)
        if (k % PE_G >= d + 2) w_sk[d][k] <= d == 0 ? w[16 * k +: 16] : w_sk[d - 1][k];
    end
  end
  // ---- the cascades: PE (m, n) is position j = n % PE_G of chain n / PE_G of output lane m
  /* verilator lint_off UNUSEDSIGNAL */
  wire signed [47:0] p_c [TN * TM];                    // P of every PE (a chain's last: the chain's sum)
  wire signed [47:0] pc_c [TN * TM];                   // PCOUT of every PE, into the next position's PCIN
  /* verilator lint_on UNUSEDSIGNAL */
  for (genvar k = 0; k < TN * TM; k++) begin : g_pe
    localparam int J = k % PE_G, N = k % TN;
    wire signed [DSP_A_W-1:0] a_j = J < 2 ? a_in[N] : a_sk[J - 2][N];
    wire [15:0] w_j = J < 2 ? w[16 * k +: 16] : w_sk[J - 2][k];
    pe_dsp #(.AREG(J == 0 ? 1 : 2), .BREG(J == 0 ? 1 : 2), .CASC(J != 0)) u_dsp (
      .clk, .a(a_j), .b(DSP_B_W'(signed'(w_j))), .pcin(J == 0 ? 48'sd0 : pc_c[k == 0 ? 0 : k - 1]),
      .p(p_c[k]), .pcout(pc_c[k]));
  end
  // p16 along the pipeline: pq[i] is p16 delayed i + 1 clocks; the combining level (the last register) takes
  // pq[PE_G + PE_TREE_ST] (its sums' operands entered 2 + PE_G + PE_TREE_ST - 1 clocks earlier)
  logic pq [PE_G + PE_TREE_ST + 1];
  always_ff @(posedge clk) begin
    pq[0] <= p16;
    for (int k = 1; k <= PE_G + PE_TREE_ST; k++) pq[k] <= pq[k - 1];
  end

  // ---- adder trees on the product fields shared by both modes: A = sum P[P_W-1:S] (signed), B = sum P[S-1:0]
  // (unsigned), C = sum P[S-1], over the chain outputs. Node j of level l sums nodes 2j and 2j+1 of level l-1
  // (level 0: the chain outputs); levels 2, 4, ... are registered. int8: sum0 = sum sext(P[S-1:0]) = B - C * 2^S, sum1 = sum (P[P_W-1:S] +
  // P[S-1]) = A + C; int16: sum0 = sum P = A * 2^S + B.
  for (genvar m = 0; m < TM; m++) begin : g_lane
    for (genvar l = 0; l < NL; l++) begin : g_lvl
      logic signed [SA-1:0] ta [NC >> l];
      logic [SB-1:0] tb [NC >> l];
      logic [SC-1:0] tc [NC >> l];
      for (genvar j = 0; j < (NC >> l); j++) begin : g_node
        if (l == 0) begin : g_leaf
          wire signed [DSP_P_W-1:0] p = DSP_P_W'(p_c[m * TN + j * PE_G + PE_G - 1]);
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
    wire p16_t = pq[PE_G + PE_TREE_ST];
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
