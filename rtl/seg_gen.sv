// Segment / burst address generator of a strided 2-D DDR transfer (rows x cols pixel runs; row r, column c starts
// at init_addr + r*row_stride + c*pix_stride), shared by LOAD and STORE. The unit decides how runs merge into
// segments (set before `init`, constant during the transfer):
//   all_seg: the whole transfer is one segment;  row_seg: one segment per row;  else one segment per pixel run.
// seg_bytes: bytes of a segment; idx_step: on-chip index step per segment (seg_idx: init_idx + k*idx_step).
// Each segment is cut into AXI4 INCR bursts: beat-aligned start, not across an AXI_BOUNDARY, at most AXI_MAX_BEATS
// beats. One new segment (`take`, when none is being issued or its last burst is accepted) or one burst address per
// cycle; `fire`: the burst on (cur, blen) is accepted (valid: the unit's `seg_v && its own conditions`).
// `en` gates taking segments (the unit's run state, no range error). Positions advance by additions only, on the
// bits that matter for the clock: DDR addresses are AXI_AW bits (carry-select adds, accel_pkg addr_add), a burst
// address advances within its 4 KB page (the page number by an increment), beats are counted on 28 bits
// (segments are under 4 GB: the DDR size registers are 32 bits), positions on the instruction fields' 12 bits.
`default_nettype none
module seg_gen
  import accel_pkg::*;
(
  input  wire          clk,
  input  wire          rst_n,
  input  wire          clr,
  input  wire          init,           // start a transfer: position (0, 0) at init_addr, index init_idx
  input  wire [63:0]   init_addr,
  input  wire [31:0]   init_idx,
  input  wire [31:0]   rows,
  input  wire [31:0]   cols,
  input  wire [63:0]   row_stride,
  input  wire [63:0]   pix_stride,
  input  wire          all_seg,
  input  wire          row_seg,
  input  wire [63:0]   seg_bytes,
  input  wire [31:0]   idx_step,
  input  wire          en,
  input  wire          fire,
  output logic         take,           // a new segment is taken this cycle (from nxt_addr, nxt_idx)
  output logic [63:0]  nxt_addr,       // DDR address of the next segment
  output logic [31:0]  nxt_idx,        // its on-chip index
  output logic         more,           // segments left to take
  output logic         seg_v,          // a segment is being issued
  output logic [63:0]  cur,            // its next burst's (beat-aligned) address
  output logic [8:0]   blen,           //   beats
  output logic         blast,          //   it is the segment's last burst
  output logic         first,          //   it is the segment's first burst
  output logic [63:0]  seg_start,      // the segment: first byte, one past its last byte, index
  output logic [63:0]  seg_end,
  output logic [31:0]  seg_idx
);
  localparam int BOUND_W = $clog2(AXI_BOUNDARY);
  localparam int PW = 16;              // positions (rows, cols: 12-bit instruction fields)
  localparam int LW = 32 - LOG2_BYTES; // beats of a segment
  logic [PW-1:0] r, c;                 // position of the next segment
  logic c_last;                        // c is the row's last column (registered: c + 1 >= cols)
  logic c_init;                        // no segment taken since init: c_last not yet set (rows / cols may become
                                       // valid only after init)
  logic [AXI_AW-1:0] rowaddr, nxt_a;   // DDR address of row r, of the next segment
  logic [AXI_AW-1:0] cur_a, start_a, end_a;
  logic [LW-1:0] left;                 // beats of the segment not yet in a burst
  wire [PW-1:0] rows_w = PW'(rows), cols_w = PW'(cols);
  wire row_end = c_init ? cols_w <= 1 : c_last;
  // more (registered): r < rows, set at init (rows valid then) and kept with r; at a take r < rows, so r + 1 < rows
  // is r + 1 != rows (an increment, then an equality: one carry chain)
  wire more_row = r + PW'(1) != rows_w;
  assign nxt_addr = 64'(nxt_a);
  assign cur = 64'(cur_a);
  assign seg_start = 64'(start_a);
  assign seg_end = 64'(end_a);
  // beats the next burst may have: the first burst of a segment up to the 4 KB boundary (set at `take` from the
  // segment's start), every later one starts on a boundary (the bursts before it ended there) and may have CAP_MAX
  localparam int CAP_MAX = AXI_BOUNDARY / AXI_BYTES < AXI_MAX_BEATS ? AXI_BOUNDARY / AXI_BYTES : AXI_MAX_BEATS;
  // x + y <= k for a constant k, as one carry chain: x + y + (2^SW - 1 - k) < 2^SW, its three operands reduced
  // to two by a carry-save stage in LUTs (sum and majority per bit), then one addition's top bits
  localparam int SW = BOUND_W + 1;     // a page offset plus a segment's bytes up to AXI_BOUNDARY
  function automatic logic sum_le(input logic [SW-1:0] x, input logic [SW-1:0] y, input logic [SW-1:0] k);
    logic [SW-1:0] kc, xs, mj;
    /* verilator lint_off UNUSEDSIGNAL */
    logic [SW+1:0] t;                  // (only its top two bits are read)
    /* verilator lint_on UNUSEDSIGNAL */
    kc = ~k;                           // 2^SW - 1 - k
    xs = x ^ y ^ kc;
    mj = (x & y) | (x & kc) | (y & kc);
    t = (SW + 2)'(xs) + ((SW + 2)'(mj) << 1);
    sum_le = t[SW+1:SW] == 2'b00;
  endfunction
  if (AXI_BOUNDARY / AXI_BYTES > AXI_MAX_BEATS) begin : g_page $error("seg_gen: blast takes CAP_MAX as a page"); end
  logic [8:0] cap;
  logic [LW-1:0] capm;                 // cap + CAP_MAX (registered with cap: blast's compare is one carry chain)
  always_comb blen = blast ? 9'(left) : cap;     // (blast: left <= cap, a register updated with them)
  assign take = en && (!seg_v || (fire && blast)) && more;
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      {r, c, nxt_idx, seg_idx} <= '0;
      {rowaddr, nxt_a, cur_a, left, start_a, end_a} <= '0;
      cap <= '0;
      capm <= '0;
      blast <= 1'b0;
      {seg_v, first, c_last, c_init, more} <= '0;
    end else if (init) begin
      r <= '0;
      more <= rows_w != 0;
      c <= '0;
      c_init <= 1'b1;
      rowaddr <= AXI_AW'(init_addr);
      nxt_a <= AXI_AW'(init_addr);
      nxt_idx <= init_idx;
      seg_v <= 1'b0;
    end else begin
      if (fire) begin
        logic [BOUND_W:0] off;
        // the next burst (when this is not the segment's last, it has cap beats and ends on a boundary or after
        // CAP_MAX beats): the page number counts when the page offset wraps
        off = (BOUND_W + 1)'(cur_a[BOUND_W-1:0]) + ((BOUND_W + 1)'(cap) << LOG2_BYTES);
        cur_a <= {cur_a[AXI_AW-1:BOUND_W] + (AXI_AW - BOUND_W)'(off[BOUND_W]), off[BOUND_W-1:0]};
        left <= blast ? '0 : left - LW'(cap);
        cap <= 9'(CAP_MAX);
        capm <= LW'(2 * CAP_MAX);
        blast <= left <= capm;                       // (left - cap <= CAP_MAX; not the last burst: left > cap)
        first <= 1'b0;
        if (blast) seg_v <= 1'b0;
      end
      if (take) begin
        logic [LOG2_BYTES+1:0] lo;
        seg_v <= 1'b1;
        first <= 1'b1;
        start_a <= nxt_a;
        end_a <= addr_add(nxt_a, AXI_AW'(seg_bytes[31:0]));
        seg_idx <= nxt_idx;
        cur_a <= nxt_a & ~AXI_AW'(AXI_BYTES - 1);
        // beats: (start's byte in its beat + bytes + AXI_BYTES - 1) / AXI_BYTES, the low bits' carry added alone
        lo = (LOG2_BYTES + 2)'(nxt_a[LOG2_BYTES-1:0]) + (LOG2_BYTES + 2)'(seg_bytes[LOG2_BYTES-1:0])
             + (LOG2_BYTES + 2)'(AXI_BYTES - 1);
        begin
          logic [BOUND_W:0] cp;
          logic [8:0] cn;
          logic [LW-1:0] ln;
          cp = (BOUND_W + 1)'(AXI_BOUNDARY / AXI_BYTES) - (BOUND_W + 1)'(nxt_a[BOUND_W-1:LOG2_BYTES]);
          cn = cp > (BOUND_W + 1)'(CAP_MAX) ? 9'(CAP_MAX) : 9'(cp);
          ln = LW'(seg_bytes[31:LOG2_BYTES]) + LW'(lo >> LOG2_BYTES);
          cap <= cn;
          // cn + CAP_MAX, from nxt_a alone: cp + CAP_MAX beside the compare cp > CAP_MAX (one chain each)
          /* verilator lint_off UNSIGNED */          // (a page of CAP_MAX beats: the compare is constant)
          capm <= nxt_a[BOUND_W-1:LOG2_BYTES] < (BOUND_W - LOG2_BYTES)'(AXI_BOUNDARY / AXI_BYTES - CAP_MAX)
                  ? LW'(2 * CAP_MAX)
                  : LW'(AXI_BOUNDARY / AXI_BYTES + CAP_MAX) - LW'(nxt_a[BOUND_W-1:LOG2_BYTES]);
          /* verilator lint_on UNSIGNED */
          left <= ln;
          // ln <= cn, one carry chain from the registers: ceil((a + S) / AXI_BYTES) beats (a: nxt_a's byte in its
          // beat, S: seg_bytes) fit the room left in the page from its offset P iff P + S <= AXI_BOUNDARY (the render
          // refuses an m_axi under 128 bits: CAP_MAX is a whole page, cn = cp; g_page)
          blast <= seg_bytes[31:SW] == '0 && sum_le(SW'(nxt_a[BOUND_W-1:0]), SW'(seg_bytes), SW'(AXI_BOUNDARY));
        end
        nxt_idx <= nxt_idx + idx_step;
        c_init <= 1'b0;
        if (all_seg) begin
          r <= rows_w;
          more <= 1'b0;
        end else if (row_seg || row_end) begin
          c <= '0;
          c_last <= cols_w <= 1;
          r <= r + 1'b1;
          more <= more_row;
          rowaddr <= addr_add(rowaddr, AXI_AW'(row_stride));
          nxt_a <= addr_add(rowaddr, AXI_AW'(row_stride));
        end else begin
          c <= c + 1'b1;
          c_last <= c + PW'(2) == cols_w;            // (c + 1 < cols here: c + 2 >= cols is c + 2 == cols)
          nxt_a <= addr_add(nxt_a, AXI_AW'(pix_stride));
        end
      end
    end
  end
  wire unused = &{1'b0, init_addr[63:AXI_AW], rows[31:PW], cols[31:PW], row_stride[63:AXI_AW],
                  pix_stride[63:AXI_AW], seg_bytes[63:32], 1'b0};
endmodule
`default_nettype wire
