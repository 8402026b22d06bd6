// PE array double-pumped (issue 46): the Tn x Tm DSP48E2 cascades of rtl/pe_array.sv clocked by clk2x, twice the
// logic clock clk (both from one MMCM, rising edges aligned), so each DSP48E2 multiplies two operand sets per
// logic cycle: the pixel pair A (xa0, xa1) and the pixel pair B (xb0, xb1), which share the weights w. Sharing the
// weights, not the pixels, because the weight word is the wide one (Tn * Tm * 16 bits a cycle: at 32 x 48, 24,576
// bits, about 340 BRAM36 of width) while the pixels are Tn * 16 bits per pixel: a second pixel pair costs IBUF
// width, a second weight set would double WBUF's. Per output lane m:
//   int8  (p16 = 0): sa0 = sum_n xa0[n] w[m][n], sa1 = sum_n xa1[n] w[m][n], sb0, sb1 the same for xb0, xb1
//         (two activations packed in each DSP's A port at PACK_SHIFT, as rtl/pe_array.sv);
//   int16 (p16 = 1): sa0 = sum_n xa0[n] w[m][n], sb0 = sum_n xb0[n] w[m][n], sa1 = sb1 = 0.
// ACC_W-bit two's complement results, a new operand set every clk, latency PE2_LAT clk cycles (below).
//
// Clock crossing without an asynchronous path (as the Vitis AI DPU's dpu_2x_clk): clk-domain registers hold the
// packed A operands of both pairs (pa_s, pb_s) and w (w_s); a clk2x-domain phase register ph (1 in the first half
// of every clk cycle, made from a clk toggle sampled by clk2x) drives a 2:1 multiplexer straight into each DSP48E2's
// A1 register, which takes pair B at the middle clk2x edge and pair A at the next clk edge; B1 takes w_s at both
// edges. Every clk -> clk2x path has half a clk period (one clk2x period): one LUT level (the 2:1 multiplexer) in
// front of the DSP's input register. Back: chain outputs are held in clk2x registers written only at the middle
// clk2x edge (ha, hb: the 1:2 demultiplexer; pd delays pair B's sum by one clk2x cycle so both arrive together),
// so the clk-domain adder trees read registers that never change at a clk edge (half a clk period to settle).
// The chain latency in clk2x cycles is made even (one more clk2x register when PE_G is even) so both sums of one
// operand set are ready at the same middle edge. The adder trees and the combining level are those of
// rtl/pe_array.sv, one per pair, in the clk domain.
//
// Latency, counted as PE_LAT of rtl/pe_array.sv (clk edges from the one that takes the operands to the one that
// gives their sums): PE2_LAT = 3 + L / 2 + PE_TREE_ST, L = 1 + PE_G + (PE_G even) the clk2x cycles from the A1
// register to the chain sum (operands registered; pair B into A1 at the middle clk2x edge, pair A at the next clk
// edge; L clk2x cycles of chain; ha / hb at the middle edge after; the clk-domain leaves; the tree): equal to
// PE_LAT for PE_G = 4, one more for PE_G = 2 (tests/rtl/test_pe_array_2x.py).
// COMPUTE instantiates it when the board file has pump: 2 (rtl/compute.sv).
`default_nettype none
module pe_array_2x
  import accel_pkg::*;
(
  input  wire                     clk,
  input  wire                     clk2x,
  input  wire                     p16,
  input  wire [TN*16-1:0]         xa0,
  input  wire [TN*16-1:0]         xa1,
  input  wire [TN*16-1:0]         xb0,
  input  wire [TN*16-1:0]         xb1,
  input  wire [TN*TM*16-1:0]      w,
  output logic [TM*ACC_W-1:0]     sa0,
  output logic [TM*ACC_W-1:0]     sa1,
  output logic [TM*ACC_W-1:0]     sb0,
  output logic [TM*ACC_W-1:0]     sb1
);
  localparam int HI_W = DSP_P_W - PACK_SHIFT;
  localparam int NC = TN / PE_G, LOG2_NC = $clog2(NC);
  localparam int SA = HI_W + LOG2_TN, SB = PACK_SHIFT + LOG2_TN, SC = LOG2_TN + 1;
  localparam int NL = LOG2_NC + 1;
  localparam int SK = PE_G > 2 ? PE_G - 2 : 1;
  localparam int EXTRA = 1 - PE_G % 2;                 // clk2x registers after the chain: L = 1 + PE_G + EXTRA even
  localparam int L2 = (1 + PE_G + EXTRA) / 2;
  localparam int LAT = 2 + L2 + PE_TREE_ST;            // p16's clk registers to the combining level (PE2_LAT - 1)

  // ---- clk domain: the packed A operands of both pairs and the weights, registered
  logic signed [DSP_A_W-1:0] pa_in [TN], pb_in [TN], pa_s [TN], pb_s [TN];
  always_comb begin
    for (int n = 0; n < TN; n++) begin
      logic [15:0] a0, b0;
      logic [DSP_A_W-PACK_SHIFT-1:0] a1, b1;
      a0 = xa0[16 * n +: 16];
      a1 = xa1[16 * n +: DSP_A_W - PACK_SHIFT];
      b0 = xb0[16 * n +: 16];
      b1 = xb1[16 * n +: DSP_A_W - PACK_SHIFT];
      pa_in[n] = p16 ? DSP_A_W'(signed'(a0)) : {a1 - (DSP_A_W - PACK_SHIFT)'(a0[7]), PACK_SHIFT'(signed'(a0))};
      pb_in[n] = p16 ? DSP_A_W'(signed'(b0)) : {b1 - (DSP_A_W - PACK_SHIFT)'(b0[7]), PACK_SHIFT'(signed'(b0))};
    end
  end
  logic [TN*TM*16-1:0] w_s;
  logic pq [LAT];                                      // p16 along the clk pipeline
  logic t_s;                                           // toggles every clk cycle: the phase reference
  always_ff @(posedge clk) begin
    for (int n = 0; n < TN; n++) {pa_s[n], pb_s[n]} <= {pa_in[n], pb_in[n]};
    w_s <= w;
    pq[0] <= p16;
    for (int k = 1; k < LAT; k++) pq[k] <= pq[k - 1];
    t_s <= ~t_s;
  end

  // ---- clk2x domain: the phase (ph = 1 from a clk edge to the middle clk2x edge), the 2:1 multiplexer
  logic t_f, ph;
  always_ff @(posedge clk2x) begin
    t_f <= t_s;
    ph <= t_f == t_s;
  end
  logic signed [DSP_A_W-1:0] a_mux [TN];
  always_comb
    for (int n = 0; n < TN; n++) a_mux[n] = ph ? pb_s[n] : pa_s[n];
  // fabric skew of chain positions j >= 2 (clk2x registers), as rtl/pe_array.sv
  logic signed [DSP_A_W-1:0] a_sk [SK][TN];
  logic [15:0] w_sk [SK][TN * TM];
  always_ff @(posedge clk2x) begin
    for (int d = 0; d < SK; d++) begin
      for (int n = 0; n < TN; n++)
        if (n % PE_G >= d + 2) a_sk[d][n] <= d == 0 ? a_mux[n] : a_sk[d - 1][n];
      for (int k = 0; k < TN * TM; k++)
        if (k % PE_G >= d + 2) w_sk[d][k] <= d == 0 ? w_s[16 * k +: 16] : w_sk[d - 1][k];
    end
  end
  /* verilator lint_off UNUSEDSIGNAL */
  wire signed [47:0] p_c [TN * TM];
  wire signed [47:0] pc_c [TN * TM];
  /* verilator lint_on UNUSEDSIGNAL */
  for (genvar k = 0; k < TN * TM; k++) begin : g_pe
    localparam int J = k % PE_G, N = k % TN;
    wire signed [DSP_A_W-1:0] a_j = J < 2 ? a_mux[N] : a_sk[J - 2][N];
    wire [15:0] w_j = J < 2 ? w_s[16 * k +: 16] : w_sk[J - 2][k];
    pe_dsp #(.AREG(J == 0 ? 1 : 2), .BREG(J == 0 ? 1 : 2), .CASC(J != 0)) u_dsp (
      .clk(clk2x), .a(a_j), .b(DSP_B_W'(signed'(w_j))), .pcin(J == 0 ? 48'sd0 : pc_c[k == 0 ? 0 : k - 1]),
      .p(p_c[k]), .pcout(pc_c[k]));
  end
  // ---- the 1:2 demultiplexer: chain sums (optionally one clk2x register later), pair B's delayed by pd, both
  // held in ha / hb, written only at the middle clk2x edge (ph = 1 before it)
  logic [DSP_P_W-1:0] pe_x [TM * NC], pd [TM * NC], ha [TM * NC], hb [TM * NC];
  wire [DSP_P_W-1:0] p_end [TM * NC];
  for (genvar c = 0; c < TM * NC; c++) begin : g_end
    wire [DSP_P_W-1:0] p = DSP_P_W'(p_c[(c / NC) * TN + (c % NC) * PE_G + PE_G - 1]);
    if (EXTRA != 0) begin : g_x
      always_ff @(posedge clk2x) pe_x[c] <= p;
      assign p_end[c] = pe_x[c];
    end else begin : g_nx
      assign p_end[c] = p;
    end
  end
  always_ff @(posedge clk2x) begin
    for (int c = 0; c < TM * NC; c++) begin
      pd[c] <= p_end[c];
      if (ph) begin
        ha[c] <= p_end[c];
        hb[c] <= pd[c];
      end
    end
  end

  // ---- clk domain: per pair, the chain sums registered, then the adder trees and combining level of
  // rtl/pe_array.sv (levels 2, 4, ... registered)
  logic [DSP_P_W-1:0] hs [2][TM * NC];
  always_ff @(posedge clk)
    for (int c = 0; c < TM * NC; c++) {hs[0][c], hs[1][c]} <= {ha[c], hb[c]};
  wire p16_t = pq[LAT - 1];
  for (genvar s = 0; s < 2; s++) begin : g_pair
    for (genvar m = 0; m < TM; m++) begin : g_lane
      for (genvar l = 0; l < NL; l++) begin : g_lvl
        logic signed [SA-1:0] ta [NC >> l];
        logic [SB-1:0] tb [NC >> l];
        logic [SC-1:0] tc [NC >> l];
        for (genvar j = 0; j < (NC >> l); j++) begin : g_node
          if (l == 0) begin : g_leaf
            wire [DSP_P_W-1:0] p = hs[s][m * NC + j];
            assign ta[j] = SA'(signed'(p[DSP_P_W-1:PACK_SHIFT]));
            assign tb[j] = SB'(p[PACK_SHIFT-1:0]);
            assign tc[j] = SC'(p[PACK_SHIFT-1]);
          end else begin : g_add
            wire signed [SA-1:0] xa = g_lvl[l - 1].ta[2 * j] + g_lvl[l - 1].ta[2 * j + 1];
            wire [SB-1:0] xb = g_lvl[l - 1].tb[2 * j] + g_lvl[l - 1].tb[2 * j + 1];
            wire [SC-1:0] xc = g_lvl[l - 1].tc[2 * j] + g_lvl[l - 1].tc[2 * j + 1];
            if (l % 2 == 0) begin : g_reg
              always_ff @(posedge clk) {ta[j], tb[j], tc[j]} <= {xa, xb, xc};
            end else begin : g_comb
              assign {ta[j], tb[j], tc[j]} = {xa, xb, xc};
            end
          end
        end
      end
      wire signed [SA-1:0] fa = g_lvl[NL - 1].ta[0];
      wire [SB-1:0] fb = g_lvl[NL - 1].tb[0];
      wire [SC-1:0] fc = g_lvl[NL - 1].tc[0];
      wire signed [SA:0] hi16 = (SA + 1)'(fa) + (SA + 1)'($unsigned(fb[SB-1:PACK_SHIFT]));
      wire signed [SC:0] hi8 = (SC + 1)'($unsigned(fb[SB-1:PACK_SHIFT])) - (SC + 1)'($unsigned(fc));
      // the high-lane sum fa + fc in one carry chain: when the tree's last level is unregistered, fa and fc are
      // themselves additions of registered pairs, so s1 = ta0 + ta1 + tc0 + tc1 as a 4:2 carry-save in LUTs (two
      // 3:2 stages: sum = xor, carry = majority shifted up) before the one addition
      wire signed [SA-1:0] s1;
      if (NL > 1 && (NL - 1) % 2 == 1) begin : g_csa
        wire [SA-1:0] a0 = g_lvl[NL - 2].ta[0], a1 = g_lvl[NL - 2].ta[1];
        wire [SA-1:0] c0 = SA'(g_lvl[NL - 2].tc[0]), c1 = SA'(g_lvl[NL - 2].tc[1]);
        wire [SA-1:0] k0 = a0 ^ a1 ^ c0, k1 = (a0 & a1 | a0 & c0 | a1 & c0) << 1;
        wire [SA-1:0] k2 = k0 ^ k1 ^ c1, k3 = (k0 & k1 | k0 & c1 | k1 & c1) << 1;
        assign s1 = signed'(k2 + k3);
      end else begin : g_s1
        assign s1 = fa + signed'(SA'(fc));
      end
      logic [ACC_W-1:0] r0, r1;
      always_ff @(posedge clk) begin
        r0 <= p16_t ? ACC_W'(signed'({hi16, fb[PACK_SHIFT-1:0]})) : ACC_W'(signed'({hi8, fb[PACK_SHIFT-1:0]}));
        r1 <= p16_t ? '0 : ACC_W'(s1);
      end
      if (s == 0) begin : g_a
        assign sa0[ACC_W * m +: ACC_W] = r0;
        assign sa1[ACC_W * m +: ACC_W] = r1;
      end else begin : g_b
        assign sb0[ACC_W * m +: ACC_W] = r0;
        assign sb1[ACC_W * m +: ACC_W] = r1;
      end
    end
  end
endmodule
`default_nettype wire
