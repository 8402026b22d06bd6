// Dependency tokens of the ISA (generator/spec/isa.py): four FIFOs, each a counter of TOKEN_COUNT_BITS bits holding up
// to DEPTH tokens. l2c: LOAD -> COMPUTE, c2l: COMPUTE -> LOAD, c2s: COMPUTE -> STORE module, s2c: STORE module ->
// COMPUTE. A push onto a full FIFO (not popped in the same cycle) is an overflow: the count stays, `overflow` is
// raised (status TOKEN_OVERFLOW) the next cycle. A unit pops only when its FIFO is non-zero (`has_*`; it waits otherwise).
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
  output logic                       overflow,       // a push onto a full FIFO last cycle (registered)
  output logic                       any             // a FIFO holds tokens
);
  localparam int TW = TOKEN_COUNT_BITS;
  localparam logic [TW-1:0] FULL = TW'(DEPTH);
  // per FIFO q (0 l2c, 1 c2l, 2 c2s, 3 s2c): the count, and its flags non-zero / full as registers next to it
  // (updated from the push / pop of the cycle: the units' start conditions read registers, no compare)
  wire [3:0] push = {push_s2c, push_c2s, push_c2l, push_l2c};
  wire [3:0] pop = {pop_s2c, pop_c2s, pop_c2l, pop_l2c};
  logic [TW-1:0] cnt [4];
  logic [3:0] nz, full, ovf;
  always_comb for (int q = 0; q < 4; q++) ovf[q] = push[q] && !pop[q] && full[q];
  assign {has_s2c, has_c2s, has_c2l, has_l2c} = nz;
  assign {cnt_s2c, cnt_c2s, cnt_c2l, cnt_l2c} = {cnt[3], cnt[2], cnt[1], cnt[0]};
  assign any = |nz;
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      for (int q = 0; q < 4; q++) cnt[q] <= '0;
      nz <= '0;
      full <= '0;
      overflow <= 1'b0;
    end else begin
      overflow <= |ovf;
      for (int q = 0; q < 4; q++) begin
        logic inc, dec;
        inc = push[q] && !pop[q] && !full[q];
        dec = pop[q] && !push[q];
        // count + 1 / - 1 side by side, selected AND-OR (a mux of two adders would be shared behind the mux)
        cnt[q] <= ({TW{inc}} & (cnt[q] + 1'b1)) | ({TW{dec}} & (cnt[q] - 1'b1)) | ({TW{!inc && !dec}} & cnt[q]);
        nz[q] <= inc || (dec ? cnt[q] != TW'(1) : nz[q]);
        full[q] <= inc ? cnt[q] == FULL - 1'b1 : dec ? 1'b0 : full[q];
      end
    end
  end
endmodule
`default_nettype wire
