// One channel of PRE's datapath (rtl/pre.sv), host/pre.py steps 3-5 on one pixel per clock, CH_LAT = 16 clocks from
// the operands (t) to q:
//   h = (4096 - fx) p[iy][ix] + fx p[iy][ix1] (and the same on row iy1): two DSP48E2 per row as a cascade
//     (rtl/pe_dsp.sv: the first P = A B, the second P = A B + PCIN with AREG = BREG = 2), h at t + 4;
//   v = ((4096 - fy) h[iy] + fy h[iy1] + 2^7) >> 8: two more in cascade (t + 8), the rounding (t + 9) on bits 31:7
//     (a 25-bit add), or v = PAD << 16 for a padding pixel;
//   q = clamp(((v M + 2^(S-1)) >> S) + zp): the 24 x 16-bit product in one DSP48E2 (t + 12), the shift by S - 1
//     in two steps (8 (S-1)[5:3], then (S-1)[2:0]; t + 14), the rounding and zp in one add with the saturation flag
//     (t + 15: x >> (S-1) >= 2^18 is above every qmax whatever zp), the clamp (t + 16).
// Every product a DSP48E2 with its A/B, M and P registers; no carry chain over 25 bits.
// Legend: a_tl / a_tr the top row's pixels at ix / ix1, a_bl / a_br the bottom row's; wx0 = 4096 - fx, wx1 = fx;
// wy0 / wy1 the same of fy (taken at t, delayed here to t + 4); s1 = S - 1.
`default_nettype none
module pre_chan
  import accel_pkg::*;
(
  input  wire               clk,
  input  wire [7:0]         a_tl,
  input  wire [7:0]         a_tr,
  input  wire [7:0]         a_bl,
  input  wire [7:0]         a_br,
  input  wire [12:0]        wx0,
  input  wire [12:0]        wx1,
  input  wire [12:0]        wy0,
  input  wire [12:0]        wy1,
  input  wire               pad,
  input  wire [15:0]        mult,           // run constants
  input  wire [5:0]         s1,
  input  wire [15:0]        zp,
  input  wire               p16,
  output logic signed [15:0] q
);
  localparam int PADV = 114 << 16;
  localparam int SAT = 18;
  wire signed [47:0] pc_t, pc_b, pc_v, unused_p0, unused_p2, unused_p4;
  wire signed [47:0] h_t, h_b, vs, pm, unused_pc1, unused_pc3, unused_pc5, unused_pc6;
  // horizontal: top row (d0, d1) and bottom row (d2, d3)
  pe_dsp #(.AREG(1), .BREG(1), .CASC(1'b0)) d0 (.clk, .a(DSP_A_W'(a_tl)), .b(DSP_B_W'(wx0)), .pcin(48'sd0),
                                                .p(unused_p0), .pcout(pc_t));
  pe_dsp #(.AREG(2), .BREG(2), .CASC(1'b1)) d1 (.clk, .a(DSP_A_W'(a_tr)), .b(DSP_B_W'(wx1)), .pcin(pc_t), .p(h_t),
                                                .pcout(unused_pc1));
  pe_dsp #(.AREG(1), .BREG(1), .CASC(1'b0)) d2 (.clk, .a(DSP_A_W'(a_bl)), .b(DSP_B_W'(wx0)), .pcin(48'sd0),
                                                .p(unused_p2), .pcout(pc_b));
  pe_dsp #(.AREG(2), .BREG(2), .CASC(1'b1)) d3 (.clk, .a(DSP_A_W'(a_br)), .b(DSP_B_W'(wx1)), .pcin(pc_b), .p(h_b),
                                                .pcout(unused_pc3));
  // vertical (d4, d5): the row weights and the padding flag delayed to the stage that takes them
  logic [12:0] wy0_d [4], wy1_d [4];
  logic [7:0] pad_d;
  always_ff @(posedge clk) begin
    wy0_d[0] <= wy0;
    wy1_d[0] <= wy1;
    for (int k = 1; k < 4; k++) begin
      wy0_d[k] <= wy0_d[k - 1];
      wy1_d[k] <= wy1_d[k - 1];
    end
    pad_d <= {pad_d[6:0], pad};
  end
  pe_dsp #(.AREG(1), .BREG(1), .CASC(1'b0)) d4 (.clk, .a(DSP_A_W'(h_t[19:0])), .b(DSP_B_W'(wy0_d[3])),
                                                .pcin(48'sd0), .p(unused_p4), .pcout(pc_v));
  pe_dsp #(.AREG(2), .BREG(2), .CASC(1'b1)) d5 (.clk, .a(DSP_A_W'(h_b[19:0])), .b(DSP_B_W'(wy1_d[3])), .pcin(pc_v),
                                                .p(vs), .pcout(unused_pc5));
  // t + 9: the rounding, or the padding value
  logic [23:0] v;
  wire [25:0] vr = 26'(vs[31:7]) + 26'd1;
  always_ff @(posedge clk) v <= pad_d[7] ? 24'(PADV) : vr[24:1];
  // t + 12: v M
  pe_dsp #(.AREG(1), .BREG(1), .CASC(1'b0)) d6 (.clk, .a(DSP_A_W'(v)), .b(DSP_B_W'(mult)), .pcin(48'sd0), .p(pm),
                                                .pcout(unused_pc6));
  // t + 13 / t + 14: x >> (S - 1)
  logic [39:0] x1, y;
  logic [2:0] s1_lo;
  always_ff @(posedge clk) begin
    x1 <= pm[39:0] >> {s1[5:3], 3'b000};
    s1_lo <= s1[2:0];
    y <= x1 >> s1_lo;
  end
  // t + 15: (y + 1) >> 1 + zp = (y + 2 zp + 1) >> 1 on SAT + 3 bits; t + 16: the clamp
  localparam int NG = (40 - SAT + 5) / 6;
  logic [NG-1:0] hi_g;
  logic signed [SAT+1:0] qz;
  wire signed [SAT+2:0] rx = (SAT + 3)'({1'b0, y[SAT:0]}) + (SAT + 3)'(signed'({zp, 1'b1}));
  always_ff @(posedge clk) begin
    for (int g = 0; g < NG; g++) hi_g[g] <= |((6 * NG)'(y[39:SAT]) >> (6 * g) & (6 * NG)'(6'h3f));
    qz <= rx[SAT+2:1];
  end
  wire signed [SAT+1:0] qmin = p16 ? -(SAT + 2)'(32768) : -(SAT + 2)'(128);
  wire signed [SAT+1:0] qmax = p16 ? (SAT + 2)'(32767) : (SAT + 2)'(127);
  always_ff @(posedge clk) begin
    if (|hi_g) q <= 16'(qmax);
    else if (qz < qmin) q <= 16'(qmin);
    else if (qz > qmax) q <= 16'(qmax);
    else q <= 16'(qz);
  end
  wire unused = &{1'b0, unused_p0, unused_p2, unused_p4, unused_pc1, unused_pc3, unused_pc5, unused_pc6, h_t[47:20],
                  h_b[47:20], vs[47:32], vs[6:0], vr[25], vr[0], pm[47:40], rx[0], 1'b0};
endmodule
`default_nettype wire
