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

  // ======================= address split (AR and AW alike)
  // A burst of N = len + 1 beats, hm = len >> 1: N even gives both ports N / 2 = hm + 1 beats; N odd gives the
  // odd beat to port 0 when tog is 0, else to port 1. Returns {z0, z1, h0 - 1, h1 - 1} (z: a part of no beats).
  function automatic logic [17:0] split(input logic [7:0] len, input logic tog);
    logic [6:0] hm, hd;
    logic more0, more1;
    hm = len[7:1];
    hd = hm - 7'd1;
    more0 = len[0] || !tog;                       // port 0 has hm + 1 beats
    more1 = len[0] || tog;
    split = {len == 8'd0 && tog, len == 8'd0 && !tog, 1'b0, more0 ? hm : hd, 1'b0, more1 ? hm : hd};
  endfunction
  // a part of h beats (hm1 = h - 1, at most 128 beats) as a port burst: 2h port beats
  function automatic logic [7:0] plen(input logic [6:0] hm1);
    plen = {hm1, 1'b1};
  endfunction
  // port 1's address: h0 core beats on, within the page (a beat-aligned core address: bits below LB are zero)
  function automatic logic [AW-LB-1:0] addr1(input logic [AW-LB-1:0] a, input logic [7:0] len, input logic tog);
    logic [11-LB:0] beat;                          // (in core beats: a is the address without its LB zero bits)
    beat = a[11-LB:0] + (11-LB+1)'(len[7:1]) + (11-LB+1)'(len[0] || !tog);
    addr1 = {a[AW-LB-1:12-LB], beat};
  endfunction

  // the core's bursts enter through a two-entry FIFO (registered ready towards the core)
  logic ai_full, ai_empty, wi_full, wi_empty;
  logic [AW+7:0] ai_head, wi_head;
  logic [1:0] ai_count, wi_count;
  logic ar_take, aw_take;
  sync_fifo #(.W(AW + 8), .DEPTH(2)) u_ai (
    .clk, .rst_n, .clr(1'b0), .wr(s_arvalid && !ai_full), .wdata({s_arlen, s_araddr}), .rd(ar_take),
    .rdata(ai_head), .empty(ai_empty), .full(ai_full), .count(ai_count));
  sync_fifo #(.W(AW + 8), .DEPTH(2)) u_wi (
    .clk, .rst_n, .clr(1'b0), .wr(s_awvalid && !wi_full), .wdata({s_awlen, s_awaddr}), .rd(aw_take),
    .rdata(wi_head), .empty(wi_empty), .full(wi_full), .count(wi_count));
  assign s_arready = !ai_full;
  assign s_awready = !wi_full;

  // ======================= read
  logic rtog;
  wire [7:0] a_len = ai_head[AW +: 8];
  wire [AW-1:0] a_addr = ai_head[AW-1:0];
  wire [17:0] rs = split(a_len, rtog);
  logic ro_full;
  wire ar_free0 = !m_arvalid[0] || m_arready[0], ar_free1 = !m_arvalid[1] || m_arready[1];
  assign ar_take = !ai_empty && ar_free0 && ar_free1 && !ro_full;
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      m_arvalid <= 2'b00;
      rtog <= 1'b0;
    end else begin
      if (m_arready[0]) m_arvalid[0] <= 1'b0;
      if (m_arready[1]) m_arvalid[1] <= 1'b0;
      if (ar_take) begin
        m_arvalid <= {!rs[16], !rs[17]};
        if (!a_len[0]) rtog <= !rtog;             // N odd: the other port takes the next odd beat
      end
    end
  end
  always_ff @(posedge clk) begin
    if (ar_take) begin
      m_araddr <= {addr1(a_addr[AW-1:LB], a_len, rtog), LB'(0), a_addr};
      m_arlen <= {plen(rs[6:0]), plen(rs[14:8])};
    end
  end
  // the order of the parts: which port's words the core gets next (registered flags, hp_seq)
  logic r_ok, r_ph, r_plast, r_end, r_take;
  hp_seq #(.OUTST(OUTST)) u_rseq (
    .clk, .rst_n, .wr(ar_take), .wdata(rs), .full(ro_full), .take(r_take), .valid(r_ok), .ph(r_ph),
    .part_last(r_plast), .burst_last(r_end));

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
    sync_fifo #(.W(DW), .DEPTH(FDEPTH), .DISTRIBUTED(1'b1)) u_rf (
      .clk, .rst_n, .clr(1'b0), .wr(fire && rhalf[p]), .wdata({m_rdata[p*PW +: PW], rlo[p]}), .rd(rf_rd[p]),
      .rdata(rf_data[p]), .empty(rf_empty[p]), .full(rf_full[p]), .count(cnt));
    wire unused = &{1'b0, cnt, m_rlast[p], 1'b0};
  end

  // in order: the head burst's port-0 words, then its port-1 words, into the output slice
  logic o_v, k_v, o_last, k_last;                  // output slice and its skid register
  logic [DW-1:0] o_data, k_data;
  assign r_take = r_ok && !(r_ph ? rf_empty[1] : rf_empty[0]) && !k_v;
  assign rf_rd = {r_take && r_ph, r_take && !r_ph};
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
  wire [DW-1:0] r_word = r_ph ? rf_data[1] : rf_data[0];
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
  wire [7:0] w_len = wi_head[AW +: 8];
  wire [AW-1:0] w_addr = wi_head[AW-1:0];
  wire [17:0] ws = split(w_len, wtog);
  logic wo_full, bo_full;
  wire aw_free0 = !m_awvalid[0] || m_awready[0], aw_free1 = !m_awvalid[1] || m_awready[1];
  assign aw_take = !wi_empty && aw_free0 && aw_free1 && !wo_full && !bo_full;
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      m_awvalid <= 2'b00;
      wtog <= 1'b0;
    end else begin
      if (m_awready[0]) m_awvalid[0] <= 1'b0;
      if (m_awready[1]) m_awvalid[1] <= 1'b0;
      if (aw_take) begin
        m_awvalid <= {!ws[16], !ws[17]};
        if (!w_len[0]) wtog <= !wtog;
      end
    end
  end
  always_ff @(posedge clk) begin
    if (aw_take) begin
      m_awaddr <= {addr1(w_addr[AW-1:LB], w_len, wtog), LB'(0), w_addr};
      m_awlen <= {plen(ws[6:0]), plen(ws[14:8])};
    end
  end
  // the core's W beats of the head burst: port 0's part, then port 1's
  logic w_ok, w_ph, w_plast, w_end, w_take;
  logic [1:0] wf_full, wf_wr;
  hp_seq #(.OUTST(OUTST)) u_wseq (
    .clk, .rst_n, .wr(aw_take), .wdata(ws), .full(wo_full), .take(w_take), .valid(w_ok), .ph(w_ph),
    .part_last(w_plast), .burst_last(w_end));
  assign s_wready = w_ok && !(w_ph ? wf_full[1] : wf_full[0]);
  assign w_take = s_wvalid && s_wready;
  assign wf_wr = {w_take && w_ph, w_take && !w_ph};
  // per port: a FIFO word as two beats, WLAST on the second half of the part's last word; responses counted
  logic [1:0] bnz, b_dec;
  for (genvar p = 0; p < 2; p++) begin : g_wport
    logic [DW+DW/8:0] q;
    logic half, empty;
    logic [5:0] bcnt;
    logic [$clog2(FDEPTH):0] cnt;
    wire fire = m_wvalid[p] && m_wready[p];
    sync_fifo #(.W(DW + DW/8 + 1), .DEPTH(FDEPTH), .DISTRIBUTED(1'b1)) u_wf (
      .clk, .rst_n, .clr(1'b0), .wr(wf_wr[p]), .wdata({w_plast, s_wstrb, s_wdata}), .rd(fire && half),
      .rdata(q), .empty(empty), .full(wf_full[p]), .count(cnt));
    assign m_wvalid[p] = !empty;
    assign m_wdata[p*PW +: PW] = half ? q[PW +: PW] : q[0 +: PW];
    assign m_wstrb[p*PW/8 +: PW/8] = half ? q[DW + PW/8 +: PW/8] : q[DW +: PW/8];
    assign m_wlast[p] = half && q[DW + DW/8];
    always_ff @(posedge clk) begin
      if (!rst_n) half <= 1'b0;
      else if (fire) half <= !half;
    end
    // responses in, not yet handed to the core: count and a registered non-zero flag
    assign m_bready[p] = !bcnt[5];
    wire inc = m_bvalid[p] && m_bready[p];
    always_ff @(posedge clk) begin
      if (!rst_n) begin
        bcnt <= 6'd0;
        bnz[p] <= 1'b0;
      end else if (inc != b_dec[p]) begin
        bcnt <= inc ? bcnt + 6'd1 : bcnt - 6'd1;
        bnz[p] <= inc || bcnt != 6'd1;
      end
    end
    wire unused = &{1'b0, cnt, 1'b0};
  end
  // the core's write response: the head burst's parts have answered (order FIFO of the parts each burst has,
  // its head in registers)
  logic bo_empty, bh_v, b_pop;
  logic [1:0] bo_head, bh_need;
  logic [OW:0] bo_count;
  wire b_load = !bo_empty && (!bh_v || b_pop);
  sync_fifo #(.W(2), .DEPTH(OUTST)) u_bo (
    .clk, .rst_n, .clr(1'b0), .wr(aw_take), .wdata({!ws[16], !ws[17]}), .rd(b_load), .rdata(bo_head),
    .empty(bo_empty), .full(bo_full), .count(bo_count));
  always_ff @(posedge clk) begin
    if (!rst_n) bh_v <= 1'b0;
    else if (b_load || b_pop) bh_v <= b_load;
  end
  always_ff @(posedge clk) begin
    if (b_load) bh_need <= bo_head;
  end
  assign s_bvalid = bh_v && (!bh_need[0] || bnz[0]) && (!bh_need[1] || bnz[1]);
  assign b_pop = s_bvalid && s_bready;
  assign b_dec = {2{b_pop}} & bh_need;
  wire unused = &{1'b0, bo_count, ai_count, wi_count, r_plast, w_end, 1'b0};
endmodule
`default_nettype wire
