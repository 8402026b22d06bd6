// STORE module: executes POST (through rtl/post.sv), STORE (OBUF -> DDR) and END in order. A POST is handed to
// rtl/post.sv (its own copy of the instruction, post_ins) and the next instruction dispatched the cycle after: a
// STORE then overlaps the POST, taking a segment only once the POST has written the OBUF words of STORE_SEG_AHEAD
// segments from that one on plus two rows (post_words, registered, so the compare is on registers), or has finished;
// a POST or END waits for the POST before it. The POST's token push comes at its end, before the overlapping
// STORE's (which finishes only after the POST), so pushes keep program order.
// STORE address side: seg_gen cuts the transfer into segments (the whole transfer when rows and pixels are
// contiguous, else one per row when the pixels of a row are, else one per pixel run; pixels merge only if they are
// contiguous in DDR and in OBUF, elems = src_pitch*Tm), one burst per cycle: its address into an AW FIFO
// (AWQ_DEPTH), its descriptor into a descriptor FIFO (sdq), up to ST_OUTST bursts ahead of the data. Data side
// (generator/spec/arch.py STORE_READ_STAGES): the beats of the head descriptor are taken one per cycle into sr0_,
// which reads their OBUF window (port B); sr1_ the RAM outputs, sr2_ their register, sr3_ the coarse byte rotation;
// there the beat's bytes are selected and pushed into the output FIFO (W channel), so the beats go out back to back. Done when every write
// response is in.
// Range checks (OUT_OF_RANGE): DDR bytes [ddr_offset, end) of the base register's buffer and the OBUF elements,
// computed in S_SETUP, compared in the first S_RUN cycle (no address issued yet): a refused STORE writes nothing.
// S_SETUP takes SD_SETUP cycles: its multiplies are registered shift-and-add trees (rtl/mul_tree.sv) free-running
// on the instruction register, the DDR extent's sums carry-select adds (accel_pkg addr_add), the compares split
// so that no carry chain passes 32 bits.
// Legend: sd_ STORE instruction / address side; sdh_ the head descriptor; OBUF position of a DDR byte u =
// (element << sd_p16) + byte within the element; lo / hi the valid bytes [lo, hi) of a beat; OL OBUF lanes.
// Precision: the STORE's own prec field (sd_p16, ISA 6: element bytes, OBUF words and the OBUF window's byte
// layout), read from the instruction register, which holds the STORE until every beat is written and
// acknowledged (S_RUN ends with the read stages, the output FIFO and the responses empty); a POST running beside
// it has its own (rtl/post.sv).
`default_nettype none
module store
  import accel_pkg::*;
(
  input  wire                   clk,
  input  wire                   rst_n,
  input  wire                   clr,
  input  wire                   run,
  input  wire                   stop,
  input  wire [4*64-1:0]        base_addrs,
  input  wire [4*32-1:0]        ddr_sizes,
  input  wire [INSN_BITS-1:0]   sq_rdata,
  input  wire                   sq_empty,
  output logic                  sq_rd,
  input  wire                   has_c2s,
  output logic                  pop_c2s,
  output logic                  push_s2c,
  output logic                  post_start,     // POST: the instruction is on post_ins from the next cycle
  output logic [INSN_BITS-1:0]  post_ins,
  input  wire                   post_done,
  input  wire [OBW_W-1:0]       post_words,     // OBUF Tm-words the running POST has written (rtl/post.sv)
  input  wire                   post_oob,       // the POST refused (OUT_OF_RANGE): the STORE after it takes nothing
  output logic                  post_err,       // OUT_OF_RANGE: POST.pbuf_oc not a multiple of Tm
  output logic                  oob,            // OUT_OF_RANGE this cycle (STORE)
  output logic                  end_done,       // END executed
  output logic                  idle,
  output logic                  retire,         // an instruction finishes (debug counter)
  output logic [OB_AW*OL-1:0]   obr_row,        // OBUF read rows (port B), data one cycle later
  input  wire [16*OL-1:0]       ob_rd,
  output logic [0:0]            m_axi_awid,
  output logic [AXI_AW-1:0]     m_axi_awaddr,
  output logic [7:0]            m_axi_awlen,
  output logic [2:0]            m_axi_awsize,
  output logic [1:0]            m_axi_awburst,
  output logic                  m_axi_awlock,
  output logic [3:0]            m_axi_awcache,
  output logic [2:0]            m_axi_awprot,
  output logic                  m_axi_awvalid,
  input  wire                   m_axi_awready,
  output logic [AXI_DW-1:0]     m_axi_wdata,
  output logic [AXI_BYTES-1:0]  m_axi_wstrb,
  output logic                  m_axi_wlast,
  output logic                  m_axi_wvalid,
  input  wire                   m_axi_wready,
  input  wire [0:0]             m_axi_bid,
  input  wire [1:0]             m_axi_bresp,
  input  wire                   m_axi_bvalid,
  output logic                  m_axi_bready
);
  localparam int PW = BYTE_POS_W;
  typedef enum logic [2:0] {S_IDLE, S_SETUP, S_RUN, S_DONE} st_state_t;
  (* fsm_encoding = "none" *) st_state_t st_state;
  wire [3:0] sq_op = sq_rdata[H_OPCODE_LSB +: H_OPCODE_W];
  logic [INSN_BITS-1:0] st_ins;                                      // the STORE (END) being executed
  logic post_act, post_push;                                          // a POST runs; it pushes a token at its end
  logic post_fail;                                                    // a POST was refused (until the next start)
  wire st_go = st_state == S_IDLE && run && !stop && !sq_empty && !(sq_rdata[H_POP_PREV_LSB] && !has_c2s)
               && !(post_act && sq_op != OP_STORE);
  assign sq_rd = st_go;
  assign pop_c2s = st_go && sq_rdata[H_POP_PREV_LSB];
  assign push_s2c = (st_state == S_DONE && st_ins[H_PUSH_PREV_LSB]) || (post_done && post_push);
  assign post_start = st_go && sq_op == OP_POST;
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      {post_act, post_push} <= '0;
    end else if (post_start) begin
      post_act <= 1'b1;
      post_push <= sq_rdata[H_PUSH_PREV_LSB];
    end else if (post_done) begin
      post_act <= 1'b0;
    end
    if (post_start) post_ins <= sq_rdata;
    post_fail <= rst_n && !clr && (post_fail || post_oob || post_err);
  end
  // the RTL reads the Tm records of an output group from one PBUF row: pbuf_oc must be a multiple of Tm
  always_ff @(posedge clk)                             // (raised the cycle after the dispatch; the POST runs on)
    post_err <= rst_n && !clr && st_go && sq_op == OP_POST && sq_rdata[F_POST_PBUF_OC_LSB +: LOG2_TM] != 0;
  assign idle = st_state == S_IDLE && !post_act;
  assign retire = st_state == S_DONE || post_done;

  wire [31:0] sd_rows = 32'(st_ins[F_STORE_ROWS_LSB +: F_STORE_ROWS_W]);
  wire [31:0] sd_cols = 32'(st_ins[F_STORE_COLS_LSB +: F_STORE_COLS_W]);
  wire [31:0] sd_elems = 32'(st_ins[F_STORE_ELEMS_LSB +: F_STORE_ELEMS_W]);
  wire [63:0] sd_row_stride = 64'(st_ins[F_STORE_ROW_STRIDE_LSB +: F_STORE_ROW_STRIDE_W]);
  wire [63:0] sd_pix_stride = 64'(st_ins[F_STORE_PIX_STRIDE_LSB +: F_STORE_PIX_STRIDE_W]);
  wire [31:0] sd_src_pitch = 32'(st_ins[F_STORE_SRC_PITCH_LSB +: F_STORE_SRC_PITCH_W]);
  wire        sd_p16 = 32'(st_ins[F_STORE_PREC_LSB +: F_STORE_PREC_W]) == PREC_INT16;   // the STORE's precision
  wire [31:0] sd_run = sd_p16 ? sd_elems << 1 : sd_elems;             // bytes of a pixel run
  logic sd_row_contig, sd_all_contig;                                 // (set up per instruction)
  logic [63:0] sd_seg_bytes;                                          // bytes of one segment
  logic [31:0] sd_seg_wstep;                                          // OBUF Tm-word index step per segment
  // OBUF position of a DDR byte as (row, off): OBUF row (OL lanes) and byte within the row's RB = OL << sd_p16 bytes
  // (Tm need not be a power of two: with OL = Tm the rows are the output words, no division anywhere)
  localparam int OFF_W = LOG2_OL + 2;
  localparam int OLW = OL / TM;                                      // Tm-words per OBUF row (1, or 2^k: Tm < OL)
  localparam int LOG2_OLW = $clog2(OLW);
  logic [OB_AW-1:0] sd_srow;                                          // the segment's first beat: its row, byte
  logic [OFF_W-1:0] sd_soff;
  logic [15:0] sd_outst;                                              // write bursts awaiting their response
  logic sd_none;                                                      // sd_outst == 0
  wire aw_fire = m_axi_awvalid && m_axi_awready;
  logic sdq_empty, sdq_full, awq_empty, awq_full;
  wire sg_fire = st_state == S_RUN && sg_v && !sdq_full && !awq_full;   // a burst: its AW queued, its descriptor
  logic sg_take, sg_more, sg_v, sg_blast, sg_first;
  logic [63:0] sg_nxt_addr, sg_cur, sg_start, sg_end;
  logic [31:0] sg_nxt_idx, sg_idx;
  logic [8:0] sg_blen;
  // DDR address of the transfer (seg_gen takes it in S_SETUP)
  wire [1:0] sd_ins_base = st_ins[F_STORE_BASE_REG_LSB +: F_STORE_BASE_REG_W];
  wire [63:0] sd_start = 64'(addr_add(AXI_AW'(base_addrs[64 * sd_ins_base +: 64]),
                                      AXI_AW'(st_ins[F_STORE_DDR_OFFSET_LSB +: F_STORE_DDR_OFFSET_W])));
  // overlap with a running POST: take the next segment (Tm-words [nxt_idx, nxt_idx + wstep)) only when the POST has
  // written nxt_idx + STORE_SEG_AHEAD * wstep + 2 rows of words (the last beat's window reads the next row). The
  // sums are registered one per cycle, so the compare lags two takes: three segments ahead cover them. A single
  // segment (all contiguous) waits for the POST's end; the words gate is trusted 15 cycles after the dispatch.
  localparam int OB_SLACK = 2 * OLW;
  logic [OBW_W-1:0] sd_ws3, sd_ahead, sg_ahead;
  logic sg_words_ok;
  logic [3:0] sd_gv;
  always_ff @(posedge clk) begin
    sd_ws3 <= OBW_W'(sd_seg_wstep) + OBW_W'(sd_seg_wstep << 1);
    sd_ahead <= sd_ws3 + OBW_W'(OB_SLACK);
    sg_ahead <= OBW_W'(sg_nxt_idx) + sd_ahead;
    sg_words_ok <= !sd_all_contig && sg_ahead <= post_words;
    sd_gv <= st_go ? '0 : sd_gv + 4'(sd_gv != 4'hf);
  end
  wire sg_ok = !post_fail && (!post_act || (sd_gv == 4'hf && sg_words_ok));
  seg_gen u_seg (
    .clk, .rst_n, .clr, .init(st_state == S_SETUP), .init_addr(sd_start),
    .init_idx(32'd0), .rows(sd_rows), .cols(sd_cols), .row_stride(sd_row_stride), .pix_stride(sd_pix_stride),
    .all_seg(sd_all_contig), .row_seg(sd_row_contig), .seg_bytes(sd_seg_bytes), .idx_step(sd_seg_wstep),
    .en(st_state == S_RUN && !oob && sg_ok), .fire(sg_fire), .take(sg_take), .nxt_addr(sg_nxt_addr), .nxt_idx(sg_nxt_idx),
    .more(sg_more), .seg_v(sg_v), .cur(sg_cur), .blen(sg_blen), .blast(sg_blast), .first(sg_first),
    .seg_start(sg_start), .seg_end(sg_end), .seg_idx(sg_idx));
  // valid bytes of the burst: from the segment's first byte (first burst), to its end (last burst; 0: whole beat)
  wire [PW-1:0] sd_lo = sg_first ? PW'(sg_start[LOG2_BYTES-1:0]) : '0;
  wire [PW-1:0] sd_hi = sg_end[LOG2_BYTES-1:0] == 0 ? PW'(AXI_BYTES) : PW'(sg_end[LOG2_BYTES-1:0]);

  // AW descriptors: {the burst is its segment's first, OBUF position (row, off) of the segment's first beat, beats,
  // first valid byte of the first beat, end of the last beat's valid bytes}
  localparam int SDQ_W = 1 + OB_AW + OFF_W + 9 + 2 * PW;
  logic [SDQ_W-1:0] sdq_rdata;
  logic [$clog2(ST_OUTST):0] sdq_count;
  logic sr_go, sr_last;                                               // the read stage takes a beat, its burst's last
  sync_fifo #(.W(SDQ_W), .DEPTH(ST_OUTST)) u_sdq (
    .clk, .rst_n, .clr, .wr(sg_fire),
    .wdata({sg_first, sd_srow, sd_soff, sg_blen - 9'd1, sd_lo, sg_blast ? sd_hi : PW'(AXI_BYTES)}),
    .rd(sr_go && sr_last), .rdata(sdq_rdata), .empty(sdq_empty), .full(sdq_full), .count(sdq_count));
  wire          sdh_sf = sdq_rdata[SDQ_W-1];
  wire [OB_AW-1:0] sdh_row = sdq_rdata[SDQ_W-2 -: OB_AW];
  wire [OFF_W-1:0] sdh_off = sdq_rdata[SDQ_W-2-OB_AW -: OFF_W];
  wire [8:0]    sdh_blen1 = sdq_rdata[2 * PW +: 9];                  // beats - 1
  wire [PW-1:0] sdh_lo = sdq_rdata[PW +: PW];
  wire [PW-1:0] sdh_hi = sdq_rdata[0 +: PW];
  assign m_axi_awid = '0;
  assign m_axi_awsize = 3'(LOG2_BYTES);
  assign m_axi_awburst = 2'b01;
  assign m_axi_awlock = 1'b0;
  assign m_axi_awcache = 4'b0011;
  assign m_axi_awprot = 3'b000;
  // AW FIFO: the write addresses go out independently of the data (AXI4 lets W lead AW), so a slave that takes
  // the next address only after the current burst's data does not wait on the read stages
  /* verilator lint_off PINCONNECTEMPTY */
  sync_fifo #(.W(AXI_AW + 8), .DEPTH(AWQ_DEPTH)) u_awq (
    .clk, .rst_n, .clr, .wr(sg_fire), .wdata({AXI_AW'(sg_cur), 8'(sg_blen - 9'd1)}), .rd(m_axi_awready),
    .rdata({m_axi_awaddr, m_axi_awlen}), .empty(awq_empty), .full(awq_full), .count());
  /* verilator lint_on PINCONNECTEMPTY */
  assign m_axi_awvalid = !awq_empty;
  assign m_axi_bready = 1'b1;
  // read side, four stages: sr0 (registered on taking a beat of the head burst: its OBUF position (row, off), first
  // valid byte, end of its valid bytes, last-beat flag) drives the OBUF read rows of its window [Ew, Ew + OL) (Ew:
  // element of its first byte; lane l holds the element congruent to l) and registers the rotation and the strobes
  // into sr1; sr1: the RAMs output the window, registered as is into sr2; sr2: the window seen as the byte array A
  // (2 OL bytes: int16 lane l's bytes at 2l, 2l + 1; int8 lane l's byte at l and OL + l), where beat byte j is
  // A[(r + j) mod 2 OL] (r = off: the beat's first byte within its row, int16 < 2 OL, int8 < OL): A rotated by r's
  // multiple of 8 into sr3 (AXI_BYTES + 7 bytes); sr3: rotated by r mod 8 into the output FIFO. A beat is taken only while the FIFO has room for it and the ones in the stages.
  logic oq_empty, oq_full;
  logic [$clog2(OQ_DEPTH):0] oq_count;
  logic sr0_v, sr0_last, sr0_first;
  logic [OB_AW-1:0] sr0_row;                                          // the beat's first byte: OBUF row, byte
  logic [OFF_W-1:0] sr0_off;
  logic [PW-1:0] sr0_lo, sr0_hi;
  logic sr1_v, sr1_last, sr2_v, sr2_last, sr3_v, sr3_last;
  localparam int NB = AXI_BYTES + 7;
  logic [LOG2_OL:0] sr1_r, sr2_r;                                     // rotation of the beat in A
  logic [2:0] sr3_f;                                                  //   its part below 8
  logic [AXI_BYTES-1:0] sr1_strb, sr2_strb, sr3_strb;                 // its bytes in [lo, hi)
  logic [16*OL-1:0] sr2_w;                                            // the OBUF window as read
  logic [8*NB-1:0] sr3_b;                                             // A rotated by r - r mod 8, first NB bytes
  logic [AXI_DW-1:0] sr3_data;                                        // the beat's bytes from the OBUF lanes
  // room for a beat: the FIFO's entries and the beats in the stages one cycle ago, plus the one that cycle may
  // have taken, below the depth (registered, so conservative by one entry)
  localparam int RMW = $clog2(OQ_DEPTH) + 2;
  logic sr_room;
  logic sr_first, sr_left1;                                           // next beat the head's first; after it, one left
  logic [8:0] sr_left;                                                // beats of the head left after the last taken
  assign sr_last = sr_first ? sdh_blen1 == 0 : sr_left1;
  assign sr_go = !sdq_empty && sr_room;
  wire [OFF_W-1:0] ew_lane = sd_p16 ? sr0_off >> 1 : sr0_off;        // lane of the beat's first byte
  always_comb begin
    for (int l = 0; l < OL; l++)
      obr_row[OB_AW * l +: OB_AW] = sr0_row + OB_AW'(OFF_W'(l) < ew_lane);
  end
  // the next beat's position: a segment's first beat from its descriptor, else the last taken beat's + AXI_BYTES
  // (off + AXI_BYTES >= row bytes as off >= row bytes - AXI_BYTES, and off + AXI_BYTES - row bytes: each one
  // carry chain from the register, the constants selected before it; OL >= AXI_BYTES)
  wire [OFF_W-1:0] sr_inc = sr0_off + OFF_W'(AXI_BYTES);              // (taken when it does not wrap)
  wire sr_wrap = (OFF_W + 1)'(sr0_off) >= (sd_p16 ? (OFF_W + 1)'(2 * OL - AXI_BYTES) : (OFF_W + 1)'(OL - AXI_BYTES));
  wire [OFF_W-1:0] sr_off_w = sr0_off + (sd_p16 ? OFF_W'(AXI_BYTES - 2 * OL) : OFF_W'(AXI_BYTES - OL));
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      {sr0_v, sr1_v, sr2_v, sr3_v} <= '0;
      sr_room <= 1'b0;
      sr_first <= 1'b1;
    end else begin
      if (sr_go) sr_first <= sr_last;
      sr_room <= RMW'(oq_count) + RMW'(sr0_v) + RMW'(sr1_v) + RMW'(sr2_v) + RMW'(sr3_v) + RMW'(1) < RMW'(OQ_DEPTH);
      {sr0_v, sr1_v, sr2_v, sr3_v} <= {sr_go, sr0_v, sr1_v, sr2_v};
    end
    if (sr_go) begin
      if (sr_first && sdh_sf) begin
        sr0_row <= sdh_row;
        sr0_off <= sdh_off;
      end else if (sr_wrap) begin
        sr0_row <= sr0_row + 1'b1;
        sr0_off <= sr_off_w;
      end else begin
        sr0_off <= sr_inc;
      end
    end
    if (sr_go) begin
      sr_left <= sr_first ? sdh_blen1 : sr_left - 9'd1;
      sr_left1 <= sr_first ? sdh_blen1 == 9'd1 : sr_left == 9'd2;
    end
    sr0_last <= sr_last;
    sr0_first <= sr_first;
    sr0_lo <= sdh_lo;
    sr0_hi <= sdh_hi;
    sr1_r <= (LOG2_OL + 1)'(sr0_off);
    for (int j = 0; j < AXI_BYTES; j++)
      sr1_strb[j] <= PW'(j) >= (sr0_first ? sr0_lo : '0) && PW'(j) < (sr0_last ? sr0_hi : PW'(AXI_BYTES));
    sr1_last <= sr0_last;
    sr2_w <= ob_rd;
    sr2_r <= sr1_r;
    sr2_strb <= sr1_strb;
    sr2_last <= sr1_last;
    // a = i + r8 (r8 = r - r mod 8, a < 2 OL + NB) mod 2 OL (int16) and mod OL (int8: a < 2 OL): each a compare of
    // the register r8 with a constant beside r8 plus a constant, one carry chain per path
    for (int i = 0; i < NB; i++) begin
      logic [LOG2_OL+1:0] r8, a16, a8;
      r8 = (LOG2_OL + 2)'({sr2_r[LOG2_OL:3], 3'b000});
      a16 = i >= 2 * OL || r8 >= (LOG2_OL + 2)'(2 * OL - i) ? r8 - (LOG2_OL + 2)'(2 * OL - i)
                                                             : r8 + (LOG2_OL + 2)'(i);
      a8 = i >= OL || r8 >= (LOG2_OL + 2)'(OL - i) ? r8 - (LOG2_OL + 2)'(OL - i) : r8 + (LOG2_OL + 2)'(i);
      sr3_b[8 * i +: 8] <= sd_p16 ? sr2_w[8 * a16 +: 8] : sr2_w[16 * a8 +: 8];
    end
    sr3_f <= sr2_r[2:0];
    sr3_strb <= sr2_strb;
    sr3_last <= sr2_last;
  end
  // beat bytes: [lo, hi) are the transfer's; byte j is at OBUF position u + j, A[(r + j) mod 2 OL]
  always_comb begin
    for (int j = 0; j < AXI_BYTES; j++) sr3_data[8 * j +: 8] = sr3_b[8 * (j + 32'(sr3_f)) +: 8];
  end
  // output FIFO: the W channel (bytes outside [lo, hi) zeroed)
  function automatic logic [AXI_DW-1:0] strb_mask(input logic [AXI_BYTES-1:0] st);
    for (int j = 0; j < AXI_BYTES; j++) strb_mask[8 * j +: 8] = {8{st[j]}};
  endfunction
  sync_fifo #(.W(1 + AXI_BYTES + AXI_DW), .DEPTH(OQ_DEPTH)) u_soq (
    .clk, .rst_n, .clr, .wr(sr3_v), .wdata({sr3_last, sr3_strb, sr3_data & strb_mask(sr3_strb)}),
    .rd(m_axi_wready),
    .rdata({m_axi_wlast, m_axi_wstrb, m_axi_wdata}), .empty(oq_empty), .full(oq_full), .count(oq_count));
  assign m_axi_wvalid = !oq_empty;

  logic sd_chk;                                                       // first S_RUN cycle: range check
  logic sd_zero;                                                      // the STORE writes nothing (rows, cols or elems 0)
  always_ff @(posedge clk)
    if (st_go) sd_zero <= sq_rdata[F_STORE_ROWS_LSB +: F_STORE_ROWS_W] == 0
                          || sq_rdata[F_STORE_COLS_LSB +: F_STORE_COLS_W] == 0
                          || sq_rdata[F_STORE_ELEMS_LSB +: F_STORE_ELEMS_W] == 0;
  logic [2:0] sd_su;                                                  // setup cycle
  // ---- setup values, free-running on st_ins (valid from the first S_SETUP cycle, 1): cycle each is valid in
  localparam int RB_W = F_STORE_ELEMS_W + 1 + F_STORE_COLS_W;         // run bytes x cols
  localparam int PX_W = F_STORE_SRC_PITCH_W + LOG2_TM;                // OBUF elements per pixel
  logic [31:0] sd_pix;                                                // src_pitch * Tm (registered at the dispatch)
  always_ff @(posedge clk)
    if (st_go) sd_pix <= times_tm(32'(sq_rdata[F_STORE_SRC_PITCH_LSB +: F_STORE_SRC_PITCH_W]));
  logic [F_STORE_SRC_PITCH_W+F_STORE_COLS_W-1:0] su_pwcols;          // 3: src_pitch x cols (Tm-words)
  logic [F_STORE_ROWS_W-1:0] su_rows1;                                // 2: rows - 1
  logic [F_STORE_COLS_W-1:0] su_cols1;                                // 2: cols - 1
  logic su_ps_run, su_rc, su_oc, su_rseq, su_ac;                      // 2, 3, 2, 4, 5
  logic [RB_W-1:0] su_rowbytes;                                       // 3: run bytes x cols
  logic [PX_W+F_STORE_COLS_W-1:0] su_pixcols;                         // 3: pix x cols
  logic [31:0] su_segall, su_obn, su_rsr, su_psc;                     // 5, 5, 4, 4 (overflow flags: 6, 6, 5, 5)
  logic su_segall_ov, su_obn_ov, su_rsr_ov, su_psc_ov;
  logic [AXI_AW-1:0] su_e1, su_e2, su_e3;                             // 5, 5, 6: the DDR extent's sums
  logic su_ddr_oob;                                                   // 7
  logic [24:0] su_ep, su_ob1;                                         // 2: elems - pix; 6: obn + that
  logic su_ob_hi, su_ob_oob;                                          // 6, 7
  /* verilator lint_off PINCONNECTEMPTY */
  mul_tree #(.AW(F_STORE_ELEMS_W + 1), .BW(F_STORE_COLS_W)) u_rb (
    .clk, .a((F_STORE_ELEMS_W + 1)'(sd_run)), .b(F_STORE_COLS_W'(sd_cols)), .p(su_rowbytes), .ovf());
  mul_tree #(.AW(PX_W), .BW(F_STORE_COLS_W)) u_pc (
    .clk, .a(PX_W'(sd_pix)), .b(F_STORE_COLS_W'(sd_cols)), .p(su_pixcols), .ovf());
  mul_tree #(.AW(F_STORE_SRC_PITCH_W), .BW(F_STORE_COLS_W)) u_pw (
    .clk, .a(F_STORE_SRC_PITCH_W'(sd_src_pitch)), .b(F_STORE_COLS_W'(sd_cols)), .p(su_pwcols), .ovf());
  /* verilator lint_on PINCONNECTEMPTY */
  mul_tree #(.AW(RB_W), .BW(F_STORE_ROWS_W), .PW(32)) u_sa (
    .clk, .a(su_rowbytes), .b(F_STORE_ROWS_W'(sd_rows)), .p(su_segall), .ovf(su_segall_ov));
  mul_tree #(.AW(PX_W + F_STORE_COLS_W), .BW(F_STORE_ROWS_W), .PW(32)) u_ob (
    .clk, .a(su_pixcols), .b(F_STORE_ROWS_W'(sd_rows)), .p(su_obn), .ovf(su_obn_ov));
  mul_tree #(.AW(F_STORE_ROW_STRIDE_W), .BW(F_STORE_ROWS_W), .PW(32)) u_rs (
    .clk, .a(F_STORE_ROW_STRIDE_W'(sd_row_stride)), .b(su_rows1), .p(su_rsr), .ovf(su_rsr_ov));
  mul_tree #(.AW(F_STORE_PIX_STRIDE_W), .BW(F_STORE_COLS_W), .PW(32)) u_ps (
    .clk, .a(F_STORE_PIX_STRIDE_W'(sd_pix_stride)), .b(su_cols1), .p(su_psc), .ovf(su_psc_ov));
  always_ff @(posedge clk) begin
    su_rows1 <= F_STORE_ROWS_W'(sd_rows) - 1'b1;
    su_cols1 <= F_STORE_COLS_W'(sd_cols) - 1'b1;
    su_oc <= sd_elems == sd_pix;                                      // the pixels' elements are contiguous in OBUF
    su_ps_run <= sd_p16 ? sd_pix_stride == 64'(sd_elems << 1) : sd_pix_stride == 64'(sd_elems);   // (two compares)
    su_rc <= sd_cols == 1 || (su_oc && su_ps_run);
    su_rseq <= sd_row_stride == 64'(su_rowbytes);
    su_ac <= su_rc && (sd_rows == 1 || (su_oc && su_rseq));
    su_e1 <= addr_add(AXI_AW'(st_ins[F_STORE_DDR_OFFSET_LSB +: F_STORE_DDR_OFFSET_W]), AXI_AW'(su_rsr));
    su_e2 <= addr_add(AXI_AW'(su_psc), AXI_AW'(sd_run));
    su_e3 <= addr_add(su_e1, su_e2);
    // (each multiply's overflow comes one clock after its product)
    su_ddr_oob <= su_rsr_ov || su_psc_ov || su_e3[AXI_AW-1:32] != '0
                  || su_e3[31:0] > ddr_sizes[32 * sd_ins_base +: 32];
    su_ep <= 25'(sd_elems) - 25'(sd_pix);             // (elems - pix first: one carry chain per sum)
    su_ob1 <= su_obn[24:0] + su_ep;
    su_ob_hi <= su_obn[31:24] != '0;
    su_ob_oob <= su_obn_ov || su_ob_hi
                 || su_ob1 > (sd_p16 ? 25'(OBUF_WORDS16 * TM) : 25'(OBUF_WORDS8 * TM));
  end
  assign oob = sd_chk && (su_ddr_oob || su_ob_oob);

  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      st_state <= S_IDLE;
      st_ins <= '0;
      end_done <= 1'b0;
      {sd_row_contig, sd_all_contig} <= '0;
      {sd_seg_bytes, sd_seg_wstep, sd_srow, sd_soff} <= '0;
      sd_outst <= '0;
      sd_none <= 1'b1;
      sd_chk <= 1'b0;
      sd_su <= '0;
    end else begin
      sd_chk <= st_state == S_SETUP && sd_su == 3'(SD_SETUP - 1) && !sd_zero;   // (an empty STORE may wait)
      // (count + 1 / - 1 side by side, selected AND-OR; its zero flag a register next to it)
      sd_outst <= ({16{aw_fire && !m_axi_bvalid}} & (sd_outst + 16'd1))
                  | ({16{m_axi_bvalid && !aw_fire}} & (sd_outst - 16'd1)) | ({16{aw_fire == m_axi_bvalid}} & sd_outst);
      sd_none <= aw_fire && !m_axi_bvalid ? 1'b0 : m_axi_bvalid && !aw_fire ? sd_outst == 16'd1 : sd_none;
      case (st_state)
        S_IDLE:
          if (st_go) begin
            st_ins <= sq_rdata;
            sd_su <= '0;
            st_state <= S_DONE;
            if (sq_op == OP_END) end_done <= 1'b1;
            if (sq_op == OP_POST) st_state <= S_IDLE;    // (rtl/post.sv runs it; the next one may overlap it)
            if (sq_op == OP_STORE) st_state <= S_SETUP;  // (an empty one leaves S_SETUP at once)
          end
        S_SETUP: begin                                  // per-instruction segment constants (registered above)
          sd_su <= sd_su + 1'b1;
          sd_row_contig <= su_rc;
          sd_all_contig <= su_ac;
          sd_seg_bytes <= su_ac ? 64'(su_segall) : su_rc ? 64'(su_rowbytes) : 64'(sd_run);
          sd_seg_wstep <= su_rc ? 32'(su_pwcols) : sd_src_pitch;
          if (sd_zero) begin
            if (!post_act) st_state <= S_DONE;          // (after the POST: its push comes first)
          end else if (sd_su == 3'(SD_SETUP - 1)) st_state <= S_RUN;
        end
        S_RUN: begin
          if (oob || post_fail) begin
            st_state <= S_DONE;                         // refused, or its POST was: nothing written (the run stops)
          end else if (sg_take) begin
            // the segment's first Tm-word w: row w / OLW, byte (w mod OLW) * Tm << sd_p16; its first beat starts
            // the address's low bytes before it (the previous row when that crosses the row's start)
            logic [OFF_W:0] o0, al;
            o0 = (OFF_W + 1)'((sg_nxt_idx & 32'(OLW - 1)) * 32'(TM)) << sd_p16;
            al = (OFF_W + 1)'(sg_nxt_addr[LOG2_BYTES-1:0]);
            if (o0 >= al) begin
              sd_srow <= OB_AW'(sg_nxt_idx >> LOG2_OLW);
              sd_soff <= OFF_W'(o0 - al);
            end else begin
              sd_srow <= OB_AW'(sg_nxt_idx >> LOG2_OLW) - 1'b1;
              sd_soff <= OFF_W'(o0 + (sd_p16 ? (OFF_W + 1)'(2 * OL) : (OFF_W + 1)'(OL)) - al);
            end
          end else if (!sg_v && awq_empty && sdq_empty && !sr0_v && !sr1_v && !sr2_v && !sr3_v && oq_empty && sd_none
                       && !m_axi_bvalid && !post_act) begin
            st_state <= S_DONE;                         // every burst written and acknowledged
          end
        end
        S_DONE: st_state <= S_IDLE;
        default: st_state <= S_IDLE;
      endcase
    end
  end
  wire unused = &{1'b0, su_segall_ov, m_axi_bid, m_axi_bresp, sg_more, sg_nxt_addr, sg_cur, sg_idx, sg_start[63:LOG2_BYTES],
                  sg_end[63:LOG2_BYTES], sdq_count, oq_full, 1'b0};
endmodule
`default_nettype wire
