// POST (STORE module): bias, requantization, activation, max-pool and nearest upsample of an accumulator tile into
// OBUF, Tm lanes per cycle. S0: one (y, x, o, dy, dx) step per cycle (ACC word and PBUF row, kept incrementally: no
// multiply or divide per cycle); S1 (pp1_): requantize the RAM outputs, max over the pooling window; OBUF write on
// the window's last step (OBUF port A, lane (element % OL)). Started by the STORE module (`start`, the instruction
// on `ins` from the next cycle); `done` in its last cycle. Range checks (OUT_OF_RANGE): stage 1 in P_SETUP, ACC /
// PBUF compared in the first P_RUN cycle, OBUF elements the cycle after; POST cannot finish earlier.
// Legend: y, x output position (x/up, y/up their source pixel: yb, xb = (y/up)*ps ...), o output-channel group, dy,
// dx the pooling window; ay / ax / ady / adx the ACC words of row yb, column xb, dy rows and dx columns.
`default_nettype none
module post
  import accel_pkg::*;
(
  input  wire                   clk,
  input  wire                   rst_n,
  input  wire                   clr,
  input  wire                   start,
  input  wire [INSN_BITS-1:0]   ins,
  input  wire                   prec16,
  output logic                  done,
  output logic                  oob,            // OUT_OF_RANGE this cycle
  // ACC read (port A of bank pp_acc_bank while acc_rd), PBUF read (port B), one cycle of RAM latency
  output logic                  acc_rd,
  output logic                  pp_acc_bank,
  output logic [AC_AW-1:0]      pp_aw,
  input  wire [2*ACC_W*TM-1:0]  acc_rd_a,       // both banks
  output logic [PB_AW-1:0]      pp_prow,
  input  wire [PREC_W*TM-1:0]   pb_rd,
  // OBUF writes, one per lane
  output logic [OL-1:0]         obw_we,
  output logic [16*OL-1:0]      obw_data,
  output logic [OB_AW*OL-1:0]   obw_row
);
  typedef enum logic [1:0] {P_IDLE, P_SETUP, P_RUN, P_DRAIN} pp_state_t;
  pp_state_t pp_state;
  localparam int LO_W = DSP_A_W - 1;                 // requantization: low part of v on the A port
  wire [TM*ACC_W-1:0] acc_a = acc_rd_a[ACC_W * TM * pp_acc_bank +: ACC_W * TM];
  assign      pp_acc_bank = ins[F_POST_ACC_BANK_LSB +: F_POST_ACC_BANK_W];
  wire [31:0] pp_oh = 32'(ins[F_POST_OH_LSB +: F_POST_OH_W]);
  wire [31:0] pp_ow = 32'(ins[F_POST_OW_LSB +: F_POST_OW_W]);
  wire [31:0] pp_og = 32'(ins[F_POST_OG_LSB +: F_POST_OG_W]);
  wire [31:0] pp_pbuf_oc = 32'(ins[F_POST_PBUF_OC_LSB +: F_POST_PBUF_OC_W]);
  wire        pp_act = ins[F_POST_ACT_LSB +: F_POST_ACT_W] != 0;
  wire [31:0] pp_pk_f = 32'(ins[F_POST_POOL_K_LSB +: F_POST_POOL_K_W]);
  wire [31:0] pp_ps_f = 32'(ins[F_POST_POOL_S_LSB +: F_POST_POOL_S_W]);
  wire [31:0] pp_up_f = 32'(ins[F_POST_UP_LSB +: F_POST_UP_W]);
  wire [15:0] pp_zp = 16'(ins[F_POST_ZP_OUT_LSB +: F_POST_ZP_OUT_W]);
  wire [31:0] pp_pk = pp_pk_f == 0 ? 32'd1 : pp_pk_f;
  wire [31:0] pp_ps = pp_ps_f == 0 ? 32'd1 : pp_ps_f;
  wire [31:0] pp_up = pp_up_f == 0 ? 32'd1 : pp_up_f;
  logic [31:0] pp_rows, pp_cols;                        // (out_rows / up) * up, (out_cols / up) * up
  logic [31:0] pp_rowwords, pp_lastrow, pp_lastcol;     // ACC words per tile row (ow*og), of row oh-1, of col ow-1
  logic [31:0] pp_psrow, pp_pscol;                      // ACC words per ps rows, per ps columns
  logic [31:0] pp_y, pp_x, pp_o, pp_dy, pp_dx;
  logic [31:0] pp_yu, pp_xu, pp_yb, pp_xb;              // y mod up, x mod up, (y/up)*ps, (x/up)*ps
  logic [31:0] pp_ay, pp_ax, pp_ady, pp_adx;            // ACC words of row yb, column xb, dy rows, dx columns
  logic [31:0] pp_oidx;                                 // OBUF element of (y, x, o): ((y*cols + x)*og + o)*Tm
  logic signed [15:0] pp_max [TM];
  logic signed [15:0] pp_res [TM];
  wire pp_wfirst = pp_dy == 0 && pp_dx == 0;
  wire pp_wlast = pp_dy + 32'd1 >= pp_pk && pp_dx + 32'd1 >= pp_pk;
  wire pp_issue = pp_state == P_RUN && pp_rows != 0 && pp_cols != 0 && pp_og != 0;
  wire [31:0] pp_yy = pp_yb + pp_dy;
  wire [31:0] pp_xx = pp_xb + pp_dx;
  assign pp_prow = PB_AW'((pp_pbuf_oc >> LOG2_TM) + pp_o);
  logic pp1_v, pp1_first, pp1_last;
  logic [31:0] pp1_oidx;

  /* verilator lint_off UNUSEDSIGNAL */  // the reserved bytes of the parameter record
  // q = clamp(((v*M + 2^(s-1)) >> s) + zp), v = acc + bias on ACC_W + 1 bits (the quantizer keeps the bias within
  // the accumulator range), M and s of the negative side when act and v < 0
  function automatic logic signed [15:0] requant(input logic signed [ACC_W-1:0] acc,
                                                 input logic [PREC_W-1:0] rec, input logic act,
                                                 input logic [15:0] zp, input logic p16);
    logic signed [ACC_W:0] v;
    logic signed [15:0] mlt;
    logic signed [ACC_W+16:0] pm;
    logic signed [DSP_A_W-1:0] vl;
    logic signed [ACC_W-LO_W:0] vh;
    logic signed [DSP_A_W+15:0] pl;
    logic signed [ACC_W-LO_W+16:0] ph;
    logic signed [63:0] t, q, qmin, qmax;
    logic [7:0] sh;
    logic neg;
    v = (ACC_W + 1)'(acc) + (ACC_W + 1)'(signed'(rec[PR_BIAS_LSB +: PR_BIAS_W]));
    neg = act && v < 0;
    mlt = neg ? signed'(rec[PR_MULT_NEG_LSB +: PR_MULT_NEG_W]) : signed'(rec[PR_MULT_POS_LSB +: PR_MULT_POS_W]);
    sh = neg ? rec[PR_SHIFT_NEG_LSB +: PR_SHIFT_NEG_W] : rec[PR_SHIFT_POS_LSB +: PR_SHIFT_POS_W];
    // v * M as two DSP48E2-sized multiplies (UG579: 27 x 18 signed): the low LO_W = DSP_A_W - 1 bits of v
    // (zero-extended) and the high ACC_W + 1 - LO_W bits (signed), summed in the fabric
    vl = {1'b0, v[LO_W-1:0]};
    vh = v[ACC_W:LO_W];
    pl = vl * mlt;
    ph = vh * mlt;
    pm = ((ACC_W + 17)'(ph) <<< LO_W) + (ACC_W + 17)'(pl);
    // (the shift is at most isa.MAX_SHIFT = 63: 6 bits)
    t = 64'(pm) + (64'sd1 <<< (sh[5:0] - 6'd1));
    q = (t >>> sh[5:0]) + 64'(signed'(zp));
    qmin = p16 ? -64'sd32768 : -64'sd128;
    qmax = p16 ? 64'sd32767 : 64'sd127;
    if (q < qmin) q = qmin;
    if (q > qmax) q = qmax;
    requant = q[15:0];
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  // S0: ACC word (yy*ow + xx)*og + o of the window element (y, x, o, dy, dx), yy = (y/up)*ps + dy and
  // xx = (x/up)*ps + dx clamped to the tile (kept incrementally: no multiply or divide per cycle)
  always_comb begin
    logic [31:0] rp, cp;
    rp = pp_yy > pp_oh - 32'd1 ? pp_lastrow : pp_ay + pp_ady;
    cp = pp_xx > pp_ow - 32'd1 ? pp_lastcol : pp_ax + pp_adx;
    pp_aw = AC_AW'(rp + cp + pp_o);
  end
  // S1: requantize the Tm accumulators, max over the pooling window
  always_comb begin
    for (int m = 0; m < TM; m++) begin
      logic signed [15:0] q;
      q = requant(signed'(acc_a[ACC_W * m +: ACC_W]), pb_rd[PREC_W * m +: PREC_W], pp_act, pp_zp,
                  prec16);
      pp_res[m] = (pp1_first || q > pp_max[m]) ? q : pp_max[m];
    end
  end
  always_ff @(posedge clk) begin
    if (!rst_n || clr) pp1_v <= 1'b0;
    else pp1_v <= pp_issue;
    pp1_first <= pp_wfirst;
    pp1_last <= pp_wlast;
    pp1_oidx <= pp_oidx;
    if (pp1_v) begin
      for (int m = 0; m < TM; m++) pp_max[m] <= pp_res[m];
    end
  end
  // POST range checks: stage 1 in P_SETUP; ACC / PBUF compared in the first P_RUN cycle, the OBUF elements
  // (rows x cols x og words) registered then and compared the cycle after; the POST cannot finish earlier than
  // that (P_RUN, P_DRAIN, S_DONE), so the next instruction of the STORE module never starts after an error.
  logic pp_chk1, pp_chk2, pp_k_pb, pp_k_zero;
  logic [39:0] pp_k_cog, pp_k_ob;
  logic [15:0] pp_k_r;                                  // output rows (at most 4095)
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      pp_chk1 <= 1'b0;
      pp_chk2 <= 1'b0;
    end else begin
      pp_chk1 <= pp_state == P_SETUP;
      pp_chk2 <= pp_chk1;
    end
    if (pp_chk1) pp_k_ob <= mul40(pp_k_cog, pp_k_r);
  end
  // (ACC words oh*ow*og = (oh-1)*ow*og + ow*og, both set up in P_SETUP)
  assign oob = !pp_k_zero && ((pp_chk1 && (33'(pp_lastrow) + 33'(pp_rowwords) > 33'(ACC_WORDS) || pp_k_pb))
                                 || (pp_chk2 && pp_k_ob > 40'(prec16 ? OBUF_WORDS16 : OBUF_WORDS8)));

  // OBUF lane writes: element pp1_oidx + m goes to lane (pp1_oidx + m) % OL
  wire ob_pwr = pp1_v && pp1_last;
  always_comb begin
    for (int l = 0; l < OL; l++) begin
      logic [LOG2_OL-1:0] rel;
      logic [31:0] row;
      // (pp1_oidx is a multiple of Tm: with OL = Tm, lane l always takes element m = l)
      rel = OL == TM ? LOG2_OL'(l) : LOG2_OL'(l) - pp1_oidx[LOG2_OL-1:0];
      row = (pp1_oidx >> LOG2_OL) + (OL == TM ? 32'd0 : 32'(LOG2_OL'(l) < pp1_oidx[LOG2_OL-1:0]));
      obw_we[l] = ob_pwr && 32'(rel) < 32'(TM) && row < 32'(OB_D);
      obw_data[16 * l +: 16] = pp_res[32'(rel) < 32'(TM) ? 32'(rel) : 32'd0];
      obw_row[OB_AW * l +: OB_AW] = OB_AW'(row);
    end
  end

  assign acc_rd = pp_state == P_RUN;
  wire unused = &{1'b0, ins, 1'b0};                     // (POST uses only its own fields)
  assign done = (pp_state == P_RUN && !pp_issue) || pp_state == P_DRAIN;
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      pp_state <= P_IDLE;
      {pp_y, pp_x, pp_o, pp_dy, pp_dx, pp_oidx} <= '0;
      {pp_yu, pp_xu, pp_yb, pp_xb, pp_ay, pp_ax, pp_ady, pp_adx} <= '0;
      {pp_rows, pp_cols, pp_rowwords, pp_lastrow, pp_lastcol, pp_psrow, pp_pscol} <= '0;
    end else begin
      case (pp_state)
        P_IDLE:
          if (start) begin
            {pp_y, pp_x, pp_o, pp_dy, pp_dx, pp_oidx} <= '0;
            {pp_yu, pp_xu, pp_yb, pp_xb, pp_ay, pp_ax, pp_ady, pp_adx} <= '0;
            pp_state <= P_SETUP;
          end
        P_SETUP: begin                                  // per-instruction constants (LUT multiplies)
          logic [31:0] rw, rc, cc;
          logic pl;
          logic [F_POST_OUT_ROWS_W-1:0] orows, rq;
          logic [F_POST_OUT_COLS_W-1:0] ocols, cq;
          logic [F_POST_UP_W-1:0] up;
          // (divisions on the fields' own widths: a 12-bit by 3-bit divider each)
          orows = ins[F_POST_OUT_ROWS_LSB +: F_POST_OUT_ROWS_W];
          ocols = ins[F_POST_OUT_COLS_LSB +: F_POST_OUT_COLS_W];
          up = F_POST_UP_W'(pp_up);
          rq = orows / F_POST_OUT_ROWS_W'(up);
          cq = ocols / F_POST_OUT_COLS_W'(up);
          rw = 32'(mul_lut(64'(pp_ow), 16'(pp_og)));
          // range checks, stage 1: ACC words oh*ow*og, PBUF entries, the output rows / columns x og (no pooling:
          // the tile's top-left rows and columns, at most oh x ow, as the golden simulator)
          pl = pp_pk > 32'd1 || pp_ps > 32'd1;
          rc = pl || 32'(rq) < pp_oh ? 32'(rq) : pp_oh;
          cc = pl || 32'(cq) < pp_ow ? 32'(cq) : pp_ow;
          pp_k_pb <= pp_pbuf_oc + (pp_og << LOG2_TM) > 32'(PBUF_ENTRIES);
          pp_k_zero <= pp_oh == 0 || pp_ow == 0 || pp_og == 0;
          pp_k_r <= 16'(mul40(40'(rc), 16'(up)));
          pp_k_cog <= mul40(mul40(40'(cc), 16'(up)), 16'(pp_og));
          pp_rows <= 32'(mul_lut(64'(rq), 16'(up)));
          pp_cols <= 32'(mul_lut(64'(cq), 16'(up)));
          pp_rowwords <= rw;
          pp_lastrow <= 32'(mul_lut(64'(rw), 16'(pp_oh - 32'd1)));
          pp_lastcol <= 32'(mul_lut(64'(pp_og), 16'(pp_ow - 32'd1)));
          pp_psrow <= 32'(mul_lut(64'(rw), 16'(pp_ps)));
          pp_pscol <= 32'(mul_lut(64'(pp_og), 16'(pp_ps)));
          pp_state <= P_RUN;
        end
        P_RUN:
          if (!pp_issue) begin
            pp_state <= P_IDLE;
          end else if (!pp_wlast) begin
            if (pp_dx + 32'd1 < pp_pk) begin
              pp_dx <= pp_dx + 32'd1;
              pp_adx <= pp_adx + pp_og;
            end else begin
              pp_dx <= '0;
              pp_adx <= '0;
              pp_dy <= pp_dy + 32'd1;
              pp_ady <= pp_ady + pp_rowwords;
            end
          end else begin
            pp_dx <= '0;
            pp_dy <= '0;
            pp_adx <= '0;
            pp_ady <= '0;
            pp_oidx <= pp_oidx + 32'(TM);
            if (pp_o + 32'd1 < pp_og) pp_o <= pp_o + 32'd1;
            else begin
              pp_o <= '0;
              if (pp_x + 32'd1 < pp_cols) begin
                pp_x <= pp_x + 32'd1;
                if (pp_xu + 32'd1 < pp_up) pp_xu <= pp_xu + 32'd1;
                else begin
                  pp_xu <= '0;
                  pp_xb <= pp_xb + pp_ps;
                  pp_ax <= pp_ax + pp_pscol;
                end
              end else begin
                pp_x <= '0;
                pp_xu <= '0;
                pp_xb <= '0;
                pp_ax <= '0;
                pp_y <= pp_y + 32'd1;
                if (pp_yu + 32'd1 < pp_up) pp_yu <= pp_yu + 32'd1;
                else begin
                  pp_yu <= '0;
                  pp_yb <= pp_yb + pp_ps;
                  pp_ay <= pp_ay + pp_psrow;
                end
                if (pp_y + 32'd1 >= pp_rows) pp_state <= P_DRAIN;
              end
            end
          end
        P_DRAIN: pp_state <= P_IDLE;                  // the last step's OBUF write
        default: pp_state <= P_IDLE;
      endcase
    end
  end
endmodule
`default_nettype wire
