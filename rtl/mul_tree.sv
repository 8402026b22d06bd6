// Pipelined unsigned multiplier in LUTs for setup arithmetic (no DSP48E2): p = a * b truncated to PW bits, ovf = the
// product does not fit in PW bits (a * b >= 2^PW). The BW partial products (b[j] ? a << j) are summed four at a time
// per register stage: two 3:2 carry-save levels (LUTs: sum = x ^ y ^ z, carry = majority, shifted one place) and
// one PW-bit carry-propagate adder, so every stage holds one carry chain (issue 46's timing margin: no chain, LUTs,
// another chain between registers); a last stage of two operands when log2(BW) is odd. The overflow is carried
// along as a sticky bit: a carry-save carry shifted out of bit PW - 1, or the adder's carry-out (from the operands'
// top bits registered beside the sum and the registered sum's top bit: no LUT after the chain, no PW + 1st carry
// bit).
// Latency max(1, ceil(clog2(BW) / 2)) clocks from a / b to p, one more to ovf; a new operand pair every clock.
`default_nettype none
module mul_tree #(
  parameter int AW = 12,                // multiplicand bits
  parameter int BW = 8,                 // multiplier bits (the partial products; the narrower operand)
  parameter int PW = AW + BW            // product bits kept (at most 32: one carry chain per stage)
) (
  input  wire            clk,
  input  wire [AW-1:0]   a,
  input  wire [BW-1:0]   b,
  output logic [PW-1:0]  p,
  output logic           ovf
);
  localparam int L = BW > 1 ? $clog2(BW) : 0;          // binary adder levels of the sum
  localparam int N = 1 << L;                           // leaves (partial products, padded with zeros)
  localparam int S = (L + 1) / 2;                      // register stages: four operands each (the last: two, L odd)
  // o: the overflow, one clock behind the sums (its own pipeline: a stage's carry-save carries out of the top bit
  // and its adder's operand top bits registered with the sum, the carry-out formed and ORed with the operands'
  // overflow in the next clock)
  for (genvar st = 0; st <= S; st++) begin : g_st
    localparam int M = st == 0 ? N : ((N >> (2 * st)) > 0 ? (N >> (2 * st)) : 1);   // operands out of this stage
    localparam int K = st == 0 ? 1 : ((N >> (2 * (st - 1))) >= 4 ? 4 : 2);        // operands into each node
    logic [PW-1:0] s [M];
    logic o [M];
    for (genvar j = 0; j < M; j++) begin : g_node
      if (st == 0) begin : g_leaf
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
        wire [PW-1:0] x [K];
        for (genvar k = 0; k < K; k++) begin : g_in
          assign x[k] = g_st[st - 1].s[K * j + k];
        end
        wire [PW-1:0] u, v;                            // the two operands of the carry-propagate adder
        wire lost;                                     // a carry-save carry out of bit PW - 1
        if (K == 4) begin : g_csa
          wire [PW-1:0] s1 = x[0] ^ x[1] ^ x[2];
          wire [PW-1:0] c1 = (x[0] & x[1]) | (x[0] & x[2]) | (x[1] & x[2]);
          wire [PW-1:0] t1 = {c1[PW-2:0], 1'b0};
          wire [PW-1:0] s2 = s1 ^ t1 ^ x[3];
          wire [PW-1:0] c2 = (s1 & t1) | (s1 & x[3]) | (t1 & x[3]);
          assign u = s2;
          assign v = {c2[PW-2:0], 1'b0};
          assign lost = c1[PW-1] || c2[PW-1];
        end else begin : g_two
          assign u = x[0];
          assign v = x[1];
          assign lost = 1'b0;
        end
        wire [PW-1:0] sum = u + v;
        logic ut, vt, lost_q;                          // the adder's operands' top bits, registered with the sum
        always_ff @(posedge clk) begin
          s[j] <= sum;
          {ut, vt, lost_q} <= {u[PW-1], v[PW-1], lost};
        end
        // the adder's carry-out from the registered sum's top bit (no LUT after the chain), ORed with the
        // operands' overflow (one clock behind their sums, as this one)
        logic oc;
        always_comb begin
          oc = lost_q || (ut && vt) || ((ut || vt) && !s[j][PW-1]);
          for (int k = 0; k < K; k++) oc = oc || g_st[st - 1].o[K * j + k];
        end
        always_ff @(posedge clk) o[j] <= oc;
      end
    end
  end
  if (S == 0) begin : g_one
    always_ff @(posedge clk) p <= g_st[0].s[0];
    always_ff @(posedge clk) ovf <= g_st[0].o[0];
  end else begin : g_out
    assign {ovf, p} = {g_st[S].o[0], g_st[S].s[0]};
  end
endmodule
`default_nettype wire
