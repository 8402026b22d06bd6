// PRE's burst splitter (rtl/pre.sv): one transfer of `beats` beats from the beat-aligned address `addr` cut into AXI4
// INCR bursts that never cross an AXI_BOUNDARY (4 KB) page nor a MAX_BEATS-beat-aligned block (the reads: 256, the
// writes: what rtl/pre_wr.sv holds before an address), one burst per accepted address (`fire`). The same rule as
// rtl/seg_gen.sv, for a DW-bit bus (PRE's width is a parameter): the first burst runs to its block's end, every
// later one starts on a block boundary and may take CAP_MAX beats. Addresses advance within the block (BW bits) and
// the block number by an increment; the beats left on 16 bits.
// Legend: cur the next burst's address, left the beats not in a burst yet, cap the next burst's beats unless it is
// the last (blast).
`default_nettype none
module pre_burst
  import accel_pkg::*;
#(
  parameter int DW = AXI_DW,
  parameter int MAX_BEATS = AXI_MAX_BEATS   // beats of a burst at most (a power of two)
) (
  input  wire               clk,
  input  wire               rst_n,
  input  wire               init,           // take a transfer (valid from the next cycle)
  input  wire [AXI_AW-1:0]  addr,           // beat-aligned
  input  wire [15:0]        beats,          // >= 1
  input  wire               fire,           // the burst on (cur, blen) is accepted
  output logic              valid,          // a burst is offered
  output logic [AXI_AW-1:0] cur,
  output logic [8:0]        blen,           // its beats
  output logic              blast           // it is the transfer's last
);
  localparam int B = DW / 8, LB = $clog2(B);
  // bursts never cross a boundary of BW address bits: the 4 KB page, or MAX_BEATS beats when that is less
  localparam int BW = $clog2(AXI_BOUNDARY) < LB + $clog2(MAX_BEATS) ? $clog2(AXI_BOUNDARY) : LB + $clog2(MAX_BEATS);
  localparam int PAGE = (1 << BW) / B;
  localparam int CAP_MAX = PAGE < AXI_MAX_BEATS ? PAGE : AXI_MAX_BEATS;
  logic [15:0] left;
  logic [8:0] cap;
  logic [15:0] capm;                                // cap + CAP_MAX (blast's compare at a fire: one carry chain)
  assign blen = blast ? 9'(left) : cap;             // (blast: left <= cap)
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      valid <= 1'b0;
      {cur, left, cap, capm, blast} <= '0;
    end else if (init) begin
      logic [BW-LB:0] cp;
      logic [8:0] cn;
      cp = (BW - LB + 1)'(PAGE) - (BW - LB + 1)'(addr[BW-1:LB]);
      cn = cp > (BW - LB + 1)'(CAP_MAX) ? 9'(CAP_MAX) : 9'(cp);
      valid <= 1'b1;
      cur <= addr;
      left <= beats;
      cap <= cn;
      /* verilator lint_off UNSIGNED */              // (PAGE = CAP_MAX: the first burst never reaches CAP_MAX)
      capm <= addr[BW-1:LB] < (BW - LB)'(PAGE - CAP_MAX) ? 16'(2 * CAP_MAX)
                                                        : 16'(PAGE + CAP_MAX) - 16'(addr[BW-1:LB]);
      /* verilator lint_on UNSIGNED */
      blast <= beats <= 16'(cn);
    end else if (fire) begin
      logic [BW:0] off;
      off = (BW + 1)'(cur[BW-1:0]) + ((BW + 1)'(cap) << LB);
      cur <= {cur[AXI_AW-1:BW] + (AXI_AW - BW)'(off[BW]), off[BW-1:0]};
      left <= left - 16'(cap);
      cap <= 9'(CAP_MAX);
      capm <= 16'(2 * CAP_MAX);
      blast <= left <= capm;                        // (left - cap <= CAP_MAX; not the last burst: left > cap)
      if (blast) valid <= 1'b0;
    end
  end
endmodule
`default_nettype wire
