// LOAD module: executes CONFIG (precision, ISA / configuration checks) and LOAD (DDR -> IBUF / WBUF / PBUF).
// Address side: seg_gen cuts the transfer into segments: the whole transfer (rows and pixels contiguous), one row
// of contiguous pixels, one row span (IBUF only: pixel runs that overlap, 0 < stride < run <= 2 x stride, run <= one
// beat, e.g. the folded first layer: every byte of the span is fetched once), or one pixel run; one burst address
// per cycle, up to LD_OUTST bursts in flight; a descriptor FIFO (ldq) carries each burst's segment to the data side.
// Data side: each beat is written as chunks, one per cycle: a chunk is the beat's bytes of one pixel run that touch
// each lane memory at most once (IBUF: <= Tn elements; WBUF: within one word; PBUF: <= Tm records); rready is held
// for the extra chunks. Span segments: the previous beat is kept, each run is written whole from the two-beat
// window once its last byte has arrived (two runs per cycle through both IBUF ports); load_wr formats the writes.
// Range checks (OUT_OF_RANGE): extents computed in LD_SETUP, compared in the first LD_RUN cycle (no address yet).
// Legend: ld_ instruction / address side; ldr_ the data side's position in the burst at the head of ldq (burst
// address, segment start / end, beat, byte pointer, byte within the run (e), run's first element (pb)); sp_ span
// segments (run q = the next run ending in the data, qoff its segment byte offset, qpb its first element).
`default_nettype none
module load
  import accel_pkg::*;
(
  input  wire                   clk,
  input  wire                   rst_n,
  input  wire                   clr,
  input  wire                   run,
  input  wire                   stop,
  input  wire [4*64-1:0]        base_addrs,
  input  wire [4*32-1:0]        ddr_sizes,
  input  wire [INSN_BITS-1:0]   lq_rdata,
  input  wire                   lq_empty,
  output logic                  lq_rd,
  input  wire                   has_c2l,
  output logic                  pop_c2l,
  output logic                  push_l2c,
  output logic                  prec16,         // CONFIG.precision: 0 int8, 1 int16
  output logic                  cfg_err_isa,    // ISA_VERSION_MISMATCH this cycle
  output logic                  cfg_err_cfg,    // CONFIG_MISMATCH this cycle
  output logic                  oob,            // OUT_OF_RANGE this cycle
  output logic                  idle,
  // read channel (through axi_rd_arb)
  output logic                  arvalid,
  output logic [63:0]           araddr,
  output logic [7:0]            arlen,
  input  wire                   ar_ok,
  input  wire                   rvalid,
  output logic                  rready,
  input  wire [AXI_DW-1:0]      rdata,
  input  wire                   rlast,
  // buffer writes (bank ld_bank)
  output logic                  bank,
  output logic [2*2*TN-1:0]     ibw_we,         // IBUF port A at [0 +: 2*TN], port B at [2*TN +: 2*TN]
  output logic [2*16*TN-1:0]    ibw_data,
  output logic [2*IB_AW*TN-1:0] ibw_row,
  output logic [2*WL-1:0]       wbw_we,
  output logic [16*WL-1:0]      wbw_data,
  output logic [WB_AW-1:0]      wbw_row,
  output logic [PARAM_BYTES*TM-1:0] pbw_we,
  output logic [PREC_W*TM-1:0]  pbw_data,
  output logic [PB_AW*TM-1:0]   pbw_row
);
  typedef enum logic [2:0] {LD_IDLE, LD_SETUP, LD_RUN, LD_WAIT, LD_DONE} ld_state_t;
  ld_state_t ld_state;
  logic [INSN_BITS-1:0] ld_ins;
  wire [1:0]  ld_buf = ld_ins[F_LOAD_BUF_LSB +: F_LOAD_BUF_W];
  assign bank = ld_ins[F_LOAD_BANK_LSB +: F_LOAD_BANK_W];
  wire [1:0]  ld_base_reg = ld_ins[F_LOAD_BASE_REG_LSB +: F_LOAD_BASE_REG_W];
  wire [31:0] ld_ddr_offset = 32'(ld_ins[F_LOAD_DDR_OFFSET_LSB +: F_LOAD_DDR_OFFSET_W]);
  wire [31:0] ld_rows = 32'(ld_ins[F_LOAD_ROWS_LSB +: F_LOAD_ROWS_W]);
  wire [31:0] ld_cols = 32'(ld_ins[F_LOAD_COLS_LSB +: F_LOAD_COLS_W]);
  wire [31:0] ld_elems = 32'(ld_ins[F_LOAD_ELEMS_LSB +: F_LOAD_ELEMS_W]);
  wire [63:0] ld_row_stride = 64'(ld_ins[F_LOAD_ROW_STRIDE_LSB +: F_LOAD_ROW_STRIDE_W]);
  wire [63:0] ld_pix_stride = 64'(ld_ins[F_LOAD_PIX_STRIDE_LSB +: F_LOAD_PIX_STRIDE_W]);
  wire [31:0] ld_dst_word = 32'(ld_ins[F_LOAD_DST_WORD_LSB +: F_LOAD_DST_WORD_W]);
  wire [31:0] ld_dst_elem = 32'(ld_ins[F_LOAD_DST_ELEM_LSB +: F_LOAD_DST_ELEM_W]);
  wire [31:0] ld_dst_pitch = 32'(ld_ins[F_LOAD_DST_PITCH_LSB +: F_LOAD_DST_PITCH_W]);
  wire ld_is_pbuf = 32'(ld_buf) == BUF_PBUF;
  wire ld_is_wbuf = 32'(ld_buf) == BUF_WBUF;
  wire ld_is_ibuf = !ld_is_pbuf && !ld_is_wbuf;
  wire [31:0] ld_run = ld_is_pbuf ? ld_elems << LOG2_PB : (prec16 ? ld_elems << 1 : ld_elems);   // bytes of a run
  logic ld_row_contig, ld_all_contig, ld_span;                        // (set up per instruction)
  logic [63:0] ld_seg_bytes;                                          // bytes of one segment
  logic [31:0] ld_seg_pbstep, ld_run_step;                            // element/entry index step per segment / run
  // DDR address of the transfer, its first element / record index (seg_gen takes them in LD_SETUP)
  wire [63:0] ld_start = base_addrs[64 * ld_base_reg +: 64] + 64'(ld_ddr_offset);
  wire [31:0] ld_pb_start = ld_is_pbuf ? ld_dst_word
                            : ld_is_wbuf ? (ld_dst_word << LOG2_WL) + ld_dst_elem
                                         : (ld_dst_word << LOG2_TN) + ld_dst_elem;
  logic [$clog2(LD_OUTST):0] ld_outst;                                // bursts issued, last beat not received

  // ---- address side
  logic ld_chk;                                                       // first LD_RUN cycle: range check
  logic [63:0] ld_ddr_end;                                            // one past the last DDR byte, from the base
  logic [63:0] ld_buf_end, ld_buf_cap;                                // one past the last element / record, bound
  logic ld_bad_buf;                                                   // LOAD.buf names no buffer
  logic sg_take, sg_more, sg_v, sg_blast, sg_first;
  logic [63:0] sg_nxt_addr, sg_cur, sg_start, sg_end;
  logic [31:0] sg_nxt_idx, sg_idx;
  logic [8:0] sg_blen;
  seg_gen u_seg (
    .clk, .rst_n, .clr, .init(ld_state == LD_SETUP), .init_addr(ld_start), .init_idx(ld_pb_start),
    .rows(ld_rows), .cols(ld_cols), .row_stride(ld_row_stride), .pix_stride(ld_pix_stride),
    .all_seg(ld_all_contig), .row_seg(ld_row_contig || ld_span), .seg_bytes(ld_seg_bytes), .idx_step(ld_seg_pbstep),
    .en(ld_state == LD_RUN && !oob), .fire(ar_ok), .take(sg_take), .nxt_addr(sg_nxt_addr), .nxt_idx(sg_nxt_idx),
    .more(sg_more), .seg_v(sg_v), .cur(sg_cur), .blen(sg_blen), .blast(sg_blast), .first(sg_first),
    .seg_start(sg_start), .seg_end(sg_end), .seg_idx(sg_idx));
  assign arvalid = ld_state == LD_RUN && sg_v && 32'(ld_outst) < 32'(LD_OUTST);
  assign araddr = sg_cur;
  assign arlen = 8'(sg_blen - 9'd1);
  // burst descriptors: {burst address, segment start, segment end, element index of the segment, first burst}
  localparam int LDQ_W = 64 + 64 + 64 + 32 + 1;
  logic ldq_empty, ldq_full;
  logic [LDQ_W-1:0] ldq_rdata;
  logic [$clog2(LD_OUTST):0] ldq_count;
  logic ld_fire;                                                      // the current beat is consumed (rready)
  sync_fifo #(.W(LDQ_W), .DEPTH(LD_OUTST)) u_ldq (
    .clk, .rst_n, .clr, .wr(ar_ok), .wdata({sg_cur, sg_start, sg_end, sg_idx, sg_first}),
    .rd(ld_fire && rlast), .rdata(ldq_rdata), .empty(ldq_empty), .full(ldq_full), .count(ldq_count));
  wire [63:0] ldr_burst = ldq_rdata[LDQ_W-1 -: 64];
  wire [63:0] ldr_start = ldq_rdata[LDQ_W-65 -: 64];
  wire [63:0] ldr_end = ldq_rdata[LDQ_W-129 -: 64];
  wire [31:0] ldr_pb0 = ldq_rdata[32:1];
  wire ldr_first = ldq_rdata[0];

  wire [3:0] lq_op = lq_rdata[H_OPCODE_LSB +: H_OPCODE_W];
  wire ld_go = ld_state == LD_IDLE && run && !stop && !lq_empty && !(lq_rdata[H_POP_NEXT_LSB] && !has_c2l);
  assign lq_rd = ld_go;
  assign pop_c2l = ld_go && lq_rdata[H_POP_NEXT_LSB];
  assign push_l2c = ld_state == LD_DONE && ld_ins[H_PUSH_NEXT_LSB];
  assign idle = ld_state == LD_IDLE;
  assign oob = ld_chk && (ld_bad_buf || ld_ddr_end > 64'(ddr_sizes[32 * ld_base_reg +: 32])
                          || ld_buf_end > ld_buf_cap);
  always_comb begin
    cfg_err_isa = 1'b0;
    cfg_err_cfg = 1'b0;
    if (ld_go && lq_op == OP_CONFIG) begin
      cfg_err_isa = 32'(lq_rdata[F_CONFIG_ISA_VERSION_LSB +: F_CONFIG_ISA_VERSION_W]) != ISA_VERSION;
      cfg_err_cfg = !cfg_err_isa && (32'(lq_rdata[F_CONFIG_TN_LSB +: F_CONFIG_TN_W]) != TN
                 || 32'(lq_rdata[F_CONFIG_TM_LSB +: F_CONFIG_TM_W]) != TM
                 || lq_rdata[F_CONFIG_CONFIG_ID_LSB +: F_CONFIG_CONFIG_ID_W] != CONFIG_ID
                 || 32'(lq_rdata[F_CONFIG_PRECISION_LSB +: F_CONFIG_PRECISION_W]) > 32'd1);
    end
  end

  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      ld_state <= LD_IDLE;
      ld_ins <= '0;
      prec16 <= 1'b0;
      {ld_row_contig, ld_span, ld_all_contig} <= '0;
      {ld_seg_bytes, ld_seg_pbstep, ld_run_step} <= '0;
      ld_chk <= 1'b0;
      {ld_ddr_end, ld_buf_end, ld_buf_cap} <= '0;
      ld_bad_buf <= 1'b0;
    end else begin
      ld_chk <= ld_state == LD_SETUP;
      case (ld_state)
        LD_IDLE:
          if (ld_go) begin
            ld_ins <= lq_rdata;
            ld_state <= LD_DONE;
            if (lq_op == OP_CONFIG) begin
              prec16 <= 32'(lq_rdata[F_CONFIG_PRECISION_LSB +: F_CONFIG_PRECISION_W]) == PREC_INT16;
            end else if (lq_op == OP_LOAD && lq_rdata[F_LOAD_ROWS_LSB +: F_LOAD_ROWS_W] != 0
                         && lq_rdata[F_LOAD_COLS_LSB +: F_LOAD_COLS_W] != 0
                         && lq_rdata[F_LOAD_ELEMS_LSB +: F_LOAD_ELEMS_W] != 0) begin
              ld_state <= LD_SETUP;
            end
          end
        LD_SETUP: begin                                 // segment constants and range extents (LUT multiplies)
          logic rc, ac, sp;
          logic [63:0] rowbytes, colstep, span, tot;
          logic [31:0] step;
          step = ld_is_pbuf ? ld_elems : ld_is_wbuf ? ld_dst_pitch << LOG2_WL : ld_dst_pitch << LOG2_TN;
          rowbytes = mul_lut(64'(ld_run), 16'(ld_cols));                  // bytes of a row's runs
          colstep = mul_lut(64'(step), 16'(ld_cols));
          rc = ld_cols == 1 || ld_pix_stride == 64'(ld_run);
          ac = rc && (ld_rows == 1 || ld_row_stride == rowbytes);
          // row span (generator/spec/timing.py use_span): IBUF runs that overlap, fit one beat and the lanes, and
          // whose span takes no more beats than the runs one by one
          span = mul_lut(ld_pix_stride, 16'(ld_cols - 32'd1)) + 64'(ld_run);
          sp = !rc && ld_is_ibuf && ld_pix_stride != 0 && ld_pix_stride < 64'(ld_run)
               && 64'(ld_run) <= ld_pix_stride << 1 && ld_run <= 32'(AXI_BYTES) && ld_elems <= 32'(TN)
               && ld_dst_pitch != 0 && ((span + 64'(AXI_BYTES - 1)) >> LOG2_BYTES) <= 64'(ld_cols);
          tot = mul_lut(colstep, 16'(ld_rows));                          // index step of all the runs
          ld_row_contig <= rc;
          ld_all_contig <= ac;
          ld_span <= sp;
          ld_seg_bytes <= ac ? mul_lut(rowbytes, 16'(ld_rows)) : rc ? rowbytes : sp ? span : 64'(ld_run);
          ld_seg_pbstep <= ac ? 32'(tot) : (rc || sp) ? 32'(colstep) : step;
          ld_ddr_end <= 64'(ld_ddr_offset) + 64'(mul48(48'(ld_row_stride), 16'(ld_rows - 32'd1)))
                        + mul_lut(ld_pix_stride, 16'(ld_cols - 32'd1)) + 64'(ld_run);   // (the span's multiply)
          ld_buf_end <= ld_is_pbuf ? 64'(ld_dst_word) + tot
                        : (ld_is_wbuf ? (64'(ld_dst_word) << LOG2_WL) : (64'(ld_dst_word) << LOG2_TN))
                          + 64'(ld_dst_elem)
                          + tot - 64'(step) + 64'(ld_elems);
          ld_buf_cap <= ld_is_pbuf ? 64'(PBUF_ENTRIES)
                        : ld_is_wbuf ? 64'(prec16 ? WBUF_WORDS16 : WBUF_WORDS8) << LOG2_WL
                                     : 64'(prec16 ? IBUF_WORDS16 : IBUF_WORDS8) << LOG2_TN;
          ld_bad_buf <= !ld_is_pbuf && !ld_is_wbuf && 32'(ld_buf) != BUF_IBUF;
          ld_run_step <= step;
          ld_state <= LD_RUN;
        end
        LD_RUN:                                         // one segment set up, or one burst address, per cycle
          if (oob) ld_state <= LD_WAIT;                 // refused: nothing issued
          else if (!sg_v && !sg_more) ld_state <= LD_WAIT;   // every segment issued
        LD_WAIT: if (ld_outst == 0) ld_state <= LD_DONE;
        LD_DONE: ld_state <= LD_IDLE;
        default: ld_state <= LD_IDLE;
      endcase
    end
  end

  // ---- data side: the chunk of the current beat written this cycle
  localparam int PW = BYTE_POS_W;
  logic [7:0] ldr_beat;                                               // beat within the current burst
  logic [PW-1:0] ldr_ptr;                                             // next byte of the current beat
  logic [31:0] ldr_e, ldr_pb;                                         // byte within the run, run's first element
  wire [63:0] ldr_cur = ldr_burst + (64'(ldr_beat) << LOG2_BYTES);
  wire ld_segstart = ldr_first && ldr_beat == 0 && ldr_ptr == 0;      // first byte of a segment: fresh position
  wire [31:0] ld_e = ld_segstart ? 32'd0 : ldr_e;
  wire [31:0] ld_pb = ld_segstart ? ldr_pb0 : ldr_pb;
  logic [PW-1:0] ld_j0, ld_hi;                                        // chunk start, end of the beat's valid bytes
  logic [31:0] ld_cnt;                                                // chunk bytes
  logic [31:0] ld_idx0;                                               // element / record of the chunk's first byte
  logic [31:0] ld_ph;                                                 // byte within it where the chunk starts
  logic ld_consumed;
  logic [2:0] sp_e;                                                   // span: runs q, q + 1, q + 2 end in this beat
  always_comb begin
    logic [63:0] d;
    logic [PW-1:0] lo;
    logic [31:0] avail, lim, c;
    lo = ldr_cur < ldr_start ? PW'(ldr_start - ldr_cur) : '0;
    d = ldr_end - ldr_cur;
    ld_hi = d >= 64'(AXI_BYTES) ? PW'(AXI_BYTES) : PW'(d);
    ld_j0 = ldr_ptr > lo ? ldr_ptr : lo;
    avail = ld_hi > ld_j0 ? 32'(ld_hi - ld_j0) : 32'd0;
    if (ld_is_pbuf) begin
      ld_idx0 = ld_pb + (ld_e >> LOG2_PB);
      ld_ph = 32'(ld_e[LOG2_PB-1:0]);
      lim = 32'(TM * PARAM_BYTES) - ld_ph;
    end else begin
      ld_idx0 = ld_pb + (prec16 ? ld_e >> 1 : ld_e);
      ld_ph = 32'(prec16 & ld_e[0]);
      if (ld_is_wbuf) lim = ((32'(WL) - 32'(ld_idx0[LOG2_WL-1:0])) << prec16) - ld_ph;
      else lim = (32'(TN) << prec16) - ld_ph;
    end
    c = avail;
    if (ld_run - ld_e < c) c = ld_run - ld_e;
    if (lim < c) c = lim;
    ld_cnt = c;
    ld_consumed = ld_span ? !sp_e[2] : 32'(ld_j0) + c >= 32'(ld_hi);
  end
  wire ld_wr = rvalid && ld_cnt != 0 && !ld_span;
  assign ld_fire = rvalid && ld_consumed;
  assign rready = ld_consumed;

  // ---- span segments: run q (port A) and run q + 1 (port B) are written when they end in this beat (run k of the
  // segment: bytes [k*stride, k*stride + run) from its start); the beat is held while a third run ends in it. The
  // window is {this beat, the previous beat of the segment}: a run ending in this beat starts at most
  // AXI_BYTES - 1 bytes before it (run <= AXI_BYTES).
  logic [31:0] ldr_qoff, ldr_qpb;                                     // next run: segment byte offset, element
  logic [AXI_DW-1:0] ld_prev;                                         // the LOAD's previous beat
  wire [31:0] sp_qoff = ld_segstart ? 32'd0 : ldr_qoff;
  wire [31:0] sp_qpb = ld_segstart ? ldr_pb0 : ldr_qpb;
  wire [31:0] sp_stride = 32'(ld_pix_stride);
  logic [PW-1:0] sp_wi;                                               // window byte of run q's first byte
  always_comb begin
    logic [31:0] bend, len, lim;
    bend = 32'(ldr_cur - ldr_start) + 32'(AXI_BYTES);                // segment offset just past this beat
    len = 32'(ldr_end - ldr_start);
    lim = bend < len ? bend : len;
    for (int k = 0; k < 3; k++)
      sp_e[k] = ld_span && rvalid && sp_qoff + (k == 0 ? 32'd0 : k == 1 ? sp_stride : sp_stride << 1) + ld_run <= lim;
    sp_wi = PW'(sp_qoff + 32'(2 * AXI_BYTES) - bend);
  end

  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      ld_outst <= '0;
      ldr_beat <= '0;
      ldr_ptr <= '0;
      ldr_e <= '0;
      ldr_pb <= '0;
      ldr_qoff <= '0;
      ldr_qpb <= '0;
      ld_prev <= '0;
    end else begin
      ld_outst <= ld_outst + ($clog2(LD_OUTST) + 1)'(ar_ok) - ($clog2(LD_OUTST) + 1)'(ld_fire && rlast);
      if (ld_fire) ld_prev <= rdata;
      if (rvalid && ld_span) begin
        ldr_qoff <= sp_e[1] ? sp_qoff + (sp_stride << 1) : sp_e[0] ? sp_qoff + sp_stride : sp_qoff;
        ldr_qpb <= sp_e[1] ? sp_qpb + (ld_run_step << 1) : sp_e[0] ? sp_qpb + ld_run_step : sp_qpb;
        if (ld_consumed) begin
          ldr_ptr <= '0;
          ldr_beat <= rlast ? 8'd0 : ldr_beat + 8'd1;
        end else begin
          ldr_ptr <= PW'(1);                                          // (not the segment's first cycle any more)
        end
      end else if (rvalid) begin
        if (ld_e + ld_cnt >= ld_run) begin
          ldr_e <= '0;
          ldr_pb <= ld_pb + ld_run_step;
        end else begin
          ldr_e <= ld_e + ld_cnt;
          ldr_pb <= ld_pb;
        end
        if (ld_consumed) begin
          ldr_ptr <= '0;
          ldr_beat <= rlast ? 8'd0 : ldr_beat + 8'd1;
        end else begin
          ldr_ptr <= ld_j0 + PW'(ld_cnt);
        end
      end
    end
  end

  load_wr u_wr (
    .prec16, .rdata, .prev(ld_prev), .is_ibuf(ld_is_ibuf), .is_wbuf(ld_is_wbuf), .is_pbuf(ld_is_pbuf),
    .wr(ld_wr), .j0(ld_j0), .ph(ld_ph), .idx0(ld_idx0), .cnt(ld_cnt), .span(ld_span), .sp_e(sp_e[1:0]),
    .sp_qpb, .sp_wi, .sp_stride, .run_bytes(ld_run), .run_step(ld_run_step),
    .ibw_we, .ibw_data, .ibw_row, .wbw_we, .wbw_data, .wbw_row, .pbw_we, .pbw_data, .pbw_row);

  wire unused = &{1'b0, sg_blast, sg_nxt_addr, sg_nxt_idx, sg_take, ldq_empty,
                  ldq_full, ldq_count, 1'b0};
endmodule
`default_nettype wire
