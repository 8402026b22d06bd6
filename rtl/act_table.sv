// POST's activation table for one output lane (generator/spec/isa.py TABLE_ENTRIES; TB_LAT = TABLE_STAGES
// registers from `q` to `y`): u = q - qmin, entry i = u >> (bits - 8) (int8: u itself), fraction f = the low 8 bits
// (int16; 0 in int8); y = clamp(base[i] + ((delta[i] * f + 128) >> 8)). The lane's TBUF memory holds the table as
// TB_D records of four (base, delta) int16 pairs (rtl/buffers.sv); its read is synchronous.
// Stages: T1 the entry index and fraction (the record row goes to the RAM); T2 the RAM output; T3 the pair of the
// record selected, base and delta registered; T4, T5 delta * f (a shift-and-add tree in LUTs, rtl/mul_tree.sv: the
// DSP48E2s stay with the PE array); T6 (p + 128) >>> 8; T7 + base; T8 the clamp to int8 / int16.
// The identity above the table's window (POST id_above, isa.ID_SHIFT_MAX; `id_en` and `id_sh` constant while a POST
// runs), beside the table read, adders and a barrel shifter only: where `above` (the unclamped requantized value
// p > qmax), y = clamp(((p0 + r) >> id_sh) + zp_id), p0 = p - zp_out = (x + 1) >> 1 of x = (v*M) >> (s-1) (`x`,
// rtl/requant.sv), r = 2^(id_sh-1) (0 for id_sh 0); that is clamp(h + c + zp_id) with h = x >>> (id_sh + 1) and
// the rounding carry c = x[id_sh] | (id_sh > 0 && x[id_sh-1:0] all ones) (floor((x + 1 + 2^id_sh) / 2^(id_sh+1))).
// I1 h by 1 + 8*id_sh[3], x[id_sh] and the all-ones test; I2 the shift by id_sh[2:0], c; I3 h + zp_id (19 bits) and
// whether h leaves [-2^17, 2^17) (the result then saturates whatever zp_id); I4 + c; I5 the clamp; I6, I7 delays;
// the table's T8 takes it instead of its own clamp.
`default_nettype none
module act_table
  import accel_pkg::*;
#(
  parameter int XI_W = 34
)
(
  input  wire                     clk,
  input  wire signed [15:0]       q,              // requantized value (the table's input domain)
  input  wire                     above,          // beside q: the unclamped requantized value > qmax
  input  wire signed [XI_W-1:0]   x,              // beside q: (v*M) >> (s-1), saturated (rtl/requant.sv)
  input  wire                     id_en,          // the identity above the window (POST id_above and the table bit)
  input  wire [3:0]               id_sh,          // POST id_shift
  input  wire signed [15:0]       zp_id,          // POST zp_id
  input  wire                     p16,            // int16 (else int8)
  output logic [TB_AW-1:0]        raddr,          // TBUF record row (registered: T1)
  input  wire [PREC_W-1:0]        rdata,          // TBUF record (T2)
  output logic signed [15:0]      y
);
  // T1: u = q - qmin (the sign bit inverted), the entry and its pair within the record
  wire [15:0] u = p16 ? {~q[15], q[14:0]} : {8'd0, ~q[7], q[6:0]};
  wire [7:0] ent = p16 ? u[15:8] : u[7:0];
  logic [1:0] t1_j;
  logic [7:0] t1_f;
  always_ff @(posedge clk) begin
    raddr <= TB_AW'(ent >> 2);
    t1_j <= ent[1:0];
    t1_f <= p16 ? u[7:0] : 8'd0;
  end
  // T2: the RAM's output register
  logic [1:0] t2_j;
  logic [7:0] t2_f;
  always_ff @(posedge clk) begin
    t2_j <= t1_j;
    t2_f <= t1_f;
  end
  // T3: base and delta of pair j (A/B registers)
  logic signed [15:0] t3_base, t3_delta;
  logic [7:0] t3_f;
  always_ff @(posedge clk) begin
    t3_base <= signed'(rdata[32 * t2_j +: 16]);
    t3_delta <= signed'(rdata[32 * t2_j + 16 +: 16]);
    t3_f <= t2_f;
  end
  // T4, T5: delta * f in LUTs (rtl/mul_tree.sv, two clocks; no DSP48E2): delta sign-extended to 24 bits, the
  // product modulo 2^24 is exact (|delta * f| < 2^23)
  wire [23:0] t5_pu;
  /* verilator lint_off PINCONNECTEMPTY */
  mul_tree #(.AW(24), .BW(8), .PW(24)) u_mul (.clk, .a(24'(t3_delta)), .b(t3_f), .p(t5_pu), .ovf());
  /* verilator lint_on PINCONNECTEMPTY */
  wire signed [24:0] t5_p = 25'(signed'(t5_pu));
  logic signed [15:0] t4_base, t5_base;
  always_ff @(posedge clk) begin
    t4_base <= t3_base;
    t5_base <= t4_base;
  end
  // T6: the rounded interpolation step; T7: + base
  logic signed [16:0] t6_d;
  logic signed [15:0] t6_base;
  logic signed [17:0] t7_s;
  wire signed [24:0] rnd = t5_p + 25'sd128;
  wire unused_rnd = &{1'b0, rnd[7:0], 1'b0};
  always_ff @(posedge clk) begin
    t6_d <= rnd[24:8];
    t6_base <= t5_base;
    t7_s <= 18'(t6_base) + 18'(t6_d);
  end
  wire signed [17:0] qmin = p16 ? -18'sd32768 : -18'sd128;
  wire signed [17:0] qmax = p16 ? 18'sd32767 : 18'sd127;
  // the identity above the window, I1 .. I7 (see the header)
  localparam int H_W = XI_W - 1;                       // h = x >>> (id_sh + 1): at most XI_W - 1 bits
  logic [14:0] below;                                  // bits under id_sh (a decode of the constant id_sh: a LUT each)
  always_comb for (int j = 0; j < 15; j++) below[j] = 4'(j) < id_sh;
  wire [15:0] x_lo = x[15:0];
  logic signed [H_W-1:0] i1_h, i2_h;
  logic i1_xs, i1_ones, i1_a, i2_c, i2_a, i3_c, i3_a, i3_ov, i3_neg, i4_a, i4_ov, i4_neg, i5_a, i6_a, i7_a;
  logic signed [18:0] i3_s, i4_s;
  logic signed [15:0] i5_y, i6_y, i7_y;
  always_ff @(posedge clk) begin
    i1_h <= H_W'(x >>> {id_sh[3], 3'b001});
    i1_xs <= x_lo[id_sh];
    i1_ones <= id_sh != 4'd0 && &(x_lo[14:0] | ~below);
    i1_a <= id_en && above;
    i2_h <= i1_h >>> id_sh[2:0];
    i2_c <= i1_xs || i1_ones;
    i3_s <= 19'(signed'(i2_h[17:0])) + 19'(zp_id);
    i3_ov <= !(&i2_h[H_W-1:17]) && !(~|i2_h[H_W-1:17]);
    i3_neg <= i2_h[H_W-1];
    i3_c <= i2_c;
    i4_s <= i3_s + 19'(i3_c);
    {i4_ov, i4_neg} <= {i3_ov, i3_neg};
    {i2_a, i3_a, i4_a, i5_a, i6_a, i7_a} <= {i1_a, i2_a, i3_a, i4_a, i5_a, i6_a};
    if (i4_ov) i5_y <= i4_neg ? 16'(qmin) : 16'(qmax);
    else if (i4_s < 19'(qmin)) i5_y <= 16'(qmin);
    else if (i4_s > 19'(qmax)) i5_y <= 16'(qmax);
    else i5_y <= 16'(i4_s);
    {i6_y, i7_y} <= {i5_y, i6_y};
  end
  // T8: the clamp, or the identity above the window
  always_ff @(posedge clk) begin
    if (i7_a) y <= i7_y;
    else if (t7_s < qmin) y <= 16'(qmin);
    else if (t7_s > qmax) y <= 16'(qmax);
    else y <= 16'(t7_s);
  end
endmodule
`default_nettype wire
