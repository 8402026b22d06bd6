// Serial divider for per-instruction setup arithmetic (no divider in one cycle, docs/rtl.md): q = n / d (unsigned,
// d >= 1), restoring division one quotient bit per cycle, MSB first: q is final NW cycles after `load`.
`default_nettype none
module seq_div #(
  parameter int NW = 12,
  parameter int DW = 3
) (
  input  wire            clk,
  input  wire            load,
  input  wire [NW-1:0]   n,
  input  wire [DW-1:0]   d,
  output logic [NW-1:0]  q                             // dividend bits shift out as quotient bits shift in
);
  logic [DW-1:0] r;                                    // remainder (< d)
  wire [DW:0] rn = {r, q[NW-1]};
  always_ff @(posedge clk) begin
    if (load) begin
      q <= n;
      r <= '0;
    end else if (rn >= {1'b0, d}) begin
      r <= DW'(rn - {1'b0, d});
      q <= {q[NW-2:0], 1'b1};
    end else begin
      r <= DW'(rn);
      q <= {q[NW-2:0], 1'b0};
    end
  end
endmodule
`default_nettype wire
