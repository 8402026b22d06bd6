// Logarithmic shifter / rotator of N elements of E bits by sh (S bits: stage b moves 2^b elements if sh[b], a 2:1
// select per bit; ABC packs two stages into a LUT6 4:1): y[j] = x[j + sh] (UP 0) or x[j - sh] (UP 1), indices mod N
// (ROT 1) or zero outside 0 .. N - 1 (ROT 0). What LOAD's IBUF write rotations (rtl/load_wr.sv) and COMPUTE's
// bypass elements (rtl/compute.sv) use instead of an N:1 multiplexer per element.
`default_nettype none
module log_shift #(
  parameter int E = 8,
  parameter int N = 2,
  parameter int S = 1,
  parameter bit ROT = 1'b1,
  parameter bit UP = 1'b0
) (
  input  wire [S-1:0]   sh,
  input  wire [E*N-1:0] x,
  output wire [E*N-1:0] y
);
  if (S > 0 && (1 << (S - 1)) >= N) begin : g_bad
    $error("log_shift: a stage moves 2^(S-1) >= N elements");
  end
  for (genvar b = 0; b < S; b++) begin : g_st
    localparam int K = E * (1 << b);
    wire [E*N-1:0] i, m;
    if (b == 0) begin : g_in
      assign i = x;
    end else begin : g_prev
      assign i = g_st[b - 1].o;
    end
    if (UP) begin : g_up
      assign m = {i[E * N - K - 1 : 0], ROT ? i[E * N - 1 -: K] : K'(0)};
    end else begin : g_down
      assign m = {ROT ? i[0 +: K] : K'(0), i[E * N - 1 : K]};
    end
    wire [E*N-1:0] o = sh[b] ? m : i;
  end
  if (S == 0) begin : g_none
    assign y = x;
  end else begin : g_out
    assign y = g_st[S - 1].o;
  end
endmodule
`default_nettype wire
