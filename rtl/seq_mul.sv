// Serial multiplier for per-instruction setup arithmetic (no wide multiply in one cycle, docs/rtl.md): p = a * b,
// one bit of b per cycle (shift-and-add, LSB first): p is final BW cycles after `load`; `ovf` flags a product
// that does not fit PW bits. Each cycle: one PW-bit add and a shift.
`default_nettype none
module seq_mul #(
  parameter int AW = 12,
  parameter int BW = 12,
  parameter int PW = 24
) (
  input  wire            clk,
  input  wire            load,
  input  wire [AW-1:0]   a,
  input  wire [BW-1:0]   b,
  output logic [PW-1:0]  p,
  output logic           ovf
);
  logic [PW-1:0] x;
  logic [BW-1:0] y;
  logic xl;                                            // a set bit of a was shifted out of x
  wire [PW:0] sum = {1'b0, p} + {1'b0, x};
  always_ff @(posedge clk) begin
    if (load) begin
      x <= PW'(a);
      xl <= AW > PW ? |({{PW{1'b0}}, a} >> PW) : 1'b0;
      y <= b;
      p <= '0;
      ovf <= 1'b0;
    end else begin
      if (y[0]) begin
        p <= sum[PW-1:0];
        ovf <= ovf | sum[PW] | xl;
      end
      x <= x << 1;
      xl <= xl | x[PW-1];
      y <= y >> 1;
    end
  end
endmodule
`default_nettype wire
