// Test bench top for tests/rtl/test_pe_array.py's run on Xilinx's own DSP48E2 simulation model (the unisim
// library's DSP48E2.v, which Vivado installs): rtl/pe_array.sv under `SYNTHESIS` (the primitive instantiated by
// rtl/pe_dsp.sv), with the global set/reset net the unisim models read (glbl.GSR, resolved upwards from each
// DSP48E2) held inactive. Ports as pe_array's.
`default_nettype none
module glbl_stub;
  wire GSR = 1'b0;
endmodule

module pe_array_unisim
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
  glbl_stub glbl();
  pe_array u_pe (.clk, .p16, .x0, .x1, .w, .sum0, .sum1);
endmodule
`default_nettype wire
