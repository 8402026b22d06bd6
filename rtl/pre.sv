// PRE (issue 45; the ISA's PRE through rtl/pre_insn.sv): a camera frame in DDR (uint8, 3 channels per pixel, rows
// `src_pitch` bytes apart) to the network input in DDR, exactly host/pre.py (`pre_run` the bit-exact reference,
// `pre_geometry` / `pre_quant` give every parameter: no division here). One run per `start`; `busy` until the last
// write response, `done` pulses then. A band: the input's rows y0 .. y0 + rows - 1, row y0 at dst_addr, sy0 = step_y
// x (placed rows above y0) mod 2^32 (rtl/pre_insn.sv's serial product). docs/rtl.md "PRE" has the details.
// Rows: output row y (a padding row unless top <= y < top + out_h) takes source rows iy, iy1 and weight fy from the
// Q12.20 accumulator sy (the last placed row: iy = frame_h - 1, fy = 0). Four line buffers (rtl/ram_tdp.sv; the HLS
// kernel's PRE_LINE_BEATS words of DW bits: a row's raw AXI beats, beat k at address k, a tag and the byte `off` of
// pixel 0 in beat 0) in two pairs: row y uses pair y mod 2. The planner (s_), per placed row, as the kernel's
// pre_fetch_rows within the row's pair: iy unless a buffer of the pair holds it, iy1 unless one holds it or it is iy
// (iy into the buffer not holding iy1, buffer 0 when both are read); once the pixel side has left the pair (10
// cycles after its last pixel: past the buffers' read), the row address walks to each (+= src_pitch a row, one row
// back at most) and rtl/pre_rd.sv reads it (whole beats in AXI4 bursts, the second row's request once the first's
// bursts are out); then the row goes to the pixel side (n_: one row waiting) and the planner goes on with the next
// row, whose fetch into the other pair overlaps this row's pixels. The HLS kernel (accel_kernel_pre.h: two
// buffers) fetches, then issues. The pixel side (x_) issues a row's net_w pixels, one per cycle while the writer's
// pixel FIFO has room (credits), the next row's with the last: c2 placed / last column; c3 the accumulator sx;
// c4 ix as 3 ix, fx, ix >= frame_w - 1; c5 the clamp, per buffer the byte b = off + 3 ix, beats k = b >> LB, k + 1
// (ports A / B), sh = b mod B; c6 the beats; c7 per buffer the 4-byte group of byte sh (9 bytes); c8 the 6 bytes of
// ix, ix + 1; c9 the top / bottom row's pixels and the weights into rtl/pre_chan.sv per channel (CH_LAT = 16); then
// the channel order and int8 / int16 packing into rtl/pre_wr.sv (strided strobed writes).
// Cycles: generator/spec/timing.py pre_cycles (this schedule; within 1% of tests/rtl/test_pre_insn.py's runs).
// Legend: p_ the run's parameters, s_ the planner, n_ the row handed over, x_ the pixel side, tag / tv / off the
// line buffers' rows, h_ the rows' hits, c<k>_ the pixel pipeline's stage k, rd_ the row reader.
`default_nettype none
module pre
  import accel_pkg::*;
#(
  parameter int DW = AXI_DW                      // AXI data width (bits): 128 or 256 (>= 128)
) (
  input  wire               clk,
  input  wire               rst_n,
  input  wire               start,
  output logic              busy,
  output logic              done,
  input  wire [AXI_AW-1:0]  src_addr,            // frame row src_row's address (rows above it are not read)
  input  wire [12:0]        src_row,             // <= the band's first source row (rtl/pre_insn.sv: equal)
  input  wire [15:0]        src_pitch,
  input  wire [12:0]        frame_w,
  input  wire [12:0]        frame_h,
  input  wire [12:0]        net_w,
  input  wire [12:0]        y0,                  // the band: its first row, rows (>= 1, y0 + rows <= net_h), the
  input  wire [12:0]        rows,                // source-row accumulator at row y0
  input  wire [31:0]        sy0,
  input  wire [12:0]        out_w,
  input  wire [12:0]        out_h,
  input  wire [12:0]        left,
  input  wire [12:0]        top,
  input  wire [31:0]        step_x,
  input  wire [31:0]        step_y,
  input  wire [15:0]        mult,
  input  wire [5:0]         shift,
  input  wire [15:0]        zero_point,
  input  wire               prec,                // 0 int8, 1 int16
  input  wire               swap,
  input  wire [AXI_AW-1:0]  dst_addr,
  input  wire [31:0]        dst_row,
  input  wire [7:0]         dst_pix,
  input  wire [20:0]        span_e,              // a row's bytes: (net_w - 1) dst_pix + 3 or 6 (int16)
  // AXI4 master
  output logic [0:0]        m_axi_arid,
  output logic [AXI_AW-1:0] m_axi_araddr,
  output logic [7:0]        m_axi_arlen,
  output logic [2:0]        m_axi_arsize,
  output logic [1:0]        m_axi_arburst,
  output logic              m_axi_arlock,
  output logic [3:0]        m_axi_arcache,
  output logic [2:0]        m_axi_arprot,
  output logic              m_axi_arvalid,
  input  wire               m_axi_arready,
  input  wire [0:0]         m_axi_rid,
  input  wire [DW-1:0]      m_axi_rdata,
  input  wire [1:0]         m_axi_rresp,
  input  wire               m_axi_rlast,
  input  wire               m_axi_rvalid,
  output logic              m_axi_rready,
  output logic [0:0]        m_axi_awid,
  output logic [AXI_AW-1:0] m_axi_awaddr,
  output logic [7:0]        m_axi_awlen,
  output logic [2:0]        m_axi_awsize,
  output logic [1:0]        m_axi_awburst,
  output logic              m_axi_awlock,
  output logic [3:0]        m_axi_awcache,
  output logic [2:0]        m_axi_awprot,
  output logic              m_axi_awvalid,
  input  wire               m_axi_awready,
  output logic [DW-1:0]     m_axi_wdata,
  output logic [DW/8-1:0]   m_axi_wstrb,
  output logic              m_axi_wlast,
  output logic              m_axi_wvalid,
  input  wire               m_axi_wready,
  input  wire [0:0]         m_axi_bid,
  input  wire [1:0]         m_axi_bresp,
  input  wire               m_axi_bvalid,
  output logic              m_axi_bready
);
  localparam int CH_LAT = 16, CRED = 30;
  localparam int B = DW / 8, LB = $clog2(B);
  localparam int LBEATS = 3 * PRE_MAX_FRAME / B + 2, KW = $clog2(LBEATS);   // accel_kernel_pre.h's PRE_LINE_BEATS
  if (DW < 128) begin : g_bad_dw
    $error("pre: DW must be at least 128 bits");
  end
  assign {m_axi_arid, m_axi_awid} = '0;
  assign m_axi_arsize = 3'($clog2(DW / 8));
  assign m_axi_awsize = 3'($clog2(DW / 8));
  assign {m_axi_arburst, m_axi_awburst} = {2'b01, 2'b01};
  assign {m_axi_arlock, m_axi_awlock} = '0;
  assign {m_axi_arcache, m_axi_awcache} = {4'b0011, 4'b0011};
  assign {m_axi_arprot, m_axi_awprot} = '0;
  assign m_axi_bready = 1'b1;

  // ---- parameters of the run
  logic [AXI_AW-1:0] p_dst;
  logic [20:0] p_span;
  logic [15:0] p_pitch, p_mult, p_zp;
  logic [12:0] p_fw, p_nw, p_nh, p_top, p_left, p_fw1, p_fh1, p_nw1, p_xhi, p_yhi, p_ylast;
  logic [31:0] p_sx, p_sy, p_drow;
  logic [7:0] p_dpix;
  logic [5:0] p_s1;
  logic [13:0] p_fw13;
  logic p_p16, p_swap;
  always_ff @(posedge clk)
    if (start && !busy) begin
      {p_dst, p_span, p_pitch, p_mult, p_zp} <= {dst_addr, span_e, src_pitch, mult, zero_point};
      {p_fw, p_nw, p_top, p_left} <= {frame_w, net_w, top, left};
      p_fw1 <= frame_w - 13'd1;
      p_fh1 <= frame_h - 13'd1;
      p_nw1 <= net_w - 13'd1;
      p_xhi <= left + out_w;
      p_yhi <= top + out_h;
      p_ylast <= y0 + rows - 13'd1;
      p_nh <= rows;
      {p_sx, p_sy, p_drow, p_dpix, p_s1, p_p16, p_swap} <= {step_x, step_y, dst_row, dst_pix, shift - 6'd1, prec, swap};
    end
  always_ff @(posedge clk) p_fw13 <= 14'(p_fw1) + (14'(p_fw1) << 1);   // 3 (frame_w - 1): the last pixel's byte
  always_ff @(posedge clk) p_npitch <= {{(AXI_AW - 16){p_pitch != '0}}, 16'd0 - p_pitch};   // (a 16-bit chain)

  // ---- row planner (s_) and pixel side (x_): per pair x_use the rows taken and not yet released (8 cycles after
  // the row's last pixel: past the line buffers' read), x_rel the release delay lines
  typedef enum logic [3:0] {S_IDLE, S_ROW, S_ROW2, S_ROW3, S_NEED, S_DEC, S_HOLD, S_SEEK, S_FETCH, S_HAND,
                            S_DRAIN} s_state_t;
  (* fsm_encoding = "none" *) s_state_t s_st;
  typedef enum logic [1:0] {X_IDLE, X_PIX} x_state_t;
  x_state_t x_st;
  logic [12:0] s_y, s_iyr, s_iy, s_iy1, s_fr, s_ri, tag [4], x_x;
  logic [11:0] s_fyr, s_fy, n_fy, x_fy;
  logic [31:0] s_sy;
  logic [AXI_AW-1:0] s_ra, rd_ra, p_npitch;            // (p_npitch: -src_pitch, a walk one row back)
  logic [LB-1:0] off [4];
  logic [3:0] tv;
  logic s_placed, s_lastrow, s_ge, s_ylast, h_t0, h_t1, h_b0, h_b1, h_eq, s_selt, s_selb, s_fj, s_f2, s_bk;
  logic rd_go, rd_free, rd_busy, wr_init, wr_done, issue, cred_ok;
  logic [1:0] rd_buf, x_use [2];
  logic [7:0] x_rel [2];
  logic n_v, n_placed, n_selt, n_selb, n_p, x_placed, x_selt, x_selb, x_p, x_xlast;
  wire s_p = s_y[0];                                   // the row's pair
  wire x_take = n_v && (x_st == X_IDLE || (issue && x_xlast));
  wire p_free = x_use[s_p] == 2'd0;
  assign busy = s_st != S_IDLE;
  always_ff @(posedge clk) begin
    rd_go <= 1'b0;
    wr_init <= 1'b0;
    done <= 1'b0;
    if (!rst_n) begin
      s_st <= S_IDLE;
      tv <= '0;
      n_v <= 1'b0;
    end else begin
      if (x_take) n_v <= 1'b0;
      case (s_st)
        S_IDLE: if (start) begin                       // the writer starts with the first row
          s_st <= S_ROW;
          wr_init <= 1'b1;
          tv <= '0;
          s_y <= y0;
          s_sy <= sy0;
          s_ri <= src_row;
          s_ra <= src_addr;
        end
        S_ROW: begin
          s_placed <= s_y >= p_top && s_y < p_yhi;
          s_lastrow <= s_y + 13'd1 == p_yhi;             // (s_y == top + out_h - 1 mod 2^13: one carry chain)
          s_ylast <= s_y == p_ylast;
          s_iyr <= 13'(s_sy[31:20]);
          s_fyr <= s_sy[19:8];
          s_st <= S_ROW2;
        end
        S_ROW2: begin
          s_ge <= s_iyr >= p_fh1;
          s_st <= s_placed ? S_ROW3 : S_HAND;
        end
        S_ROW3: begin
          s_iy <= s_ge || s_lastrow ? p_fh1 : s_iyr;
          s_iy1 <= s_ge || s_lastrow ? p_fh1 : s_iyr + 13'd1;
          s_fy <= s_lastrow ? 12'd0 : s_fyr;
          s_st <= S_NEED;
        end
        S_NEED: begin                                  // (the row's pair)
          h_t0 <= s_p ? tv[2] && tag[2] == s_iy : tv[0] && tag[0] == s_iy;      // (constant indices)
          h_t1 <= s_p ? tv[3] && tag[3] == s_iy : tv[1] && tag[1] == s_iy;
          h_b0 <= s_p ? tv[2] && tag[2] == s_iy1 : tv[0] && tag[0] == s_iy1;
          h_b1 <= s_p ? tv[3] && tag[3] == s_iy1 : tv[1] && tag[1] == s_iy1;
          h_eq <= s_iy == s_iy1;
          s_st <= S_DEC;
        end
        S_DEC: begin                                   // accel_kernel_pre.h pre_fetch_rows: which rows, where
          logic na, nb, ja, jb;
          na = !(h_t0 || h_t1);                        // iy held by neither buffer: read
          nb = !(h_b0 || h_b1) && !h_eq;               // iy1 too (unless it is iy)
          ja = nb ? 1'b0 : h_b0;                       // iy into the buffer not holding iy1 (0 when both read)
          jb = na ? 1'b1 : h_t0;                       // iy1 into the other one
          s_selt <= !h_t0;                             // (both held: the line buffers of iy and iy1)
          s_selb <= !h_b0;
          s_fr <= na ? s_iy : s_iy1;
          s_fj <= na ? ja : jb;
          s_f2 <= na && nb;
          s_bk <= (na ? s_iy : s_iy1) < s_ri;          // (a pair may need the row before the walk's)
          for (int k = 0; k < 4; k++) begin            // the row's pair (constant indices)
            if (1'(k >> 1) == s_p && (k % 2 == 0 ? (na && !ja) || (nb && !jb) : (na && ja) || (nb && jb)))
              {tag[k], tv[k]} <= {(k % 2 == 0 ? na && !ja : na && ja) ? s_iy : s_iy1, 1'b1};
          end
          s_st <= na || nb ? S_HOLD : S_HAND;
        end
        S_HOLD: if (p_free) s_st <= S_SEEK;            // the pixel side has left the pair
        S_SEEK:                                        // the row address walks to the row (one row back at most)
          if (s_ri != s_fr) begin
            s_ri <= s_bk ? s_ri - 13'd1 : s_ri + 13'd1;
            s_ra <= addr_add(s_ra, s_bk ? p_npitch : AXI_AW'(p_pitch));
          end else if (rd_free && !rd_go) begin        // requested (the second once the first's bursts are out)
            rd_go <= 1'b1;
            rd_ra <= s_ra;
            rd_buf <= {s_p, s_fj};
            for (int k = 0; k < 4; k++) if (2'(k) == {s_p, s_fj}) off[k] <= s_ra[LB-1:0];
            s_fr <= s_iy1;
            s_fj <= 1'b1;                              // (the second row: iy1 into buffer 1)
            s_f2 <= 1'b0;
            s_bk <= 1'b0;                              // (iy1 > iy: forward)
            if (!s_f2) s_st <= S_FETCH;
          end
        S_FETCH: if (!rd_busy && !rd_go) s_st <= S_NEED;   // every beat written: the row decision again
        S_HAND: if (!n_v || x_take) begin              // to the pixel side; the next row
          {n_v, n_placed, n_selt, n_selb, n_fy, n_p} <= {1'b1, s_placed, s_selt, s_selb, s_fy, s_p};
          s_y <= s_y + 13'd1;
          if (s_placed) s_sy <= s_sy + p_sy;
          s_st <= s_ylast ? S_DRAIN : S_ROW;
        end
        S_DRAIN: if (wr_done && !wr_init) begin        // (the writer has every row's pixels)
          done <= 1'b1;
          s_st <= S_IDLE;
        end
        default: s_st <= S_IDLE;
      endcase
    end
  end
  // the pixel side: a row's net_w pixels, one per cycle while the writer's pixel FIFO has room; the next row taken
  // with the last pixel (no gap between rows)
  always_ff @(posedge clk) begin
    if (!rst_n || s_st == S_IDLE) begin
      x_st <= X_IDLE;
      x_use[0] <= '0;
      x_use[1] <= '0;
      x_rel[0] <= '0;
      x_rel[1] <= '0;
    end else begin
      for (int p = 0; p < 2; p++) begin
        x_rel[p] <= {x_rel[p][6:0], issue && x_xlast && x_p == 1'(p)};
        x_use[p] <= x_use[p] + 2'(x_take && n_p == 1'(p)) - 2'(x_rel[p][7]);
      end
      if (x_take) x_st <= X_PIX;
      else if (issue && x_xlast) x_st <= X_IDLE;
    end
    if (x_take) begin
      {x_placed, x_selt, x_selb, x_fy, x_p} <= {n_placed, n_selt, n_selb, n_fy, n_p};
      x_x <= '0;
    end else if (issue) x_x <= x_x + 13'd1;
  end
  assign x_xlast = x_x == p_nw1;
  assign issue = x_st == X_PIX && cred_ok;

  // ---- credits: pixels issued and not yet out of the writer's pixel FIFO (32 deep)
  logic [5:0] cred;
  logic px_pop;
  always_ff @(posedge clk) begin
    if (!rst_n || s_st == S_IDLE) begin
      cred <= '0;
      cred_ok <= 1'b0;
    end else begin
      // (the increment, the decrement and the compares side by side from the register, selected after them)
      cred <= issue && !px_pop ? cred + 6'd1 : px_pop && !issue ? cred - 6'd1 : cred;
      cred_ok <= issue ? cred < 6'(CRED - 1) : cred < 6'(CRED);
    end
  end

  // ---- pixel pipeline c1..c9
  logic [1:0] c1_selt, c1_selb, c2_selt, c2_selb, c3_selt, c3_selb, c4_selt, c4_selb, c5_selt, c5_selb;
  logic [1:0] c6_selt, c6_selb, c7_selt, c7_selb, c8_selt, c8_selb;        // line buffers {pair, buffer}
  logic c1_v, c1_last, c1_pad;
  logic [12:0] c1_x;
  logic [11:0] c1_fy;
  always_ff @(posedge clk) begin
    c1_v <= rst_n && issue;
    c1_x <= x_x;
    c1_last <= x_xlast;
    c1_pad <= !x_placed;
    {c1_selt, c1_selb, c1_fy} <= {{x_p, x_selt}, {x_p, x_selb}, x_fy};
  end
  logic c2_v, c2_last, c2_in, c2_clast, c3_v, c3_last, c3_in, c3_clast;
  logic [11:0] c2_fy, c3_fy;
  logic [31:0] acc, c3_s;
  always_ff @(posedge clk) begin
    c2_v <= rst_n && c1_v;
    c2_in <= !c1_pad && c1_x >= p_left && c1_x < p_xhi;
    c2_clast <= c1_x == p_xhi - 13'd1;
    {c2_last, c2_selt, c2_selb, c2_fy} <= {c1_last, c1_selt, c1_selb, c1_fy};
    c3_v <= rst_n && c2_v;
    c3_s <= acc;
    {c3_last, c3_in, c3_clast, c3_selt, c3_selb, c3_fy} <= {c2_last, c2_in, c2_clast, c2_selt, c2_selb, c2_fy};
    if (s_st == S_IDLE || (c2_v && c2_last)) acc <= '0;
    else if (c2_v && c2_in) acc <= acc + p_sx;
  end
  // c4: ix = sx >> 20 as its byte 3 ix in a row (ix + 2 ix), fx; c5: the clamp (the last column: ix = frame_w - 1,
  // fx = 0; ix1 = ix there), then per line buffer j the byte b = off_j + 3 ix of pixel ix from its beat 0 and the
  // beats k = b >> LB, k + 1 = (b + B) >> LB (accel_kernel_pre.h pre_line_px) as ports A / B's addresses
  logic c4_v, c4_last, c4_in, c4_clast, c4_ge;
  logic [13:0] c4_ix3;
  logic [11:0] c4_fxr, c4_fy;
  always_ff @(posedge clk) begin
    c4_v <= rst_n && c3_v;
    c4_ix3 <= 14'(c3_s[31:20]) + (14'(c3_s[31:20]) << 1);
    c4_fxr <= c3_s[19:8];
    c4_ge <= 13'(c3_s[31:20]) >= p_fw1;
    {c4_last, c4_in, c4_clast, c4_selt, c4_selb, c4_fy} <= {c3_last, c3_in, c3_clast, c3_selt, c3_selb, c3_fy};
  end
  logic c5_v, c5_last, c5_in, c5_nx;
  logic [11:0] c5_fx, c5_fy;
  logic [KW-1:0] c5_ka [4], c5_kb [4];
  logic [LB-1:0] c5_sh [4];
  always_ff @(posedge clk) begin
    logic [13:0] ix3;
    ix3 = c4_ge || c4_clast ? p_fw13 : c4_ix3;
    c5_v <= rst_n && c4_v;
    for (int j = 0; j < 4; j++) begin
      c5_ka[j] <= KW'((15'(off[j]) + 15'(ix3)) >> LB);
      c5_kb[j] <= KW'((15'({1'b1, off[j]}) + 15'(ix3)) >> LB);
      c5_sh[j] <= off[j] + ix3[LB-1:0];
    end
    c5_nx <= !(c4_ge || c4_clast);
    c5_fx <= c4_clast ? 12'd0 : c4_fxr;
    {c5_last, c5_in, c5_selt, c5_selb, c5_fy} <= {c4_last, c4_in, c4_selt, c4_selb, c4_fy};
  end
  // the line buffers (raw beats): ports A / B read beats k / k + 1, or port A takes the reader's beat
  logic rd_wen;
  logic [1:0] rd_wbuf;
  logic [KW-1:0] rd_waddr;
  logic [DW-1:0] rd_wdata;
  logic [DW-1:0] b_a [4], b_b [4];
  for (genvar k = 0; k < 4; k++) begin : g_buf
    // the planner's pair while it fetches (a row's beats may come while the next is asked; the pixel side is not in
    // that pair then), else the pixel side's reads
    wire wr = (s_st == S_SEEK || s_st == S_FETCH) && s_p == 1'(k >> 1);
    ram_tdp #(.W(DW), .D(LBEATS), .NB(1), .STYLE(PRE_LB_STYLE)) u_lb (
      .clk, .a_en(1'b1), .a_we(wr && rd_wen && rd_wbuf == 2'(k)), .a_addr(wr ? rd_waddr : c5_ka[k]),
      .a_wdata(rd_wdata), .a_rdata(b_a[k]), .b_en(1'b1), .b_we(1'b0), .b_addr(c5_kb[k]), .b_wdata(rd_wdata),
      .b_rdata(b_b[k]));
  end
  // bytes 4 g .. 4 g + 8 of a two-beat window {beat k + 1, beat k}
  function automatic logic [71:0] grp9(input logic [2*DW-1:0] w, input logic [LB-3:0] g);
    grp9 = w[32 * g +: 72];
  endfunction
  // c6: the beats; c7: per buffer the 9 bytes from the 4-byte group of byte sh (sh[LB-1:2], a B/4:1 select);
  // c8: the 6 bytes of pixels ix, ix + 1 from them (sh[1:0], 4:1); c9: the top / bottom row's pixels by the tags
  // (ix1 = ix at the clamp), the weights: into rtl/pre_chan.sv
  logic c6_v, c6_last, c6_in, c6_nx, c7_v, c7_last, c7_in, c7_nx;
  logic c8_v, c8_last, c8_in, c8_nx;
  logic [11:0] c6_fx, c6_fy, c7_fx, c7_fy, c8_fx, c8_fy;
  logic [LB-1:0] c6_sh [4];
  logic [1:0] c7_sl [4];
  logic [71:0] c7_g [4];
  logic [47:0] c8_p [4];
  always_ff @(posedge clk) begin
    c6_v <= rst_n && c5_v;
    {c6_last, c6_in, c6_selt, c6_selb, c6_nx, c6_fx, c6_fy} <= {c5_last, c5_in, c5_selt, c5_selb, c5_nx, c5_fx,
                                                                  c5_fy};
    c7_v <= rst_n && c6_v;
    {c7_last, c7_in, c7_selt, c7_selb, c7_nx, c7_fx, c7_fy} <= {c6_last, c6_in, c6_selt, c6_selb, c6_nx, c6_fx,
                                                                  c6_fy};
    c8_v <= rst_n && c7_v;
    {c8_last, c8_in, c8_selt, c8_selb, c8_nx, c8_fx, c8_fy} <= {c7_last, c7_in, c7_selt, c7_selb, c7_nx, c7_fx,
                                                                  c7_fy};
    for (int j = 0; j < 4; j++) begin             // (constant indices)
      c6_sh[j] <= c5_sh[j];
      c7_g[j] <= grp9({b_b[j], b_a[j]}, c6_sh[j][LB-1:2]);
      c7_sl[j] <= c6_sh[j][1:0];
      c8_p[j] <= c7_g[j][8 * c7_sl[j] +: 48];
    end
  end
  logic c9_v, c9_last, c9_pad;
  logic [23:0] c9_tl, c9_tr, c9_bl, c9_br;
  logic [12:0] c9_wx0, c9_wx1, c9_wy0, c9_wy1;
  always_ff @(posedge clk) begin
    c9_v <= rst_n && c8_v;
    c9_last <= c8_last;
    c9_pad <= !c8_in;
    c9_tl <= c8_p[c8_selt][23:0];
    c9_tr <= c8_nx ? c8_p[c8_selt][47:24] : c8_p[c8_selt][23:0];
    c9_bl <= c8_p[c8_selb][23:0];
    c9_br <= c8_nx ? c8_p[c8_selb][47:24] : c8_p[c8_selb][23:0];
    c9_wx0 <= 13'(1 << PRE_FRAC_BITS) - 13'(c8_fx);
    c9_wx1 <= 13'(c8_fx);
    c9_wy0 <= 13'(1 << PRE_FRAC_BITS) - 13'(c8_fy);
    c9_wy1 <= 13'(c8_fy);
  end
  logic signed [15:0] q [3];
  for (genvar c = 0; c < 3; c++) begin : g_ch
    pre_chan u_ch (
      .clk, .a_tl(c9_tl[8 * c +: 8]), .a_tr(c9_tr[8 * c +: 8]), .a_bl(c9_bl[8 * c +: 8]), .a_br(c9_br[8 * c +: 8]),
      .wx0(c9_wx0), .wx1(c9_wx1), .wy0(c9_wy0), .wy1(c9_wy1), .pad(c9_pad), .mult(p_mult), .s1(p_s1), .zp(p_zp),
      .p16(p_p16), .q(q[c]));
  end
  // the element order, int8 / int16 packing: into the writer one cycle after q
  logic [CH_LAT-1:0] d_v, d_last;
  logic o_v, o_last;
  logic [47:0] o_d;
  always_ff @(posedge clk) begin
    d_v <= {d_v[CH_LAT-2:0], rst_n && c9_v};
    d_last <= {d_last[CH_LAT-2:0], c9_last};
    o_v <= rst_n && d_v[CH_LAT-1];
    o_last <= d_last[CH_LAT-1];
    begin
      logic [15:0] e0, e1, e2;
      e0 = p_swap ? q[2] : q[0];
      e1 = q[1];
      e2 = p_swap ? q[0] : q[2];
      o_d <= p_p16 ? {e2, e1, e0} : {24'd0, e2[7:0], e1[7:0], e0[7:0]};
    end
  end

  pre_rd #(.DW(DW), .KW(KW)) u_rd (
    .clk, .rst_n, .go(rd_go), .ra(rd_ra), .lbuf(rd_buf), .npix(p_fw), .ar_free(rd_free), .busy(rd_busy),
    .w_en(rd_wen), .w_buf(rd_wbuf), .w_addr(rd_waddr), .w_data(rd_wdata), .m_axi_araddr, .m_axi_arlen,
    .m_axi_arvalid, .m_axi_arready, .m_axi_rdata, .m_axi_rlast, .m_axi_rvalid, .m_axi_rready);
  pre_wr #(.DW(DW)) u_wr (
    .clk, .rst_n, .init(wr_init), .dst_addr(p_dst), .dst_row(p_drow), .dst_pix(p_dpix), .p16(p_p16),
    .span_e(p_span), .net_h(p_nh), .px_v(o_v), .px_data(o_d), .px_last(o_last), .px_pop, .done(wr_done), .m_axi_awaddr,
    .m_axi_awlen, .m_axi_awvalid, .m_axi_awready, .m_axi_wdata, .m_axi_wstrb, .m_axi_wlast, .m_axi_wvalid,
    .m_axi_wready, .m_axi_bvalid);
  wire unused = &{1'b0, m_axi_rid, m_axi_rresp, m_axi_bid, m_axi_bresp, p_nw, c3_s[7:0], 1'b0};
endmodule
`default_nettype wire
