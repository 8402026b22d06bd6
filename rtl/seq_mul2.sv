// Serial multiplier, two bits of b per cycle (radix 4, LSB first): p = a * b mod 2^PW, final ceil(BW / 2) cycles
// after `load` (rtl/seq_mul.sv takes BW). For per-instruction setup arithmetic on a latency-critical path
// (rtl/pre_insn.sv: a band's checks and its first source row's address). Each cycle: one PW-bit add of 0, x, 2x
// or 3x (3a formed at `load`: one PW-bit add) and the shifts. No overflow flag: callers size PW for the product.
`default_nettype none
module seq_mul2 #(
  parameter int AW = 12,
  parameter int BW = 12,
  parameter int PW = 24
) (
  input  wire            clk,
  input  wire            load,
  input  wire [AW-1:0]   a,
  input  wire [BW-1:0]   b,
  output logic [PW-1:0]  p
);
  localparam int N = (BW + 1) / 2;                     // cycles
  logic [PW-1:0] x, x3;
  logic [2*N-1:0] y;
  logic [PW-1:0] addend;
  wire [PW-1:0] ap = PW'(a);
  always_comb
    case (y[1:0])
      2'd1: addend = x;
      2'd2: addend = {x[PW-2:0], 1'b0};
      2'd3: addend = x3;
      default: addend = '0;
    endcase
  always_ff @(posedge clk) begin
    if (load) begin
      x <= ap;
      x3 <= ap + {ap[PW-2:0], 1'b0};
      y <= (2 * N)'(b);
      p <= '0;
    end else begin
      p <= p + addend;
      x <= {x[PW-3:0], 2'b00};
      x3 <= {x3[PW-3:0], 2'b00};
      y <= y >> 2;
    end
  end
endmodule
`default_nettype wire
