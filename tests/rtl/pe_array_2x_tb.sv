// Test bench of rtl/pe_array_2x.sv: clk made from clk2x by a clk2x register, so every clk edge falls on a clk2x
// edge (as two clocks of one MMCM) and the simulator orders them as the hardware does: at a shared edge the clk2x
// registers sample the clk registers' old values.
`default_nettype none
module pe_array_2x_tb
  import accel_pkg::*;
(
  input  wire                     clk2x,
  output logic                    clk,
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
  initial clk = 1'b0;
  always_ff @(posedge clk2x) clk <= ~clk;
  pe_array_2x u_pe (.clk, .clk2x, .p16, .xa0, .xa1, .xb0, .xb1, .w, .sa0, .sa1, .sb0, .sb1);
endmodule
`default_nettype wire
