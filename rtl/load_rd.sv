// LOAD data side, up to the chunk (rtl/load.sv is the instruction / address side, rtl/load_wr.sv formats the
// chunks into buffer writes):
// 1. Arrival: each R beat is accepted into a beat FIFO (BQ_DEPTH entries) with what the burst descriptor at the
//    head of the descriptor FIFO (dq, pushed per burst by the address side) says about it: its valid bytes
//    [lo, lo + avail), whether it starts a segment, the segment's first element (span: where its first runs end).
//    rready is a register: set while the FIFO keeps room for two more beats, whatever the walker does.
// 2. Groups: a generator (gen_) cuts the stream of pixel runs, independent of the beats, into lane groups, one per
//    cycle into a group FIFO (GQ_DEPTH): a run's first group ends at the lanes' limit (IBUF Tn elements, PBUF Tm
//    records, WBUF the word's end), the next ones cap bytes later, the last at the run's end. The data's bytes are
//    the runs one after the other (segments hold whole runs), so groups and beats line up by counting bytes.
// 3. Walker: the beat and the group at the FIFO heads are loaded into registers; each cycle one chunk is written:
//    the bytes to the first of the beat's end (avail) and the group's end (gleft), one narrow compare. Span
//    segments (IBUF pixel runs that overlap, one beat at most): d[k] = the segment offset where run q + k ends minus
//    the offset just past the beat; runs q and q + 1 are written when they end in the beat (d <= 0), the beat is
//    held while run q + 2 ends in it too; the flags d <= 0 and "run q + k exists" are computed a cycle ahead.
//    Next values are selected AND-OR from candidates computed side by side (written as a mux of operators,
//    synthesis would share one adder behind the mux, after the compare).
// 4. The chunk goes out registered (w_*); load_wr adds its stages.
// Legend: h_ the beat FIFO's head, g_ the group FIFO's head, dq_ the descriptor at the head of dq, b0 the next beat
// is its burst's first, pbr the current run's first element relative to its segment's (bpb0).
`default_nettype none
module load_rd
  import accel_pkg::*;
#(
  parameter int RUN_W = 24,                              // bytes of a pixel run
  parameter int SPD_W = LOG2_BYTES + 4                   // span offsets relative to the beat (signed)
) (
  input  wire                   clk,
  input  wire                   rst_n,
  input  wire                   clr,
  input  wire                   init,           // the LOAD's setup: constants settle, the group FIFO empties
  // the LOAD's constants (registered in LD_SETUP, stable while it runs)
  input  wire                   prec16,         // the LOAD's prec field: int16
  input  wire                   is_wbuf,
  input  wire                   is_pbuf,
  input  wire                   span,
  input  wire [RUN_W-1:0]       run_bytes,
  input  wire [31:0]            run_step,       // element / record index step per run
  input  wire [F_LOAD_COLS_W-1:0] cols,
  input  wire [SPD_W-1:0]       sp_stride,      // span: pixel stride (< run <= AXI_BYTES)
  input  wire [LOG2_WL-1:0]     wl_lo,          // WBUF: every run's first element mod WL (steps are words)
  // burst descriptors: {first byte of the first beat, bytes of the segment's last beat, last burst of its segment,
  // element index of the segment, first burst of its segment}
  input  wire                   dq_wr,
  input  wire [2*BYTE_POS_W+34-1:0] dq_wdata,
  // R channel
  input  wire                   rvalid,
  input  wire [AXI_DW-1:0]      rdata,
  input  wire                   rlast,
  output logic                  rready,
  output logic                  last_fire,      // a burst's last beat accepted
  output logic                  busy,           // a beat or a chunk not written out yet (this stage)
  // the chunk (registered)
  output logic                  w_chunk,        // a chunk of w_cnt bytes from beat byte w_j0 (not span)
  output logic                  w_span,         // span: runs q / q + 1 end in the beat when w_spe[0] / [1]
  output logic [1:0]            w_spe,
  output logic [AXI_DW-1:0]     w_data,
  output logic [AXI_DW-1:0]     w_prev,         // the segment's previous beat (span window)
  output logic [BYTE_POS_W-1:0] w_j0,
  output logic [BYTE_POS_W-1:0] w_cnt,
  output logic [RUN_W-1:0]      w_e,            // byte of the run where the chunk starts
  output logic [31:0]           w_pb,           // the run's first element / record
  output logic [SPD_W-1:0]      w_d0,           // span: d[0]
  output logic [31:0]           w_qpb           // span: run q's first element
);
  localparam int PW = BYTE_POS_W;
  localparam int WLP = WL_PITCH, TMP = TM_PITCH;                     // WBUF / PBUF lane pitches (isa.lane_pitch)
  localparam int CAP_W = $clog2((2 * WLP > 16 * TMP ? 2 * WLP : 16 * TMP) + 1);   // lane-limit bytes
  localparam int BQ_DEPTH = 4;
  if (CAP_W > RUN_W) begin : g_bad_widths
    $error("load_rd: the lane limit is wider than a run's byte count");
  end

  // ---- constants of the LOAD, registered (valid before the end of its setup)
  logic [CAP_W-1:0] cap;                                              // bytes of a lane group
  logic [CAP_W-1:0] lim_run;                                          // bytes of a run's first lane group
  logic run_rlhi;                                                     // run_bytes >= 2^CAP_W
  logic [SPD_W-1:0] dkc [3];                                          // k*stride + run - AXI_BYTES
  logic [SPD_W-1:0] sinc [4], sninc [4];                              // d step per sp_st, its negation
  logic [2:0] cols_gt;                                                // cols > k
  always_ff @(posedge clk) begin
    cap <= is_pbuf ? CAP_W'(TMP * PARAM_BYTES) : is_wbuf ? CAP_W'(WLP) << prec16 : CAP_W'(TN) << prec16;
    lim_run <= is_wbuf ? (CAP_W'(WLP) - CAP_W'(wl_lo)) << prec16 : cap;
    run_rlhi <= |run_bytes[RUN_W-1:CAP_W];
    for (int k = 0; k < 3; k++) cols_gt[k] <= 32'(cols) > k;
    for (int k = 0; k < 3; k++) dkc[k] <= SPD_W'(k) * sp_stride + SPD_W'(run_bytes) - SPD_W'(AXI_BYTES);
    sinc[0] <= -SPD_W'(AXI_BYTES);
    sinc[1] <= sp_stride - SPD_W'(AXI_BYTES);
    sinc[2] <= (sp_stride << 1) - SPD_W'(AXI_BYTES);
    sinc[3] <= sp_stride << 1;
    for (int i = 0; i < 4; i++) sninc[i] <= -sinc[i];
  end

  // ---- 1. arrival
  localparam int DQ_W = 2 * PW + 34;
  logic [DQ_W-1:0] dq_head;
  logic dq_empty;
  /* verilator lint_off PINCONNECTEMPTY */
  sync_fifo #(.W(DQ_W), .DEPTH(LD_OUTST)) u_dq (
    .clk, .rst_n, .clr, .wr(dq_wr), .wdata(dq_wdata), .rd(last_fire), .rdata(dq_head), .empty(dq_empty),
    .full(), .count());
  /* verilator lint_on PINCONNECTEMPTY */
  wire [PW-1:0] dq_lo0 = dq_head[DQ_W-1 -: PW];
  wire [PW-1:0] dq_hil = dq_head[DQ_W-1-PW -: PW];
  wire dq_lastseg = dq_head[33];
  wire [31:0] dq_idx = dq_head[32:1];
  wire dq_first = dq_head[0];
  logic b0;
  wire acc = rvalid && rready;
  assign last_fire = acc && rlast;
  wire a_seg = dq_first && b0;                                        // the beat starts a segment
  wire [PW-1:0] a_lo = a_seg ? dq_lo0 : '0;
  wire [PW-1:0] a_hi = dq_lastseg && rlast ? dq_hil : PW'(AXI_BYTES);
  logic [3*SPD_W-1:0] a_dk;
  logic [2:0] a_le0;
  always_comb
    for (int k = 0; k < 3; k++) begin
      a_dk[SPD_W * k +: SPD_W] = dkc[k] + SPD_W'(dq_lo0);             // (used at a segment's first beat only)
      a_le0[k] = a_dk[SPD_W * k + SPD_W - 1] || a_dk[SPD_W * k +: SPD_W] == '0;
    end
  localparam int BQ_W = AXI_DW + 2 * PW + 2 + 32 + 3 + 3 * SPD_W;
  logic [BQ_W-1:0] bq_head;
  logic bq_empty, pop;
  logic [$clog2(BQ_DEPTH):0] bq_count;
  /* verilator lint_off PINCONNECTEMPTY */
  sync_fifo #(.W(BQ_W), .DEPTH(BQ_DEPTH)) u_bq (
    .clk, .rst_n, .clr, .wr(acc), .wdata({rdata, a_lo, a_hi - a_lo, dq_lastseg && rlast, a_seg, dq_idx, a_le0, a_dk}), .rd(pop),
    .rdata(bq_head), .empty(bq_empty), .full(), .count(bq_count));
  /* verilator lint_on PINCONNECTEMPTY */
  wire [AXI_DW-1:0] h_data = bq_head[BQ_W-1 -: AXI_DW];
  wire [PW-1:0] h_lo = bq_head[BQ_W-1-AXI_DW -: PW];
  wire [PW-1:0] h_avail = bq_head[BQ_W-1-AXI_DW-PW -: PW];
  wire h_segend = bq_head[33 + 3 + 3 * SPD_W];                       // the beat ends its segment
  wire h_seg = bq_head[32 + 3 + 3 * SPD_W];
  wire [31:0] h_pb0 = bq_head[3 + 3 * SPD_W +: 32];
  wire [2:0] h_le0 = bq_head[3 * SPD_W +: 3];
  wire [3*SPD_W-1:0] h_dk = bq_head[3 * SPD_W - 1:0];
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      rready <= 1'b0;
      b0 <= 1'b1;
    end else begin
      rready <= 32'(bq_count) + 32'(acc) <= BQ_DEPTH - 2;               // (a pop this cycle not counted)
      if (acc) b0 <= rlast;
    end
  end

  // ---- 2. lane groups: {bytes, the run ends with it, its first byte within the run}
  localparam int GQ_DEPTH = 4;
  localparam int GQ_W = CAP_W + 1 + RUN_W;
  logic [RUN_W-1:0] gen_rleft, gen_e;                                 // bytes of the run not in a group yet
  logic gen_first, gen_rlhi;                                          // the run's first group; rleft >= 2^CAP_W
  logic gq_full, gq_empty, gq_pop;
  logic [GQ_W-1:0] gq_head;
  wire [CAP_W-1:0] gen_gl = gen_first ? lim_run : cap;                // the group's limit
  // the run ends in this group; the run bytes left after it: for either limit side by side, selected after the
  // compare / carry (gen_first a register)
  wire gen_end = !gen_rlhi && (gen_first ? gen_rleft[CAP_W-1:0] <= lim_run : gen_rleft[CAP_W-1:0] <= cap);
  wire gen_push = !init && !gq_full;
  /* verilator lint_off PINCONNECTEMPTY */
  sync_fifo #(.W(GQ_W), .DEPTH(GQ_DEPTH)) u_gq (
    .clk, .rst_n, .clr(clr || init), .wr(gen_push),
    .wdata({gen_end ? gen_rleft[CAP_W-1:0] : gen_gl, gen_end, gen_e}), .rd(gq_pop), .rdata(gq_head),
    .empty(gq_empty), .full(gq_full), .count());
  /* verilator lint_on PINCONNECTEMPTY */
  wire [RUN_W-1:0] gen_rl_f = gen_rleft - RUN_W'(lim_run), gen_rl_c = gen_rleft - RUN_W'(cap);
  wire gen_hi_f = |gen_rl_f[RUN_W-1:CAP_W], gen_hi_c = |gen_rl_c[RUN_W-1:CAP_W];
  always_ff @(posedge clk) begin
    if (init || gen_push && gen_end) begin
      gen_rleft <= run_bytes;
      gen_rlhi <= run_rlhi;
      gen_e <= '0;
      gen_first <= 1'b1;
    end else if (gen_push) begin
      gen_rleft <= gen_first ? gen_rl_f : gen_rl_c;
      gen_rlhi <= gen_first ? gen_hi_f : gen_hi_c;
      gen_e <= gen_e + RUN_W'(gen_gl);
      gen_first <= 1'b0;
    end
  end
  wire [CAP_W-1:0] g_size = gq_head[GQ_W-1 -: CAP_W];
  wire g_rend = gq_head[RUN_W];
  wire [RUN_W-1:0] g_e = gq_head[RUN_W-1:0];

  // ---- 3. walker
  logic bv, gv;                                                       // a beat / a group is loaded
  logic [AXI_DW-1:0] bdata, prev;
  logic [PW-1:0] ptr, avail;                                          // next byte, valid bytes from it
  logic bsegend;                                                      // the beat ends its segment
  logic [31:0] bpb0, pbr;
  logic [CAP_W-1:0] gleft;                                            // the group: bytes left
  logic [RUN_W-1:0] gpos;                                             //   the next chunk's first byte in the run
  logic grend;                                                        //   the run ends with it
  logic [SPD_W-1:0] d [3];
  logic [F_LOAD_COLS_W-1:0] nleft;                                    // span: runs not written yet
  logic [31:0] qpb;
  logic [2:0] sp_e, le0, ngt;                                         // d[k] <= 0, nleft > k (registered)
  // the chunk (not span): to the beat's end (c_beat) or the group's end (c_grp), both on a tie
  wire c_beat = CAP_W'(avail) <= gleft;                               // (one carry chain each)
  wire c_grp = gleft <= CAP_W'(avail);
  wire chunk = bv && gv && !span;
  wire [PW-1:0] cnt = c_beat ? avail : gleft[PW-1:0];
  always_comb for (int k = 0; k < 3; k++) sp_e[k] = le0[k] && ngt[k];   // (written when bv && span)
  wire btake_sp = !bv || !sp_e[2];
  wire btake = span ? btake_sp : !bv || (gv && c_beat);
  wire gtake = !span && (!gv || (bv && c_grp));
  assign pop = btake && !bq_empty;
  assign gq_pop = gtake && !gq_empty;
  // span: the step of this cycle, one-hot: {beat held: runs q, q + 1 written (q + 2 ends here too), consumed
  // after 2 / 1 / 0 runs}: d[k] += {2 stride, 2 stride - B, stride - B, -B}; d[k] + inc <= 0 as d[k] <= -inc
  wire sp_cons = !sp_e[2];
  wire [3:0] sp_st = {sp_e[2], sp_e[1] && !sp_e[2], sp_e[0] && !sp_e[1], !sp_e[0]};
  logic [SPD_W-1:0] d_n [3];
  logic [2:0] le0_n, ngt_n;
  always_comb
    for (int k = 0; k < 3; k++) begin
      d_n[k] = '0;
      le0_n[k] = 1'b0;
      for (int i = 0; i < 4; i++) begin
        d_n[k] = d_n[k] | ({SPD_W{sp_st[i]}} & (d[k] + sinc[i]));
        le0_n[k] = le0_n[k] || (sp_st[i] && $signed(d[k]) <= $signed(sninc[i]));
      end
      ngt_n[k] = (sp_st[0] && 32'(nleft) > k) || (sp_st[1] && 32'(nleft) > k + 1)
                 || ((sp_st[2] || sp_st[3]) && 32'(nleft) > k + 2);
    end
  wire [F_LOAD_COLS_W-1:0] nleft_1 = nleft - F_LOAD_COLS_W'(1), nleft_2 = nleft - F_LOAD_COLS_W'(2);
  wire [F_LOAD_COLS_W-1:0] nleft_n = ({F_LOAD_COLS_W{sp_st[0]}} & nleft) | ({F_LOAD_COLS_W{sp_st[1]}} & nleft_1)
                                     | ({F_LOAD_COLS_W{sp_st[2] || sp_st[3]}} & nleft_2);
  // (the three sums side by side from registers, then the one-hot selection: no select logic before the carry)
  wire [31:0] qpb_1 = qpb + run_step, qpb_2 = qpb + (run_step << 1);
  wire [31:0] qpb_n = ({32{sp_st[0]}} & qpb) | ({32{sp_st[1]}} & qpb_1) | ({32{sp_st[2] || sp_st[3]}} & qpb_2);
  wire [CAP_W-1:0] gleft_a = gleft - CAP_W'(avail);
  wire [PW-1:0] ptr_g = ptr + gleft[PW-1:0];
  wire [PW-1:0] avail_g = avail - gleft[PW-1:0];
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      bv <= 1'b0;
      gv <= 1'b0;
      w_chunk <= 1'b0;
      w_span <= 1'b0;
    end else begin
      if (init) gv <= 1'b0;
      else if (gtake) gv <= !gq_empty;
      if (btake) bv <= !bq_empty;
      w_chunk <= chunk;
      w_span <= bv && span;
    end
  end
  always_ff @(posedge clk) begin
    // the group
    if (gtake) begin
      gleft <= g_size;
      gpos <= g_e;
      grend <= g_rend;
    end else if (chunk) begin                        // (not to the group's end: avail < gleft bytes consumed)
      gleft <= gleft_a;
      gpos <= gpos + RUN_W'(avail);
    end
    // the beat
    if (btake) begin
      bdata <= h_data;
      ptr <= h_lo;
      avail <= h_avail;
      bsegend <= h_segend;
      bpb0 <= h_pb0;
    end else if (chunk) begin
      ptr <= ptr_g;
      avail <= avail_g;
    end
    // the run's first element within the segment: + run_step per run, 0 after the segment's last (it ends with
    // the last beat's valid bytes)
    if (init) pbr <= '0;
    else if (chunk && c_grp && grend) pbr <= bsegend && c_beat ? '0 : pbr + run_step;
    // span
    if (btake_sp && !bq_empty && h_seg) begin
      for (int k = 0; k < 3; k++) d[k] <= h_dk[SPD_W * k +: SPD_W];
      le0 <= h_le0;
      ngt <= cols_gt;
      nleft <= cols;
      qpb <= h_pb0;
    end else if (bv && span) begin
      for (int k = 0; k < 3; k++) d[k] <= d_n[k];
      le0 <= le0_n;
      ngt <= ngt_n;
      nleft <= nleft_n;
      qpb <= qpb_n;
    end
    if (bv && (span ? sp_cons : c_beat && gv)) prev <= bdata;
  end
  // ---- 4. the chunk, registered
  always_ff @(posedge clk) begin
    w_spe <= sp_e[1:0];
    w_data <= bdata;
    w_prev <= prev;
    w_j0 <= ptr;
    w_cnt <= cnt;
    w_e <= gpos;                                      // = the group's first byte + gsize - gleft
    w_pb <= bpb0 + pbr;
    w_d0 <= d[0];
    w_qpb <= qpb;
  end
  assign busy = !bq_empty || bv || w_chunk || w_span;
  wire unused = &{1'b0, dq_empty, 1'b0};
endmodule
`default_nettype wire
