// POST's activation table for one output lane (generator/spec/isa.py TABLE_ENTRIES; TB_LAT = TABLE_STAGES
// registers from `q` to `y`): u = q - qmin, entry i = u >> (bits - 8) (int8: u itself), fraction f = the low 8 bits
// (int16; 0 in int8); y = clamp(base[i] + ((delta[i] * f + 128) >> 8)). The lane's TBUF memory holds the table as
// TB_D records of four (base, delta) int16 pairs (rtl/buffers.sv); its read is synchronous.
// Stages: T1 the entry index and fraction (the record row goes to the RAM); T2 the RAM output; T3 the pair of the
// record selected, base and delta registered; T4, T5 delta * f (a shift-and-add tree in LUTs, rtl/mul_tree.sv: the
// DSP48E2s stay with the PE array); T6 (p + 128) >>> 8; T7 + base; T8 the clamp to int8 / int16.
`default_nettype none
module act_table
  import accel_pkg::*;
(
  input  wire                     clk,
  input  wire signed [15:0]       q,              // requantized value (the table's input domain)
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
  // T8: the clamp
  wire signed [17:0] qmin = p16 ? -18'sd32768 : -18'sd128;
  wire signed [17:0] qmax = p16 ? 18'sd32767 : 18'sd127;
  always_ff @(posedge clk) begin
    if (t7_s < qmin) y <= 16'(qmin);
    else if (t7_s > qmax) y <= 16'(qmax);
    else y <= 16'(t7_s);
  end
endmodule
`default_nettype wire
