// A behavioural stand-in for Xilinx xpm_memory_sdpram (byte-write port A, read port B, read latency 1), only so that
// tests/backends/test_hls_block_design.py can lint and simulate hls_templates/bd/accel_ram.v with Verilator. Not the Xilinx model.
module xpm_memory_sdpram #(parameter integer ADDR_WIDTH_A=6, ADDR_WIDTH_B=6, BYTE_WRITE_WIDTH_A=8,
  parameter CLOCKING_MODE="common_clock", MEMORY_PRIMITIVE="auto", parameter integer MEMORY_SIZE=2048,
  READ_DATA_WIDTH_B=32, READ_LATENCY_B=1, WRITE_DATA_WIDTH_A=32, parameter WRITE_MODE_B="read_first") (
  input sleep, input clka, input ena, input [WRITE_DATA_WIDTH_A/BYTE_WRITE_WIDTH_A-1:0] wea,
  input [ADDR_WIDTH_A-1:0] addra, input [WRITE_DATA_WIDTH_A-1:0] dina, input injectsbiterra, input injectdbiterra,
  input clkb, input rstb, input enb, input regceb, input [ADDR_WIDTH_B-1:0] addrb,
  output reg [READ_DATA_WIDTH_B-1:0] doutb, output sbiterrb, output dbiterrb);
  reg [WRITE_DATA_WIDTH_A-1:0] m [0:(1<<ADDR_WIDTH_A)-1];
  integer i;
  always @(posedge clka) begin
    if (ena) for (i = 0; i < WRITE_DATA_WIDTH_A/8; i = i + 1) if (wea[i]) m[addra][i*8 +: 8] <= dina[i*8 +: 8];
    if (enb) doutb <= m[addrb];
  end
  assign sbiterrb = 0; assign dbiterrb = 0;
endmodule
