// A behavioural stand-in for Xilinx xpm_memory_tdpram (two read-write ports with byte writes, common clock, read
// latency 1, read_first), only so that tests/backends/test_hls_block_design.py can lint and simulate
// hls_templates/bd/accel_ram.v with Verilator. Not the Xilinx model: a write of both ports to one address in one
// cycle (undefined in UG974) is not modelled.
module xpm_memory_tdpram #(parameter integer ADDR_WIDTH_A=6, ADDR_WIDTH_B=6, BYTE_WRITE_WIDTH_A=8,
  BYTE_WRITE_WIDTH_B=8, parameter CLOCKING_MODE="common_clock", MEMORY_PRIMITIVE="auto",
  parameter integer MEMORY_SIZE=2048, READ_DATA_WIDTH_A=32, READ_DATA_WIDTH_B=32, READ_LATENCY_A=1,
  READ_LATENCY_B=1, WRITE_DATA_WIDTH_A=32, WRITE_DATA_WIDTH_B=32, parameter WRITE_MODE_A="read_first",
  WRITE_MODE_B="read_first") (
  input sleep, input clka, input rsta, input ena, input regcea,
  input [WRITE_DATA_WIDTH_A/BYTE_WRITE_WIDTH_A-1:0] wea, input [ADDR_WIDTH_A-1:0] addra,
  input [WRITE_DATA_WIDTH_A-1:0] dina, output reg [READ_DATA_WIDTH_A-1:0] douta,
  input clkb, input rstb, input enb, input regceb,
  input [WRITE_DATA_WIDTH_B/BYTE_WRITE_WIDTH_B-1:0] web, input [ADDR_WIDTH_B-1:0] addrb,
  input [WRITE_DATA_WIDTH_B-1:0] dinb, output reg [READ_DATA_WIDTH_B-1:0] doutb,
  input injectsbiterra, input injectdbiterra, input injectsbiterrb, input injectdbiterrb,
  output sbiterra, output dbiterra, output sbiterrb, output dbiterrb);
  reg [WRITE_DATA_WIDTH_A-1:0] m [0:(1<<ADDR_WIDTH_A)-1];
  integer i;
  always @(posedge clka) begin
    if (ena) begin
      douta <= m[addra];
      for (i = 0; i < WRITE_DATA_WIDTH_A/8; i = i + 1) if (wea[i]) m[addra][i*8 +: 8] <= dina[i*8 +: 8];
    end
    if (enb) begin
      doutb <= m[addrb];
      for (i = 0; i < WRITE_DATA_WIDTH_B/8; i = i + 1) if (web[i]) m[addrb][i*8 +: 8] <= dinb[i*8 +: 8];
    end
  end
  assign sbiterra = 0; assign dbiterra = 0; assign sbiterrb = 0; assign dbiterrb = 0;
endmodule
