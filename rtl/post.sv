// POST (STORE module): bias, requantization, activation, max-pool and nearest upsample of an accumulator tile into
// OBUF, Tm lanes per cycle. S0: one (y, x, o, dy, dx) step per cycle (ACC word and PBUF row, kept incrementally: no
// multiply or divide per cycle); S1 (pp1_): the RAM outputs into the requantization pipeline (rtl/requant.sv, RQ_LAT
// stages, one lane each); after it (pq_) the max over the pooling window and, on the window's last step, the OBUF
// write (OBUF port A, lane (element % OL)); with the table bit (act bit 1) the activation table (rtl/act_table.sv,
// TB_LAT more stages, with beside it the identity above the table's window of id_above) between the
// requantization and the max; P_DRAIN waits RQ_LAT (+ TB_LAT) + 1 cycles for the
// last write. Started by the STORE module (`start`, the instruction
// on `ins` from the next cycle); `done` in its last cycle. Range checks (OUT_OF_RANGE): stage 1 in P_SETUP, ACC /
// PBUF compared in the first P_RUN cycle, OBUF elements the cycle after; POST cannot finish earlier.
// Legend: y, x output position (x/up, y/up their source pixel: yb, xb = (y/up)*ps ...), o output-channel group, dy,
// dx the pooling window; ay / ax / ady / adx the ACC words of row yb, column xb, dy rows and dx columns.
// Double-pumped PE array (PUMP = 2): the pixel of tile column xx is in ACC copy xx mod 2 (rtl/compute.sv,
// rtl/buffers.sv): both copies are read at pp_aw, the copy's word taken in S1 (pp1_sel).
// Precision: the POST's own prec field (ISA 6: the output's int8 / int16 clamp, table indexing and OBUF words),
// registered in the first setup cycle (pp_p16, as the table bit) and constant while the POST runs; the pipeline
// drains (P_DRAIN) before `done`, and the STORE module starts the next POST only after it.
`default_nettype none
module post
  import accel_pkg::*;
(
  input  wire                   clk,
  input  wire                   rst_n,
  input  wire                   clr,
  input  wire                   start,
  input  wire [INSN_BITS-1:0]   ins,
  output logic                  done,
  output logic                  oob,            // OUT_OF_RANGE this cycle
  // ACC read (port A of bank pp_acc_bank while acc_rd), PBUF read (port B), one cycle of RAM latency
  output logic                  acc_rd,
  output logic                  pp_acc_bank,
  output logic [AC_AW-1:0]      pp_aw,
  input  wire [2*ACC_W*TM-1:0]  acc_rd_a,       // both banks
  input  wire [2*ACC_W*TM-1:0]  acc_rd_c,       // PUMP = 2: ACC copy 1, port A (both banks)
  output logic [PB_AW-1:0]      pp_prow,
  input  wire [PREC_W*TM-1:0]   pb_rd,
  // TBUF reads (port B, each lane its own row; rtl/act_table.sv)
  output logic [TB_AW*TM-1:0]   pp_trow,
  input  wire [PREC_W*TM-1:0]   tb_rd,
  // OBUF writes, one per lane
  output logic [OL-1:0]         obw_we,
  output logic [16*OL-1:0]      obw_data,
  output logic [OB_AW*OL-1:0]   obw_row,
  // OBUF Tm-words written so far, in order (every word w < words_done holds its value): the STORE after this POST
  // overlaps it and reads only those (rtl/store.sv)
  output logic [OBW_W-1:0]      words_done
);
  typedef enum logic [1:0] {P_IDLE, P_SETUP, P_RUN, P_DRAIN} pp_state_t;
  pp_state_t pp_state;
  logic pp1_sel;                                        // PUMP = 2: the S1 word's pixel is in ACC copy 1
  wire [TM*ACC_W-1:0] acc_a = PUMP == 2 && pp1_sel ? acc_rd_c[ACC_W * TM * pp_acc_bank +: ACC_W * TM]
                                                   : acc_rd_a[ACC_W * TM * pp_acc_bank +: ACC_W * TM];
  assign      pp_acc_bank = ins[F_POST_ACC_BANK_LSB +: F_POST_ACC_BANK_W];
  wire [31:0] pp_oh = 32'(ins[F_POST_OH_LSB +: F_POST_OH_W]);
  wire [31:0] pp_ow = 32'(ins[F_POST_OW_LSB +: F_POST_OW_W]);
  wire [31:0] pp_og = 32'(ins[F_POST_OG_LSB +: F_POST_OG_W]);
  wire [31:0] pp_pbuf_oc = 32'(ins[F_POST_PBUF_OC_LSB +: F_POST_PBUF_OC_W]);
  wire        pp_act = (32'(ins[F_POST_ACT_LSB +: F_POST_ACT_W]) & ACT_NEG_MULT) != 0;
  logic       pp_tab;                                   // the table bit, registered in the first setup cycle
  logic       pp_p16;                                   // the precision (prec field), registered with pp_tab
  logic       pp_ida;                                   // the identity above the table's window (id_above, table bit)
  logic [F_POST_ID_SHIFT_W-1:0] pp_idsh;                // its id_shift and zp_id (registered with pp_tab)
  logic signed [F_POST_ZP_ID_W-1:0] pp_zpid;
  wire [31:0] pp_pk_f = 32'(ins[F_POST_POOL_K_LSB +: F_POST_POOL_K_W]);
  wire [31:0] pp_ps_f = 32'(ins[F_POST_POOL_S_LSB +: F_POST_POOL_S_W]);
  wire [31:0] pp_up_f = 32'(ins[F_POST_UP_LSB +: F_POST_UP_W]);
  wire [15:0] pp_zp = 16'(ins[F_POST_ZP_OUT_LSB +: F_POST_ZP_OUT_W]);
  wire [31:0] pp_pk = pp_pk_f == 0 ? 32'd1 : pp_pk_f;
  wire [31:0] pp_ps = pp_ps_f == 0 ? 32'd1 : pp_ps_f;
  wire [31:0] pp_up = pp_up_f == 0 ? 32'd1 : pp_up_f;
  logic [31:0] pp_rows, pp_cols;                        // (out_rows / up) * up, (out_cols / up) * up
  wire  [31:0] pp_rowwords, pp_lastrow, pp_lastcol;     // ACC words per tile row (ow*og), of row oh-1, of col ow-1
  logic [31:0] pp_psrow, pp_pscol;                      // ACC words per ps rows, per ps columns
  // counters on the fields' widths; ACC words modulo the ACC address width (pp_aw keeps AC_AW bits)
  logic [F_POST_OUT_ROWS_W-1:0] pp_y;
  logic [F_POST_OUT_COLS_W-1:0] pp_x;
  logic [F_POST_OG_W-1:0] pp_o;
  logic [F_POST_POOL_K_W-1:0] pp_dy, pp_dx;
  logic [F_POST_UP_W-1:0] pp_yu, pp_xu;                 // y mod up, x mod up
  logic [15:0] pp_yb, pp_xb;                            // (y/up)*ps, (x/up)*ps (at most 4095 * 7)
  logic [AC_AW-1:0] pp_ay, pp_ax, pp_ady, pp_adx;       // ACC words of row yb, column xb, dy rows, dx columns
  // each counter's "at its last value" flag (x + 1 < cols  <=>  x != cols - 1, as x < cols) kept in a register:
  // set from (counter == last - 1) when it counts up, from (last == 0) when it returns to 0; the tile's last row /
  // column for the clamp
  logic pp_dxl, pp_dyl, pp_ol, pp_xl, pp_xul, pp_yl, pp_yul;
  logic [F_POST_OUT_ROWS_W-1:0] pp_rows2;
  logic [F_POST_OUT_COLS_W-1:0] pp_cols2;
  logic [F_POST_OG_W-1:0] pp_og2;
  logic [F_POST_POOL_K_W-1:0] pp_pk2;
  logic [F_POST_UP_W-1:0] pp_up2;
  logic pp_rowsz, pp_colsz, pp_ogz, pp_pkz, pp_upz;
  logic signed [16:0] pp_ow1;                           // ow - 1: pp_xrem at the start of each row
  logic pp_oh0, pp_ow0;
  localparam int OIDX_STEP = OL == TM ? 1 : TM;
  logic [31:0] pp_oidx;                                 // OBUF word (OL = Tm) or element of (y, x, o): (y*cols + x)*og + o (x Tm)
  logic signed [15:0] pp_max [TM];
  logic signed [15:0] pp_res [TM];
  wire pp_wfirst = pp_dy == 0 && pp_dx == 0;
  wire pp_wlast = pp_dyl && pp_dxl;
  logic pp_nz;                                          // rows, columns and og all non-zero (set up)
  wire pp_issue = pp_state == P_RUN && pp_nz;
  // the clamp yb + dy > oh - 1 as dy > oh - 1 - yb: pp_yrem / pp_xrem kept beside pp_yb / pp_xb (signed), so the
  // compare of a few bits sits beside the address adder, not after an adder of its own (one carry chain per path)
  logic signed [16:0] pp_yrem, pp_xrem;
  localparam int KW = F_POST_POOL_K_W;
  wire pp_ypast = pp_yrem[16] || (pp_yrem[15:KW] == '0 && pp_dy > pp_yrem[KW-1:0]);
  wire pp_xpast = pp_xrem[16] || (pp_xrem[15:KW] == '0 && pp_dx > pp_xrem[KW-1:0]);
  logic ps_v, ps_first, ps_last;                        // S0b: the window step's ACC word registered in parts
  logic ps_cx;                                          // ... and its tile column's parity (PUMP = 2: the copy)
  logic [31:0] ps_oidx;
  logic [AC_AW-1:0] ps_rp, ps_cp;
  logic [F_POST_OG_W-1:0] ps_o;
  assign pp_prow = PB_AW'((pp_pbuf_oc >> LOG2_TM) + 32'(ps_o));
  logic pp1_v, pp1_first, pp1_last;
  logic [31:0] pp1_oidx;

  // S0: ACC word (yy*ow + xx)*og + o of the window element (y, x, o, dy, dx), yy = (y/up)*ps + dy and
  // xx = (x/up)*ps + dx clamped to the tile (kept incrementally: no multiply or divide per cycle): the row and
  // column parts registered (S0b), their sum with o the RAM address
  always_ff @(posedge clk) begin
    if (!rst_n || clr) ps_v <= 1'b0;
    else ps_v <= pp_issue;
    ps_first <= pp_wfirst;
    ps_last <= pp_wlast;
    ps_oidx <= pp_oidx;
    ps_o <= pp_o;
    ps_rp <= !pp_oh0 && pp_ypast ? AC_AW'(pp_lastrow) : pp_ay + pp_ady;
    ps_cp <= !pp_ow0 && pp_xpast ? AC_AW'(pp_lastcol) : pp_ax + pp_adx;
    ps_cx <= !pp_ow0 && pp_xpast ? pp_ow1[0] : pp_xb[0] ^ pp_dx[0];
  end
  assign pp_aw = ps_rp + ps_cp + AC_AW'(ps_o);
  // S1 .. S1+RQ_LAT: requantize the Tm accumulators (rtl/requant.sv, RQ_LAT registers), then the max over the
  // pooling window; the window flags and the OBUF element travel alongside (pq_ = after the requantization)
  localparam int XI_W = 34;                             // requant's x for the identity above a table's window
  logic signed [15:0] pp_q [TM];
  logic pp_above [TM];
  logic signed [XI_W-1:0] pp_xi [TM];
  for (genvar m = 0; m < TM; m++) begin : g_rq
    requant #(.XI_W(XI_W)) u_requant (.clk(clk), .acc(signed'(acc_a[ACC_W * m +: ACC_W])),
                       .rec(pb_rd[PREC_W * m +: PREC_W]), .act(pp_act), .zp(pp_zp), .p16(pp_p16), .q(pp_q[m]),
                       .above(pp_above[m]), .xi(pp_xi[m]));
  end
  // with the table bit, the activation table after it (rtl/act_table.sv, TB_LAT more registers): the window flags
  // and the OBUF element leave the delay line after RQ_LAT or RQ_LAT + TB_LAT registers, the last one (pq_) loaded
  // from the stage before either tap (pp_tab: the instruction's, registered at setup, constant while it runs; the
  // pipeline drains before the next POST starts), so that no select sits between a register and the OBUF address
  // arithmetic; the value takes the max's compare of each candidate, then the select (one LUT per bit)
  localparam int PD = RQ_LAT + TB_LAT;
  logic signed [15:0] pp_t [TM];
  for (genvar m = 0; m < TM; m++) begin : g_tb
    act_table #(.XI_W(XI_W)) u_tab (.clk(clk), .q(pp_q[m]), .above(pp_above[m]), .x(pp_xi[m]), .id_en(pp_ida),
                     .id_sh(pp_idsh), .zp_id(pp_zpid), .p16(pp_p16), .raddr(pp_trow[TB_AW * m +: TB_AW]),
                     .rdata(tb_rd[PREC_W * m +: PREC_W]), .y(pp_t[m]));
  end
  logic [PD-2:0] pd_v, pd_first, pd_last;
  logic [31:0] pd_oidx [PD-1];
  logic pq_v, pq_first, pq_last;
  logic [31:0] pq_oidx;
  // (cleared in setup: a POST without the table leaves its steps, already written from tap RQ_LAT - 2, in the
  // line's later stages, which a next POST with the table would write again from tap PD - 2)
  always_ff @(posedge clk) begin
    if (!rst_n || clr) {pd_v, pq_v} <= '0;
    else begin
      pd_v <= pp_state == P_SETUP ? '0 : {pd_v[PD-3:0], pp1_v};
      pq_v <= pp_tab ? pd_v[PD-2] : pd_v[RQ_LAT-2];
    end
    pd_first <= {pd_first[PD-3:0], pp1_first};
    pd_last <= {pd_last[PD-3:0], pp1_last};
    pd_oidx[0] <= pp1_oidx;
    for (int k = 1; k < PD - 1; k++) pd_oidx[k] <= pd_oidx[k - 1];
    pq_first <= pp_tab ? pd_first[PD-2] : pd_first[RQ_LAT-2];
    pq_last <= pp_tab ? pd_last[PD-2] : pd_last[RQ_LAT-2];
    pq_oidx <= pp_tab ? pd_oidx[PD-2] : pd_oidx[RQ_LAT-2];
  end
  always_comb begin
    for (int m = 0; m < TM; m++)
      pp_res[m] = pp_tab ? ((pq_first || pp_t[m] > pp_max[m]) ? pp_t[m] : pp_max[m])
                         : ((pq_first || pp_q[m] > pp_max[m]) ? pp_q[m] : pp_max[m]);
  end
  always_ff @(posedge clk) begin
    if (!rst_n || clr) pp1_v <= 1'b0;
    else pp1_v <= ps_v;
    pp1_first <= ps_first;
    pp1_last <= ps_last;
    pp1_oidx <= ps_oidx;
    pp1_sel <= ps_cx;
    if (pq_v) begin
      for (int m = 0; m < TM; m++) pp_max[m] <= pp_res[m];
    end
  end
  // Setup (P_SETUP, POST_SETUP cycles, counter pp_sc): the per-instruction constants with serial multipliers and
  // dividers (rtl/seq_mul.sv, rtl/seq_div.sv: one bit per cycle, no wide multiply or divide in a cycle), in the
  // order their operands are final (a product of a B-bit operand loaded in cycle c is final in cycle c + 1 + B):
  // cycle 0 loads ow*og, og*(ow-1) and out_rows / up, out_cols / up; cycle 9 (ow*og final) ow*og*(oh-1); cycle
  // 13 (quotients) the rows / columns; cycle 14 the OBUF extent cc*up*og; cycle 23 its product with the rows
  // rc*up, final in cycle 40 = POST_SETUP + 1, when the second range check (pp_chk2) reads it.
  logic [5:0] pp_sc;
  wire pp_setup_last = pp_state == P_SETUP && pp_sc == 6'(POST_SETUP - 1);
  wire sc0 = pp_state == P_SETUP && pp_sc == 6'd0;
  wire [F_POST_UP_W-1:0] pp_up3 = F_POST_UP_W'(pp_up);
  logic [F_POST_OUT_ROWS_W-1:0] pp_rq;
  logic [F_POST_OUT_COLS_W-1:0] pp_cq;
  logic [14:0] pp_kc1;                                  // cc * up
  logic [15:0] pp_k_r, pp_ohu;                          // output rows x up (at most 4095 x 7); oh x up
  logic [14:0] pp_owu;                                  // ow x up
  logic pp_pl;
  logic [31:0] pp_k_cog, pp_acc_room;
  wire  [31:0] pp_k_ob;
  logic pp_kc_ovf, pp_ob_ovf, pp_rw_big, pp_lr_ovf, pp_lc_ovf, pp_rw_ovf;
  seq_div #(.NW(F_POST_OUT_ROWS_W), .DW(F_POST_UP_W)) u_div_r (.clk(clk), .load(sc0),
      .n(ins[F_POST_OUT_ROWS_LSB +: F_POST_OUT_ROWS_W]), .d(pp_up3), .q(pp_rq));
  seq_div #(.NW(F_POST_OUT_COLS_W), .DW(F_POST_UP_W)) u_div_c (.clk(clk), .load(sc0),
      .n(ins[F_POST_OUT_COLS_LSB +: F_POST_OUT_COLS_W]), .d(pp_up3), .q(pp_cq));
  seq_mul #(.AW(F_POST_OW_W), .BW(F_POST_OG_W), .PW(32)) u_mul_rw (.clk(clk), .load(sc0),
      .a(F_POST_OW_W'(pp_ow)), .b(F_POST_OG_W'(pp_og)), .p(pp_rowwords), .ovf(pp_rw_ovf));
  seq_mul #(.AW(F_POST_OG_W), .BW(16), .PW(32)) u_mul_lc (.clk(clk), .load(sc0),
      .a(F_POST_OG_W'(pp_og)), .b(16'(pp_ow - 32'd1)), .p(pp_lastcol), .ovf(pp_lc_ovf));
  seq_mul #(.AW(32), .BW(16), .PW(32)) u_mul_lr (.clk(clk), .load(pp_state == P_SETUP && pp_sc == 6'd9),
      .a(pp_rowwords), .b(16'(pp_oh - 32'd1)), .p(pp_lastrow), .ovf(pp_lr_ovf));
  seq_mul #(.AW(15), .BW(F_POST_OG_W), .PW(32)) u_mul_kc (.clk(clk), .load(pp_state == P_SETUP && pp_sc == 6'd14),
      .a(pp_kc1), .b(F_POST_OG_W'(pp_og)), .p(pp_k_cog), .ovf(pp_kc_ovf));
  seq_mul #(.AW(32), .BW(16), .PW(31)) u_mul_ob (.clk(clk), .load(pp_state == P_SETUP && pp_sc == 6'd23),
      .a(pp_k_cog), .b(pp_k_r), .p(pp_k_ob[30:0]), .ovf(pp_ob_ovf));   // (over 2^31: out of range anyway)
  assign pp_k_ob[31] = 1'b0;
  // x * k for a 3-bit k (up, ps): three terms
  function automatic logic [31:0] mul3(input logic [31:0] x, input logic [2:0] k);
    mul3 = (k[0] ? x : 32'd0) + (k[1] ? x << 1 : 32'd0) + (k[2] ? x << 2 : 32'd0);
  endfunction

  // POST range checks: prepared in P_SETUP; ACC / PBUF compared in the first P_RUN cycle, the OBUF elements
  // (rows x cols x og words, pp_k_ob) the cycle after, each raised one cycle later; the POST cannot finish earlier
  // than that (P_RUN, P_DRAIN through the requantization pipeline, S_DONE), so the next instruction of the STORE
  // module never starts after an error.
  logic pp_chk1, pp_chk2, pp_chk3, pp_k_pb, pp_k_zero, pp_bad1, pp_bad2;
  logic [31:0] pp_pbe;
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      pp_chk1 <= 1'b0;
      pp_chk2 <= 1'b0;
      pp_chk3 <= 1'b0;
    end else begin
      pp_chk1 <= pp_setup_last;
      pp_chk2 <= pp_chk1;
      pp_chk3 <= pp_chk2;
    end
    // the compares registered, raised a cycle later (at chk2 / chk3, still before the POST can finish)
    pp_bad1 <= pp_rw_big || pp_lastrow > pp_acc_room || pp_k_pb;
    pp_bad2 <= pp_ob_ovf || pp_k_ob > 32'(pp_p16 ? OBUF_WORDS16 : OBUF_WORDS8);
  end
  // (ACC words oh*ow*og = (oh-1)*ow*og + ow*og > ACC_WORDS  <=>  (oh-1)*ow*og > ACC_WORDS - ow*og)
  assign oob = !pp_k_zero && ((pp_chk2 && pp_bad1) || (pp_chk3 && pp_bad2));
  // (products within 32 bits; ACC words taken modulo the ACC address width)
  wire unused_ovf = &{1'b0, pp_rw_ovf, pp_lc_ovf, pp_lr_ovf, pp_kc_ovf, pp_lastcol, pp_psrow, pp_pscol, 1'b0};

  // OBUF lane writes: element pq_oidx + m goes to lane (pq_oidx + m) % OL
  wire ob_pwr = pq_v && pq_last;
  wire [31:0] ob_r0 = OL == TM ? pq_oidx : pq_oidx >> LOG2_OL;
  wire ob_in0 = ob_r0 < 32'(OB_D), ob_in1 = ob_r0 < 32'(OB_D - 1);   // row ob_r0 / ob_r0 + 1 within OBUF
  always_comb begin
    for (int l = 0; l < OL; l++) begin
      logic [LOG2_OL-1:0] rel;
      logic [OB_AW-1:0] row;
      // (OL = Tm: pq_oidx counts output words, lane l takes element m = l; else it counts elements, a multiple of
      // Tm < OL, both powers of two)
      logic nxt;                                        // lane l's element is in the next OBUF row
      rel = OL == TM ? LOG2_OL'(l) : LOG2_OL'(l) - pq_oidx[LOG2_OL-1:0];
      nxt = OL != TM && LOG2_OL'(l) < pq_oidx[LOG2_OL-1:0];
      row = OL == TM ? OB_AW'(pq_oidx) : OB_AW'(pq_oidx >> LOG2_OL) + OB_AW'(nxt);
      // (row < OB_D as two compares of the row index beside the adder, one carry chain per path)
      obw_we[l] = ob_pwr && 32'(rel) < 32'(TM) && (nxt ? ob_in1 : ob_in0);
      obw_data[16 * l +: 16] = pp_res[32'(rel) < 32'(TM) ? 32'(rel) : 32'd0];
      obw_row[OB_AW * l +: OB_AW] = row;
    end
  end

  always_ff @(posedge clk)
    if (!rst_n || clr || start) words_done <= '0;
    else if (ob_pwr) words_done <= (OL == TM ? OBW_W'(pq_oidx) : OBW_W'(pq_oidx >> LOG2_TM)) + 1'b1;

  assign acc_rd = pp_state == P_RUN || ps_v;
  wire unused = &{1'b0, ins, 1'b0};                     // (POST uses only its own fields)
  logic [$clog2(PD + 2)-1:0] pp_dr;                    // drain cycles left (S0b, requantization (and table))
  assign done = (pp_state == P_RUN && !pp_issue) || (pp_state == P_DRAIN && pp_dr == 0);
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      pp_state <= P_IDLE;
      {pp_y, pp_x, pp_o, pp_dy, pp_dx, pp_oidx} <= '0;
      {pp_yu, pp_xu, pp_yb, pp_xb, pp_ay, pp_ax, pp_ady, pp_adx} <= '0;
      {pp_rows, pp_cols, pp_psrow, pp_pscol, pp_sc} <= '0;
      {pp_yrem, pp_xrem} <= '0;
    end else begin
      case (pp_state)
        P_IDLE:
          if (start) begin
            pp_sc <= '0;
            pp_state <= P_SETUP;
          end
        P_SETUP: begin                                  // per-instruction constants (see Setup above)
          pp_sc <= pp_sc + 6'd1;
          if (pp_sc == 6'd0) begin
            // the counters start at 0 (cleared here, not on start: no path from the queue head into them)
            {pp_y, pp_x, pp_o, pp_dy, pp_dx, pp_oidx} <= '0;
            {pp_yu, pp_xu, pp_yb, pp_xb, pp_ay, pp_ax, pp_ady, pp_adx} <= '0;
            // range checks, stage 1: PBUF entries; the output rows / columns (no pooling: the tile's top-left rows
            // and columns, at most oh x ow, as the golden simulator)
            pp_pl <= pp_pk > 32'd1 || pp_ps > 32'd1;
            pp_tab <= (32'(ins[F_POST_ACT_LSB +: F_POST_ACT_W]) & ACT_TABLE) != 0;
            pp_p16 <= 32'(ins[F_POST_PREC_LSB +: F_POST_PREC_W]) == PREC_INT16;
            pp_ida <= (32'(ins[F_POST_ACT_LSB +: F_POST_ACT_W]) & ACT_TABLE) != 0 && ins[F_POST_ID_ABOVE_LSB];
            pp_idsh <= ins[F_POST_ID_SHIFT_LSB +: F_POST_ID_SHIFT_W];
            pp_zpid <= signed'(ins[F_POST_ZP_ID_LSB +: F_POST_ZP_ID_W]);
            pp_pbe <= pp_pbuf_oc + (pp_og << LOG2_TM);    // PBUF records' end (compared at pp_sc 1)
            pp_k_zero <= pp_oh == 0 || pp_ow == 0 || pp_og == 0;
            pp_pscol <= mul3(pp_og, 3'(pp_ps));
            pp_ohu <= 16'(mul3(pp_oh, pp_up3));
            pp_owu <= 15'(mul3(pp_ow, pp_up3));
            pp_og2 <= F_POST_OG_W'(pp_og - 32'd2);
            pp_pk2 <= F_POST_POOL_K_W'(pp_pk - 32'd2);
            pp_up2 <= F_POST_UP_W'(pp_up - 32'd2);
            pp_ogz <= pp_og == 32'd1;
            pp_pkz <= pp_pk == 32'd1;
            pp_upz <= pp_up == 32'd1;
            pp_ow1 <= 17'(pp_ow) - 17'sd1;
            pp_yrem <= 17'(pp_oh) - 17'sd1;                  // (yb = xb = 0 here)
            pp_xrem <= 17'(pp_ow) - 17'sd1;
            pp_oh0 <= pp_oh == 0;
            pp_ow0 <= pp_ow == 0;
          end
          if (pp_sc == 6'd1) pp_k_pb <= pp_pbe > 32'(PB_D * TM_PITCH);   // (records at TM_PITCH; one chain each)
          if (pp_sc == 6'd14) begin                     // rows / columns final
            pp_rows2 <= F_POST_OUT_ROWS_W'(pp_rows - 32'd2);
            pp_cols2 <= F_POST_OUT_COLS_W'(pp_cols - 32'd2);
            pp_rowsz <= pp_rows == 32'd1;
            pp_nz <= pp_rows != 0 && pp_cols != 0 && pp_og != 0;
            pp_colsz <= pp_cols == 32'd1;
          end
          if (pp_setup_last) begin                      // every counter starts at 0
            {pp_dxl, pp_dyl, pp_xul, pp_yul} <= {4{1'b0}} | {pp_pkz, pp_pkz, pp_upz, pp_upz};
            {pp_ol, pp_xl, pp_yl} <= {pp_ogz, pp_colsz, pp_rowsz};
          end
          if (pp_sc == 6'd9) begin                      // ow*og final
            pp_psrow <= mul3(pp_rowwords, 3'(pp_ps));
            pp_rw_big <= pp_rowwords > 32'(ACC_WORDS);
            pp_acc_room <= 32'(ACC_WORDS) - pp_rowwords;
          end
          if (pp_sc == 6'd13) begin                     // quotients final
            pp_rows <= mul3(32'(pp_rq), pp_up3);
            pp_cols <= mul3(32'(pp_cq), pp_up3);
            // (min(q, o) x up as a choice between q x up and the o x up of cycle 0: the compare beside the adder)
            pp_k_r <= pp_pl || 32'(pp_rq) < pp_oh ? 16'(mul3(32'(pp_rq), pp_up3)) : pp_ohu;
            pp_kc1 <= pp_pl || 32'(pp_cq) < pp_ow ? 15'(mul3(32'(pp_cq), pp_up3)) : pp_owu;
          end
          if (pp_setup_last) pp_state <= P_RUN;
        end
        P_RUN:
          if (!pp_issue) begin
            pp_state <= P_IDLE;
          end else if (!pp_wlast) begin
            if (!pp_dxl) begin
              pp_dx <= pp_dx + 1'b1;
              pp_dxl <= pp_dx == pp_pk2;
              pp_adx <= pp_adx + AC_AW'(pp_og);
            end else begin
              pp_dx <= '0;
              pp_dxl <= pp_pkz;
              pp_adx <= '0;
              pp_dy <= pp_dy + 1'b1;
              pp_dyl <= pp_dy == pp_pk2;
              pp_ady <= pp_ady + AC_AW'(pp_rowwords);
            end
          end else begin
            {pp_dx, pp_dy, pp_adx, pp_ady} <= '0;
            {pp_dxl, pp_dyl} <= {2{pp_pkz}};
            pp_oidx <= pp_oidx + 32'(OIDX_STEP);
            if (!pp_ol) begin
              pp_o <= pp_o + 1'b1;
              pp_ol <= pp_o == pp_og2;
            end else begin
              pp_o <= '0;
              pp_ol <= pp_ogz;
              if (!pp_xl) begin
                pp_x <= pp_x + 1'b1;
                pp_xl <= pp_x == pp_cols2;
                if (!pp_xul) begin
                  pp_xu <= pp_xu + 1'b1;
                  pp_xul <= pp_xu == pp_up2;
                end else begin
                  pp_xu <= '0;
                  pp_xul <= pp_upz;
                  pp_xb <= pp_xb + 16'(pp_ps);
                  pp_xrem <= pp_xrem - 17'(pp_ps);
                  pp_ax <= pp_ax + AC_AW'(pp_pscol);
                end
              end else begin
                {pp_x, pp_xu, pp_xb, pp_ax} <= '0;
                pp_xrem <= pp_ow1;
                pp_xl <= pp_colsz;
                pp_xul <= pp_upz;
                pp_y <= pp_y + 1'b1;
                pp_yl <= pp_y == pp_rows2;
                if (!pp_yul) begin
                  pp_yu <= pp_yu + 1'b1;
                  pp_yul <= pp_yu == pp_up2;
                end else begin
                  pp_yu <= '0;
                  pp_yul <= pp_upz;
                  pp_yb <= pp_yb + 16'(pp_ps);
                  pp_yrem <= pp_yrem - 17'(pp_ps);
                  pp_ay <= pp_ay + AC_AW'(pp_psrow);
                end
                if (pp_yl) begin
                  pp_state <= P_DRAIN;
                  pp_dr <= pp_tab ? ($clog2(PD + 2))'(PD + 1) : ($clog2(PD + 2))'(RQ_LAT + 1);
                end
              end
            end
          end
        P_DRAIN:                                      // until the last step's OBUF write
          if (pp_dr == 0) pp_state <= P_IDLE;
          else pp_dr <= pp_dr - 1'b1;
        default: pp_state <= P_IDLE;
      endcase
    end
  end
endmodule
`default_nettype wire
