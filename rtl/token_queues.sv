// Dependency tokens of the ISA (generator/spec/isa.py): four FIFOs, each a counter of TOKEN_COUNT_BITS bits holding up
// to DEPTH tokens. l2c: LOAD -> COMPUTE, c2l: COMPUTE -> LOAD, c2s: COMPUTE -> STORE module, s2c: STORE module ->
// COMPUTE. A push onto a full FIFO (not popped in the same cycle) is an overflow: the count stays, `overflow` is
// raised (status TOKEN_OVERFLOW). A unit pops only when its FIFO is non-zero (`has_*`; it waits otherwise).
`default_nettype none
module token_queues
  import accel_pkg::*;
#(
  parameter int DEPTH = TOKEN_QUEUE_DEPTH
) (
  input  wire                        clk,
  input  wire                        rst_n,
  input  wire                        clr,
  input  wire                        push_l2c, pop_l2c,
  input  wire                        push_c2l, pop_c2l,
  input  wire                        push_c2s, pop_c2s,
  input  wire                        push_s2c, pop_s2c,
  output logic [TOKEN_COUNT_BITS-1:0] cnt_l2c, cnt_c2l, cnt_c2s, cnt_s2c,
  output logic                       has_l2c, has_c2l, has_c2s, has_s2c,
  output logic                       overflow,       // a push onto a full FIFO this cycle
  output logic                       any             // a FIFO holds tokens
);
  localparam int TW = TOKEN_COUNT_BITS;
  localparam logic [TW-1:0] FULL = TW'(DEPTH);
  wire ovf_l2c = push_l2c && !pop_l2c && cnt_l2c == FULL;
  wire ovf_c2l = push_c2l && !pop_c2l && cnt_c2l == FULL;
  wire ovf_c2s = push_c2s && !pop_c2s && cnt_c2s == FULL;
  wire ovf_s2c = push_s2c && !pop_s2c && cnt_s2c == FULL;
  assign overflow = ovf_l2c || ovf_c2l || ovf_c2s || ovf_s2c;
  assign has_l2c = cnt_l2c != 0;
  assign has_c2l = cnt_c2l != 0;
  assign has_c2s = cnt_c2s != 0;
  assign has_s2c = cnt_s2c != 0;
  assign any = has_l2c || has_c2l || has_c2s || has_s2c;
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      cnt_l2c <= '0;
      cnt_c2l <= '0;
      cnt_c2s <= '0;
      cnt_s2c <= '0;
    end else begin
      if (!ovf_l2c) cnt_l2c <= cnt_l2c + TW'(push_l2c) - TW'(pop_l2c);
      if (!ovf_c2l) cnt_c2l <= cnt_c2l + TW'(push_c2l) - TW'(pop_c2l);
      if (!ovf_c2s) cnt_c2s <= cnt_c2s + TW'(push_c2s) - TW'(pop_c2s);
      if (!ovf_s2c) cnt_s2c <= cnt_s2c + TW'(push_s2c) - TW'(pop_s2c);
    end
  end
endmodule
`default_nettype wire
