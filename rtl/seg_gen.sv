// Segment / burst address generator of a strided 2-D DDR transfer (rows x cols pixel runs; row r, column c starts
// at init_addr + r*row_stride + c*pix_stride), shared by LOAD and STORE. The unit decides how runs merge into
// segments (set before `init`, constant during the transfer):
//   all_seg: the whole transfer is one segment;  row_seg: one segment per row;  else one segment per pixel run.
// seg_bytes: bytes of a segment; idx_step: on-chip index step per segment (seg_idx: init_idx + k*idx_step).
// Each segment is cut into AXI4 INCR bursts: beat-aligned start, not across an AXI_BOUNDARY, at most AXI_MAX_BEATS
// beats. One new segment (`take`, when none is being issued or its last burst is accepted) or one burst address per
// cycle; `fire`: the burst on (cur, blen) is accepted (valid: the unit's `seg_v && its own conditions`).
// `en` gates taking segments (the unit's run state, no range error). Positions advance by additions only.
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
  logic [31:0] r, c;                   // position of the next segment
  logic [63:0] rowaddr;                // DDR address of row r
  logic [63:0] left;                   // beats of the segment not yet in a burst
  assign more = r < rows;
  always_comb begin
    logic [63:0] cap;
    cap = (64'(AXI_BOUNDARY) - 64'(cur[BOUND_W-1:0])) >> LOG2_BYTES;
    if (cap > 64'(AXI_MAX_BEATS)) cap = 64'(AXI_MAX_BEATS);
    blast = left <= cap;
    blen = blast ? 9'(left) : 9'(cap);
  end
  assign take = en && (!seg_v || (fire && blast)) && more;
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      {r, c, nxt_idx, seg_idx} <= '0;
      {rowaddr, nxt_addr, cur, left, seg_start, seg_end} <= '0;
      {seg_v, first} <= '0;
    end else if (init) begin
      r <= '0;
      c <= '0;
      rowaddr <= init_addr;
      nxt_addr <= init_addr;
      nxt_idx <= init_idx;
      seg_v <= 1'b0;
    end else begin
      if (fire) begin
        cur <= cur + (64'(blen) << LOG2_BYTES);
        left <= left - 64'(blen);
        first <= 1'b0;
        if (blast) seg_v <= 1'b0;
      end
      if (take) begin
        seg_v <= 1'b1;
        first <= 1'b1;
        seg_start <= nxt_addr;
        seg_end <= nxt_addr + seg_bytes;
        seg_idx <= nxt_idx;
        cur <= nxt_addr & ~64'(AXI_BYTES - 1);
        left <= (64'(nxt_addr[LOG2_BYTES-1:0]) + seg_bytes + 64'(AXI_BYTES - 1)) >> LOG2_BYTES;
        nxt_idx <= nxt_idx + idx_step;
        if (all_seg) begin
          r <= rows;
        end else if (row_seg || c + 32'd1 >= cols) begin
          c <= '0;
          r <= r + 32'd1;
          rowaddr <= rowaddr + row_stride;
          nxt_addr <= rowaddr + row_stride;
        end else begin
          c <= c + 32'd1;
          nxt_addr <= nxt_addr + pix_stride;
        end
      end
    end
  end
endmodule
`default_nettype wire
