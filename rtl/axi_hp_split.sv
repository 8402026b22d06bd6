// AXI4 burst splitter: the core's m_axi of DW bits onto two HP ports of DW / 2 bits each (Zynq UltraScale+
// S_AXI_HPn_FPD are at most 128 bits, UG1085 ch. 35), so the accelerator moves DW / 8 bytes per cycle in each
// direction. Every burst of N beats (DW-bit, beat-aligned, within one 4 KB page, as the core issues them) is cut
// in two: port 0 takes its first h0 beats, port 1 the other N - h0, each as an INCR burst of 2 x h beats of
// DW / 2 bits (size log2(DW / 16)); h0 = ceil(N / 2) or floor(N / 2), the odd beat going to each port in turn
// (RTOG / WTOG), so both ports carry the same bytes within one beat over any sequence of bursts. A part of zero
// beats issues no burst. Port 1's address adds h0 beats to the low 12 address bits only (the burst stays in its
// 4 KB page: no carry above bit 11).
// * Read: each port's beats are paired into DW-bit words in its data FIFO (a port's part always holds whole
//   DW-bit beats); the R output takes the head burst's port-0 words, then its port-1 words, from an order FIFO of
//   (h0, h1) per burst, through a registered output slice with a skid register (full throughput, registered
//   ready towards the FIFOs). Throughput: both ports stream at once, so N beats take about N cycles of DW bits
//   after the first part's latency, plus h1 / 2 for the last burst's second part (it arrives while port 0's part
//   is drained at half rate); the latency model (generator/spec/timing.py, ``hp_ports``) counts this.
// * Write: the core's W beats of a burst go to port 0's W FIFO (its first h0), then port 1's; each port sends a
//   FIFO word as two beats (low half first), with WLAST on the part's last. The core's write response is given
//   when both parts' responses are in (per-port counters, in order).
// One AXI ID (0): data and responses return in order on each port.
`default_nettype none
module axi_hp_split #(
  parameter int DW = 256,               // the core's beat (bits)
  parameter int AW = 49,                // address bits
  parameter int OUTST = 32,             // bursts in flight per direction (order FIFO entries, a power of two)
  parameter int FDEPTH = 64             // data FIFO words (DW bits) per port and direction (a power of two)
) (
  input  wire                 clk,
  input  wire                 rst_n,
  // ---- the core's master (slave side here)
  input  wire [AW-1:0]        s_araddr,
  input  wire [7:0]           s_arlen,
  input  wire                 s_arvalid,
  output logic                s_arready,
  output logic [DW-1:0]       s_rdata,
  output logic                s_rlast,
  output logic                s_rvalid,
  input  wire                 s_rready,
  input  wire [AW-1:0]        s_awaddr,
  input  wire [7:0]           s_awlen,
  input  wire                 s_awvalid,
  output logic                s_awready,
  input  wire [DW-1:0]        s_wdata,
  input  wire [DW/8-1:0]      s_wstrb,
  input  wire                 s_wvalid,
  output logic                s_wready,
  output logic                s_bvalid,
  input  wire                 s_bready,
  // ---- the two HP ports (index p: port p), DW / 2 bits each
  output logic [2*AW-1:0]     m_araddr,
  output logic [15:0]         m_arlen,
  output logic [1:0]          m_arvalid,
  input  wire  [1:0]          m_arready,
  input  wire  [DW-1:0]       m_rdata,
  input  wire  [1:0]          m_rlast,
  input  wire  [1:0]          m_rvalid,
  output logic [1:0]          m_rready,
  output logic [2*AW-1:0]     m_awaddr,
  output logic [15:0]         m_awlen,
  output logic [1:0]          m_awvalid,
  input  wire  [1:0]          m_awready,
  output logic [DW-1:0]       m_wdata,
  output logic [DW/8-1:0]     m_wstrb,
  output logic [1:0]          m_wlast,
  output logic [1:0]          m_wvalid,
  input  wire  [1:0]          m_wready,
  input  wire  [1:0]          m_bvalid,
  output logic [1:0]          m_bready
);
  localparam int PW = DW / 2;           // port beat (bits)
  localparam int LB = $clog2(DW / 8);   // log2 of the core's beat bytes
  localparam int OW = $clog2(OUTST);

  // ======================= address split (one function for AR and AW)
  // h0: beats of port 0 (the odd one when tog is 0); h0 and N - h0 as "minus one" plus a zero flag
  function automatic logic [17:0] split(input logic [7:0] len, input logic tog);
    logic [8:0] n, h0, h1;
    n = {1'b0, len} + 9'd1;
    h0 = (n + {8'd0, !tog}) >> 1;
    h1 = n - h0;
    return {h0 == 9'd0, h1 == 9'd0, 8'(h0 - 9'd1), 8'(h1 - 9'd1)};
  endfunction
  // a part of h beats (hm1 = h - 1) as a port burst: 2h port beats
  function automatic logic [7:0] plen(input logic [6:0] hm1);   // a part has at most 128 beats
    return {hm1, 1'b1};
  endfunction
  function automatic logic [AW-1:0] addr1(input logic [AW-1:0] a, input logic [7:0] h0m1, input logic z0);
    logic [11:0] off;
    off = z0 ? 12'd0 : 12'((({4'd0, h0m1} + 12'd1) << LB));
    return {a[AW-1:12], a[11:0] + off};
  endfunction

  // ======================= read
  logic rtog;
  wire [17:0] rs = split(s_arlen, rtog);
  logic ro_full, ro_empty;
  logic [17:0] ro_head;
  logic [OW:0] ro_count;
  wire ar_free0 = !m_arvalid[0] || m_arready[0], ar_free1 = !m_arvalid[1] || m_arready[1];
  assign s_arready = ar_free0 && ar_free1 && !ro_full;
  wire ar_fire = s_arvalid && s_arready;
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      m_arvalid <= 2'b00;
      rtog <= 1'b0;
    end else begin
      if (m_arready[0]) m_arvalid[0] <= 1'b0;
      if (m_arready[1]) m_arvalid[1] <= 1'b0;
      if (ar_fire) begin
        m_arvalid <= {!rs[16], !rs[17]};
        if (!s_arlen[0]) rtog <= !rtog;            // N odd: the other port takes the next odd beat
      end
    end
  end
  always_ff @(posedge clk) begin
    if (ar_fire) begin
      m_araddr <= {addr1(s_araddr, rs[15:8], rs[17]), s_araddr};
      m_arlen <= {plen(rs[6:0]), plen(rs[14:8])};
    end
  end
  logic rd_pop;
  sync_fifo #(.W(18), .DEPTH(OUTST)) u_ro (
    .clk, .rst_n, .clr(1'b0), .wr(ar_fire), .wdata(rs), .rd(rd_pop), .rdata(ro_head), .empty(ro_empty),
    .full(ro_full), .count(ro_count));

  // per port: pair the port beats into DW-bit words
  logic [1:0] rhalf, rf_full, rf_empty, rf_rd;
  logic [PW-1:0] rlo [2];
  logic [DW-1:0] rf_data [2];
  for (genvar p = 0; p < 2; p++) begin : g_rport
    logic [$clog2(FDEPTH):0] cnt;
    assign m_rready[p] = !rf_full[p];
    wire fire = m_rvalid[p] && m_rready[p];
    always_ff @(posedge clk) begin
      if (!rst_n) rhalf[p] <= 1'b0;
      else if (fire) rhalf[p] <= !rhalf[p];
    end
    always_ff @(posedge clk) begin
      if (fire && !rhalf[p]) rlo[p] <= m_rdata[p*PW +: PW];
    end
    sync_fifo #(.W(DW), .DEPTH(FDEPTH)) u_rf (
      .clk, .rst_n, .clr(1'b0), .wr(fire && rhalf[p]), .wdata({m_rdata[p*PW +: PW], rlo[p]}), .rd(rf_rd[p]),
      .rdata(rf_data[p]), .empty(rf_empty[p]), .full(rf_full[p]), .count(cnt));
    wire unused = &{1'b0, cnt, m_rlast[p], 1'b0};
  end

  // in order: the head burst's port-0 words, then its port-1 words, into the output slice
  logic rph;                                       // reading the head burst's port-1 part
  logic [7:0] rcnt;
  wire r_p1 = rph || ro_head[17];                  // port 1's part (port 0's is empty)
  wire r_last_part = rcnt == (r_p1 ? ro_head[7:0] : ro_head[15:8]);
  wire r_end = r_last_part && (r_p1 || ro_head[16]);
  wire r_avail = !ro_empty && !(r_p1 ? rf_empty[1] : rf_empty[0]);
  logic o_v, k_v, o_last, k_last;                  // output slice and its skid register
  logic [DW-1:0] o_data, k_data;
  wire r_take = r_avail && !k_v;
  assign rf_rd = {r_take && r_p1, r_take && !r_p1};
  assign rd_pop = r_take && r_end;
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      rph <= 1'b0;
      rcnt <= 8'd0;
    end else if (r_take) begin
      rcnt <= r_last_part ? 8'd0 : rcnt + 8'd1;
      if (r_last_part) rph <= !r_end;
    end
  end
  wire o_fire = o_v && s_rready;
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      o_v <= 1'b0;
      k_v <= 1'b0;
    end else begin
      if (!o_v || o_fire) o_v <= k_v || r_take;
      if (k_v) begin
        if (!o_v || o_fire) k_v <= 1'b0;
      end else if (r_take && o_v && !o_fire) k_v <= 1'b1;
    end
  end
  wire [DW-1:0] r_word = r_p1 ? rf_data[1] : rf_data[0];
  always_ff @(posedge clk) begin
    if (!o_v || o_fire) begin
      o_data <= k_v ? k_data : r_word;
      o_last <= k_v ? k_last : r_end;
    end
    if (!k_v && r_take && o_v && !o_fire) begin
      k_data <= r_word;
      k_last <= r_end;
    end
  end
  assign s_rvalid = o_v;
  assign s_rdata = o_data;
  assign s_rlast = o_last;

  // ======================= write
  logic wtog;
  wire [17:0] ws = split(s_awlen, wtog);
  logic wo_full, wo_empty, bo_full, bo_empty;
  logic [17:0] wo_head;
  logic [1:0] bo_head;
  logic [OW:0] wo_count, bo_count;
  wire aw_free0 = !m_awvalid[0] || m_awready[0], aw_free1 = !m_awvalid[1] || m_awready[1];
  assign s_awready = aw_free0 && aw_free1 && !wo_full && !bo_full;
  wire aw_fire = s_awvalid && s_awready;
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      m_awvalid <= 2'b00;
      wtog <= 1'b0;
    end else begin
      if (m_awready[0]) m_awvalid[0] <= 1'b0;
      if (m_awready[1]) m_awvalid[1] <= 1'b0;
      if (aw_fire) begin
        m_awvalid <= {!ws[16], !ws[17]};
        if (!s_awlen[0]) wtog <= !wtog;
      end
    end
  end
  always_ff @(posedge clk) begin
    if (aw_fire) begin
      m_awaddr <= {addr1(s_awaddr, ws[15:8], ws[17]), s_awaddr};
      m_awlen <= {plen(ws[6:0]), plen(ws[14:8])};
    end
  end
  logic w_pop, b_pop;
  sync_fifo #(.W(18), .DEPTH(OUTST)) u_wo (
    .clk, .rst_n, .clr(1'b0), .wr(aw_fire), .wdata(ws), .rd(w_pop), .rdata(wo_head), .empty(wo_empty),
    .full(wo_full), .count(wo_count));
  sync_fifo #(.W(2), .DEPTH(OUTST)) u_bo (          // which ports answer for each burst
    .clk, .rst_n, .clr(1'b0), .wr(aw_fire), .wdata({!ws[16], !ws[17]}), .rd(b_pop), .rdata(bo_head),
    .empty(bo_empty), .full(bo_full), .count(bo_count));

  // the core's W beats of the head burst: port 0's part, then port 1's
  logic wph;
  logic [7:0] wcnt;
  logic [1:0] wf_full, wf_wr;
  wire w_p1 = wph || wo_head[17];
  wire w_last_part = wcnt == (w_p1 ? wo_head[7:0] : wo_head[15:8]);
  wire w_end = w_last_part && (w_p1 || wo_head[16]);
  assign s_wready = !wo_empty && !(w_p1 ? wf_full[1] : wf_full[0]);
  wire w_fire = s_wvalid && s_wready;
  assign wf_wr = {w_fire && w_p1, w_fire && !w_p1};
  assign w_pop = w_fire && w_end;
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      wph <= 1'b0;
      wcnt <= 8'd0;
    end else if (w_fire) begin
      wcnt <= w_last_part ? 8'd0 : wcnt + 8'd1;
      if (w_last_part) wph <= !w_end;
    end
  end
  // per port: a FIFO word as two beats, WLAST on the second half of the part's last word; write responses counted
  logic [5:0] bcnt [2];
  logic [1:0] b_need;
  for (genvar p = 0; p < 2; p++) begin : g_wport
    logic [DW+DW/8:0] q;
    logic half, empty;
    logic [$clog2(FDEPTH):0] cnt;
    wire fire = m_wvalid[p] && m_wready[p];
    sync_fifo #(.W(DW + DW/8 + 1), .DEPTH(FDEPTH)) u_wf (
      .clk, .rst_n, .clr(1'b0), .wr(wf_wr[p]), .wdata({w_last_part, s_wstrb, s_wdata}), .rd(fire && half),
      .rdata(q), .empty(empty), .full(wf_full[p]), .count(cnt));
    assign m_wvalid[p] = !empty;
    assign m_wdata[p*PW +: PW] = half ? q[PW +: PW] : q[0 +: PW];
    assign m_wstrb[p*PW/8 +: PW/8] = half ? q[DW + PW/8 +: PW/8] : q[DW +: PW/8];
    assign m_wlast[p] = half && q[DW + DW/8];
    always_ff @(posedge clk) begin
      if (!rst_n) half <= 1'b0;
      else if (fire) half <= !half;
    end
    assign m_bready[p] = bcnt[p] != 6'h3f;
    wire inc = m_bvalid[p] && m_bready[p], dec = b_pop && b_need[p];
    always_ff @(posedge clk) begin
      if (!rst_n) bcnt[p] <= 6'd0;
      else if (inc && !dec) bcnt[p] <= bcnt[p] + 6'd1;
      else if (dec && !inc) bcnt[p] <= bcnt[p] - 6'd1;
    end
    wire unused = &{1'b0, cnt, 1'b0};
  end
  assign b_need = bo_head;
  assign s_bvalid = !bo_empty && (!b_need[0] || bcnt[0] != 6'd0) && (!b_need[1] || bcnt[1] != 6'd0);
  assign b_pop = s_bvalid && s_bready;
  wire unused = &{1'b0, ro_count, wo_count, bo_count, 1'b0};
endmodule
`default_nettype wire
