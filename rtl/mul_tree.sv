// Pipelined unsigned multiplier in LUTs for setup arithmetic (no DSP48E2): p = a * b truncated to PW bits, ovf = the
// product does not fit in PW bits (a * b >= 2^PW). The BW partial products (b[j] ? a << j) are summed in a balanced
// tree of PW-bit adders, a register after every second adder level and after the last, so no stage has more than
// two adders in series (a few LUT levels, carry chains of PW bits at most); the overflow of each partial product and
// adder is carried along as a sticky bit.
// Latency max(1, ceil(clog2(BW) / 2)) clocks from a / b to p, one more to ovf; a new operand pair every clock.
`default_nettype none
module mul_tree #(
  parameter int AW = 12,                // multiplicand bits
  parameter int BW = 8,                 // multiplier bits (the partial products; the narrower operand)
  parameter int PW = AW + BW            // product bits kept (at most 32: one carry chain per adder)
) (
  input  wire            clk,
  input  wire [AW-1:0]   a,
  input  wire [BW-1:0]   b,
  output logic [PW-1:0]  p,
  output logic           ovf
);
  localparam int L = BW > 1 ? $clog2(BW) : 0;          // adder levels
  localparam int N = 1 << L;                           // leaves (partial products, padded with zeros)
  // o: the overflow, one clock behind the sums (its own pipeline, so that no stage holds a carry-out and an
  // OR-reduction in series): the leaves' overflow registered, each adder's carry-out registered (c_q), ORed in
  // the levels' stages as the sums are
  for (genvar l = 0; l <= L; l++) begin : g_lvl
    logic [PW-1:0] s [N >> l];
    logic o [N >> l];
    for (genvar j = 0; j < (N >> l); j++) begin : g_node
      if (l == 0) begin : g_leaf
        if (j < BW) begin : g_pp
          wire [AW+j-1:0] sh = (AW + j)'(a) << j;
          if (AW + j > PW) begin : g_cut
            assign s[j] = b[j] ? sh[PW-1:0] : '0;
            always_ff @(posedge clk) o[j] <= b[j] && |sh[AW+j-1:PW];
          end else begin : g_fit
            assign s[j] = b[j] ? PW'(sh) : '0;
            assign o[j] = 1'b0;
          end
        end else begin : g_pad
          assign s[j] = '0;
          assign o[j] = 1'b0;
        end
      end else begin : g_add
        wire [PW-1:0] x = g_lvl[l - 1].s[2 * j], y = g_lvl[l - 1].s[2 * j + 1];
        wire [PW-1:0] sum = x + y;
        // this adder's carry-out, one clock later: from the operands' and the sum's top bits (a LUT after the PW-bit
        // chain, not a PW + 1st carry bit)
        logic c_q;
        always_ff @(posedge clk) c_q <= (x[PW-1] && y[PW-1]) || ((x[PW-1] || y[PW-1]) && !sum[PW-1]);
        wire ov = c_q || g_lvl[l - 1].o[2 * j] || g_lvl[l - 1].o[2 * j + 1];
        if (l % 2 == 0 || l == L) begin : g_reg
          always_ff @(posedge clk) {o[j], s[j]} <= {ov, sum};
        end else begin : g_comb
          assign {o[j], s[j]} = {ov, sum};
        end
      end
    end
  end
  if (L == 0) begin : g_one
    always_ff @(posedge clk) p <= g_lvl[0].s[0];
    always_ff @(posedge clk) ovf <= g_lvl[0].o[0];
  end else begin : g_out
    assign {ovf, p} = {g_lvl[L].o[0], g_lvl[L].s[0]};
  end
endmodule
`default_nettype wire
