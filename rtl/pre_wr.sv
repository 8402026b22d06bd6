// PRE's output writer (rtl/pre.sv): the quantized pixels (3 elements of 1 or 2 bytes, E = 3 or 6 bytes, in output
// order, one row after the other) to DDR at dst_addr + y dst_row + x dst_pix, written with strobes, nothing else.
// Address side: each output row is one span [row address, + span_e) with span_e = (net_w - 1) dst_pix + E, cut into
// INCR bursts by rtl/pre_burst.sv (within WB-beat blocks); a burst's address goes out only once all its beats are in
// the W FIFO (avail: beats pushed and not yet under an address), so its beats follow back to back and the write
// channel it shares with STORE (rtl/axi_wr_arb.sv) is never held while pixels are still being computed (the HLS
// kernel's m_axi does the same: run_hls.tcl's -m_axi_conservative_mode); each burst's beats into a length FIFO.
// Data side: (1) each pixel's offset o in its row from the row address's beat-aligned base (o = lane0 + x dst_pix,
// by additions), its beat bi = o / B and byte lane = o mod B; into the pixel FIFO (its pops are the credits of
// rtl/pre.sv's issue); (2) the head pixel placed in a two-beat vector at its lane (bytes and strobes); (3) the beat
// walker holds the beat k being filled: a pixel of beat k is merged (and the beat pushed when the pixel reaches its
// end, its bytes past the end starting beat k + 1); a pixel of a later beat pushes beat k first (beats without a
// pixel byte go out with no strobe); after a row's last pixel the beat in hand is pushed. One pixel per cycle when
// dst_pix <= B (a beat pushed with the pixel that fills it); the W FIFO's beats go out with wlast by the lengths.
// Legend: z_ the positioning stage, h_ the placed head pixel, k / k1 the walker's beat and beat + 1, c_ the beat in
// hand (bytes, strobes).
`default_nettype none
module pre_wr
  import accel_pkg::*;
#(
  parameter int DW = AXI_DW,
  parameter int WB = PRE_WBURST             // beats of a write burst at most (a power of two; the W FIFO holds 2 WB)
) (
  input  wire               clk,
  input  wire               rst_n,
  input  wire               init,           // the run's start (constants valid): rows from 0
  input  wire [AXI_AW-1:0]  dst_addr,
  input  wire [31:0]        dst_row,
  input  wire [7:0]         dst_pix,
  input  wire               p16,
  input  wire [20:0]        span_e,         // (net_w - 1) dst_pix + E
  input  wire [12:0]        net_h,
  input  wire               px_v,           // a pixel (E bytes of px_data), px_last: its row's last
  input  wire [47:0]        px_data,
  input  wire               px_last,
  output logic              px_pop,         // a pixel left the pixel FIFO
  output logic              done,           // every row written and acknowledged (level until init)
  output logic [AXI_AW-1:0] m_axi_awaddr,
  output logic [7:0]        m_axi_awlen,
  output logic              m_axi_awvalid,
  input  wire               m_axi_awready,
  output logic [DW-1:0]     m_axi_wdata,
  output logic [DW/8-1:0]   m_axi_wstrb,
  output logic              m_axi_wlast,
  output logic              m_axi_wvalid,
  input  wire               m_axi_wready,
  input  wire               m_axi_bvalid
);
  localparam int B = DW / 8, LB = $clog2(B), OW = 21, BI = OW - LB, WQ = 2 * WB, CW = $clog2(WQ) + 1;
  // ---- address side
  typedef enum logic [1:0] {A_IDLE, A_S1, A_S2, A_RUN} a_state_t;
  (* fsm_encoding = "none" *) a_state_t a_st;
  logic [AXI_AW-1:0] wa;                                              // the row's address
  logic [12:0] arow;                                                  // rows left after this one
  logic [15:0] abeats;
  logic bg_v, bg_last, lq_full, lq_empty, lq_pop, aw_all;
  logic [8:0] bg_len, lq_head;
  wire aw_fire = m_axi_awvalid && m_axi_awready;
  pre_burst #(.DW(DW), .MAX_BEATS(WB)) u_aw (
    .clk, .rst_n, .init(a_st == A_S2), .addr(wa & ~AXI_AW'(B - 1)), .beats(abeats), .fire(aw_fire), .valid(bg_v),
    .cur(m_axi_awaddr), .blen(bg_len), .blast(bg_last));
  logic aw_ok;                                                        // avail >= the offered burst's beats
  assign m_axi_awvalid = bg_v && !lq_full && aw_ok;
  assign m_axi_awlen = 8'(bg_len - 9'd1);
  /* verilator lint_off PINCONNECTEMPTY */
  sync_fifo #(.W(9), .DEPTH(16)) u_lq (
    .clk, .rst_n, .clr(1'b0), .wr(aw_fire), .wdata(bg_len), .rd(lq_pop), .rdata(lq_head), .empty(lq_empty),
    .full(lq_full), .count());
  /* verilator lint_on PINCONNECTEMPTY */
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      a_st <= A_IDLE;
      aw_all <= 1'b0;
    end else begin
      case (a_st)
        A_IDLE: if (init) begin
          a_st <= A_S1;
          aw_all <= 1'b0;
          wa <= dst_addr;
          arow <= net_h - 13'd1;
        end
        A_S1: a_st <= A_S2;
        A_S2: a_st <= A_RUN;
        A_RUN: if (aw_fire && bg_last) begin
          wa <= addr_add(wa, AXI_AW'(dst_row));
          arow <= arow - 13'd1;
          a_st <= arow == 0 ? A_IDLE : A_S1;
          aw_all <= arow == 0;
        end
        default: a_st <= A_IDLE;
      endcase
    end
    if (a_st == A_S1) abeats <= 16'((22'(wa[LB-1:0]) + 22'(span_e) + 22'(B - 1)) >> LB);
  end
  // ---- data side (1): positions
  logic [LB-1:0] z_lane0;                                            // the current row's lane0
  logic [OW-1:0] z_onx;                                              // offset of the next pixel
  logic z_v, z_last;
  logic [OW-1:0] z_o;
  logic [47:0] z_d;
  wire [LB-1:0] lane0_n = z_lane0 + dst_row[LB-1:0];
  always_ff @(posedge clk) begin
    if (init) begin
      z_lane0 <= dst_addr[LB-1:0];
      z_onx <= OW'(dst_addr[LB-1:0]);
    end else if (px_v) begin
      z_lane0 <= px_last ? lane0_n : z_lane0;
      z_onx <= px_last ? OW'(lane0_n) : z_onx + OW'(dst_pix);
    end
    z_v <= rst_n && px_v;
    z_o <= z_onx;
    z_d <= px_data;
    z_last <= px_last;
  end
  wire [LB:0] z_end = (LB + 1)'(z_o[LB-1:0]) + (p16 ? (LB + 1)'(6) : (LB + 1)'(3));
  localparam int PQ_W = 48 + LB + BI + 3;
  logic [PQ_W-1:0] pq_head;
  logic pq_empty, h_take;
  /* verilator lint_off PINCONNECTEMPTY */
  sync_fifo #(.W(PQ_W), .DEPTH(32)) u_pq (
    .clk, .rst_n, .clr(1'b0), .wr(z_v),
    .wdata({z_d, z_o[LB-1:0], z_o[OW-1:LB], z_end > (LB + 1)'(B), z_end >= (LB + 1)'(B), z_last}),
    .rd(h_take), .rdata(pq_head), .empty(pq_empty), .full(), .count());
  /* verilator lint_on PINCONNECTEMPTY */
  assign px_pop = h_take && !pq_empty;
  // (2) the head pixel placed at its lane
  logic h_v, h_str, h_fill, h_last;
  logic [BI-1:0] h_bi;
  logic [2*DW-1:0] h_d;
  logic [2*B-1:0] h_s;
  logic consume;
  assign h_take = !h_v || consume;
  wire [47:0] q_d = pq_head[PQ_W-1 -: 48];
  wire [LB-1:0] q_lane = pq_head[PQ_W-49 -: LB];
  wire [47:0] q_dm = q_d & (p16 ? 48'hffff_ffff_ffff : 48'h0000_00ff_ffff);
  always_ff @(posedge clk) begin
    if (!rst_n) h_v <= 1'b0;
    else if (h_take) h_v <= !pq_empty;
    if (h_take) begin
      h_d <= (2 * DW)'(q_dm) << {q_lane, 3'b000};
      h_s <= (2 * B)'(p16 ? 6'h3f : 6'h07) << q_lane;
      {h_bi, h_str, h_fill, h_last} <= pq_head[BI+2:0];
    end
  end
  // (3) the beat walker
  logic [BI-1:0] k, k1;
  logic [DW-1:0] c_d;
  logic [B-1:0] c_s;
  logic fl;                                                           // push the beat in hand (a row's end)
  logic wq_room, wq_empty, push;
  logic [DW-1:0] push_d;
  logic [B-1:0] push_s;
  logic [CW-1:0] wq_count;
  wire eq0 = h_bi == k, eq1 = h_bi == k1;
  wire run = wq_room && !fl && h_v;
  assign consume = run && (eq0 || (eq1 && !h_str));
  wire [DW-1:0] m_d = c_d | h_d[DW-1:0];
  wire [B-1:0] m_s = c_s | h_s[B-1:0];
  always_comb begin
    push = 1'b0;
    push_d = c_d;
    push_s = c_s;
    if (wq_room && fl) begin
      push = |c_s;
    end else if (run) begin
      push = !eq0 || h_fill;
      if (eq0) begin
        push_d = m_d;
        push_s = m_s;
      end
    end
  end
  wire adv = (wq_room && fl) || (run && (!eq0 || h_fill));            // the walker moves to the next beat
  always_ff @(posedge clk) begin
    if (!rst_n || init) begin
      k <= '0;
      k1 <= BI'(1);
      c_d <= '0;
      c_s <= '0;
      fl <= 1'b0;
    end else begin
      if (wq_room && fl) begin
        k <= '0;
        k1 <= BI'(1);
        c_d <= '0;
        c_s <= '0;
        fl <= 1'b0;
      end else if (run) begin
        if (adv) begin
          k <= k1;
          k1 <= k1 + 1'b1;
        end
        if (eq0 && !h_fill) begin
          c_d <= m_d;
          c_s <= m_s;
        end else if (eq0) begin
          c_d <= h_d[2*DW-1:DW];
          c_s <= h_s[2*B-1:B];
        end else if (eq1 && !h_str) begin
          c_d <= h_d[DW-1:0];
          c_s <= h_s[B-1:0];
        end else begin
          c_d <= '0;
          c_s <= '0;
        end
        if (consume) fl <= h_last;
      end
    end
  end
  // ---- W FIFO and the W channel
  function automatic logic [DW-1:0] smask(input logic [B-1:0] st);
    for (int j = 0; j < B; j++) smask[8 * j +: 8] = {8{st[j]}};
  endfunction
  logic [DW+B-1:0] wq_head;
  /* verilator lint_off PINCONNECTEMPTY */
  sync_fifo #(.W(DW + B), .DEPTH(WQ), .DISTRIBUTED(1'b1)) u_wq (
    .clk, .rst_n, .clr(1'b0), .wr(push), .wdata({push_s, push_d & smask(push_s)}), .rd(m_axi_wvalid && m_axi_wready),
    .rdata(wq_head), .empty(wq_empty), .full(), .count(wq_count));
  /* verilator lint_on PINCONNECTEMPTY */
  always_ff @(posedge clk) wq_room <= rst_n && wq_count <= CW'(WQ - 4);   // (one push may be under way)
  // beats in the W FIFO not yet under an accepted address; the next address waits for its burst's beats: aw_ok from
  // the registered count and length (a beat pushed this cycle counts a cycle later; none after an address, whose
  // beats leave the count as it is accepted, so a length that changes with it is never compared stale)
  logic [CW-1:0] avail;
  always_ff @(posedge clk) begin
    if (!rst_n || init) begin
      avail <= '0;
      aw_ok <= 1'b0;
    end else begin
      avail <= avail + CW'(push) - (aw_fire ? CW'(bg_len) : '0);
      aw_ok <= !aw_fire && bg_v && 10'(avail) >= 10'(bg_len);
    end
  end
  logic wl_v, wl_one;
  logic [8:0] wl_left;
  assign m_axi_wvalid = wl_v && !wq_empty;
  assign m_axi_wlast = wl_one;
  assign {m_axi_wstrb, m_axi_wdata} = wq_head;
  wire wfire = m_axi_wvalid && m_axi_wready;
  assign lq_pop = (!wl_v || (wfire && wl_one)) && !lq_empty;
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      wl_v <= 1'b0;
    end else if (lq_pop) begin
      wl_v <= 1'b1;
      wl_left <= lq_head;
      wl_one <= lq_head == 9'd1;
    end else if (wfire && wl_one) begin
      wl_v <= 1'b0;
    end else if (wfire) begin
      wl_left <= wl_left - 9'd1;
      wl_one <= wl_left == 9'd2;
    end
  end
  // ---- write responses
  logic [15:0] outst;
  always_ff @(posedge clk) begin
    if (!rst_n || init) begin
      outst <= '0;
      done <= 1'b0;
    end else begin
      outst <= outst + 16'(aw_fire) - 16'(m_axi_bvalid);
      done <= aw_all && a_st == A_IDLE && outst == 0 && lq_empty && !wl_v && wq_empty && !aw_fire;
    end
  end
endmodule
`default_nettype wire
