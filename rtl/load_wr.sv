// LOAD write formatting, pipelined (LD_WR_STAGES register stages counting load_rd's chunk register): the chunk of
// a beat (or, for span segments, runs q and q + 1 from the two-beat window) as write enables / data / rows of the
// IBUF lane memories (ports A and B), the WBUF word and the PBUF (TBUF) lane memories. Every element is stored 16 bits
// wide (int8 sign-extended).
//   x2_: the chunk's first element (idx0 = pb + e / element bytes), its byte within it (ph), rotate amounts, the
//        chunk's byte mask, the span runs' window offsets (wi: run q's first byte in {beat, previous beat});
//   x3_: the beat rotated (byte u of the chunk, counted from its first element's first byte, at byte u), per IBUF
//        port: data, first element, byte mask; the WBUF unit groups and mask;
//   outputs (registered): per lane, the element k = (lane - idx0) mod lanes, its row idx0 / lanes or the next one.
// Legend: MW bits of the chunk mask (bytes from the first element's first byte); G = AXI_BYTES: the WBUF unit
// groups (units: int8 elements, int16 bytes) a chunk can touch are g0 and g0 + 1.
`default_nettype none
module load_wr
  import accel_pkg::*;
#(
  parameter int RUN_W = 24,
  parameter int SPD_W = LOG2_BYTES + 4
) (
  input  wire                   clk,
  input  wire                   rst_n,
  input  wire                   clr,
  input  wire                   prec16,         // the LOAD's prec field: int16 (load.sv rq_p16, set up per LOAD)
  input  wire                   is_ibuf,
  input  wire                   is_wbuf,
  input  wire                   is_pbuf,        // PBUF or TBUF (16-byte records)
  input  wire                   is_tbuf,
  input  wire [RUN_W-1:0]       run_bytes,
  input  wire [31:0]            run_step,       // element index step per run
  input  wire [SPD_W-1:0]       sp_stride,
  // the chunk (load_rd)
  input  wire                   w_chunk,
  input  wire                   w_span,
  input  wire [1:0]             w_spe,
  input  wire [AXI_DW-1:0]      w_data,
  input  wire [AXI_DW-1:0]      w_prev,
  input  wire [BYTE_POS_W-1:0]  w_j0,
  input  wire [BYTE_POS_W-1:0]  w_cnt,
  input  wire [RUN_W-1:0]       w_e,
  input  wire [31:0]            w_pb,
  input  wire [SPD_W-1:0]       w_d0,
  input  wire [31:0]            w_qpb,
  output logic                  busy,           // a chunk in these stages
  output logic [2*2*TN-1:0]     ibw_we,
  output logic [2*16*TN-1:0]    ibw_data,
  output logic [2*IB_AW*TN-1:0] ibw_row,
  output logic [2*WL-1:0]       wbw_we,
  output logic [16*WL-1:0]      wbw_data,
  output logic [WB_AW-1:0]      wbw_row,
  output logic [PARAM_BYTES*TM-1:0] pbw_we,
  output logic [PARAM_BYTES*TM-1:0] tbw_we,
  output logic [PREC_W*TM-1:0]  pbw_data,         // (PBUF and TBUF)
  output logic [PW_AW*TM-1:0]   pbw_row
);
  localparam int PW = BYTE_POS_W;
  localparam int LB = LOG2_BYTES;
  localparam int MW = AXI_BYTES + PARAM_BYTES;
  localparam int G = AXI_BYTES;
  localparam int LOG2_G = LOG2_BYTES;

  // n ones from bit 0 (n <= AXI_BYTES), as a thermometer code (no carry chain)
  function automatic logic [AXI_BYTES-1:0] ones(input logic [PW-1:0] n);
    for (int i = 0; i < AXI_BYTES; i++) ones[i] = PW'(i) < n;
  endfunction

  // ---- x2: positions
  logic x2_chunk, x2_span;
  logic [1:0] x2_spe;
  logic [AXI_DW-1:0] x2_data, x2_prev;
  logic [31:0] x2_idx0, x2_qpb, x2_qpb1;
  logic [LOG2_PB-1:0] x2_ph;
  logic [LB-1:0] x2_sh, x2_ilo;                                       // (x3: x2_sh - x2_ilo << prec16, the WBUF rotation)
  logic [AXI_BYTES-1:0] x2_ones;                                      // the chunk's bytes from bit 0
  logic [PW-1:0] x2_wi, x2_str, x2_cnt;                               // (x3: x2_wi + x2_str, span run q + 1)
  logic [LOG2_WL:0] x2_us;                                            // WBUF: the chunk's first unit in its word
  wire [31:0] e_el = is_pbuf ? 32'(w_e >> LOG2_PB) : prec16 ? 32'(w_e >> 1) : 32'(w_e);   // elements into the run
  wire [LOG2_PB-1:0] ph = is_pbuf ? w_e[LOG2_PB-1:0] : LOG2_PB'(prec16 & w_e[0]);
  wire [LB-1:0] sh = LB'(w_j0) - LB'(ph);
  wire [LB-1:0] idx_lo = LB'(w_pb) + LB'(e_el);
  wire [LOG2_WL-1:0] idx_wl = LOG2_WL'(w_pb) + LOG2_WL'(e_el);       // (idx0 mod WL)
  always_ff @(posedge clk) begin
    x2_spe <= w_spe;
    x2_data <= w_data;
    x2_prev <= w_prev;
    x2_idx0 <= w_pb + e_el;
    x2_qpb <= w_qpb;
    x2_qpb1 <= w_qpb + run_step;
    x2_ph <= ph;
    x2_sh <= sh;
    x2_ilo <= idx_lo;
    x2_ones <= w_chunk ? ones(w_cnt) : '0;
    x2_wi <= PW'(w_d0) - PW'(run_bytes);                              // (mod 2 AXI_BYTES)
    x2_str <= PW'(sp_stride);
    x2_cnt <= w_cnt;
    // (idx_wl << prec16) + ph for WBUF (ph = prec16 & e[0]: no carry, a concatenation; PBUF's ph is not used here)
    x2_us <= prec16 ? {idx_wl, w_e[0]} : (LOG2_WL + 1)'(idx_wl);
  end

  // ---- x3: IBUF per lane and port the window bytes of its element (src0 / src1: the window {beat, previous
  // beat}, a chunk's bytes in the beat's half) and its byte within the chunk / run (u), the bytes written per port
  // [lob, hib); the beat rotated for PBUF (chunk byte u at byte u) and WBUF (word element q at byte q * eb); the
  // WBUF unit groups
  localparam int UW = LOG2_TN + 2;
  localparam int HW = (UW > PW ? UW : PW) + 1;
  logic x3_chunk;
  logic [2*2*AXI_DW-1:0] x3_rw;                                       // per port the window rotated to its base
  logic [LOG2_TN-1:0] x3_lo [2];                                      // per port idx0 mod Tn
  logic [2*TN*UW-1:0] x3_u;
  logic [1:0] x3_ok0, x3_ok1;                                         // IBUF word idx0 / Tn (+ 1) exists
  logic x3_pok0, x3_pok1;                                             // PBUF (TBUF) row idx0 / Tm (+ 1) exists
  logic x3_tb;                                                        // the records go to TBUF
  logic [2*TN-1:0] x3_nxt;                                            // the element is in the next word
  logic [HW-1:0] x3_lob [2], x3_hib [2];
  logic [AXI_DW-1:0] x3_rot, x3_rotw;
  logic [31:0] x3_idx0 [2];
  logic [MW-1:0] x3_mask;                                             // PBUF: the chunk's bytes
  localparam int NG = 2 * WL > G ? 2 * WL / G : 1;                   // WBUF unit groups of a word
  logic [NG-1:0] x3_g0;                                               // the chunk's first group, one-hot
  logic [2*G-1:0] x3_wm;
  logic x3_wok;                                                       // a WBUF chunk whose word exists
  logic [WB_AW-1:0] x3_wrow;
  // the window of port pt rotated by its base: byte j of x3_rw is window byte (base + j) mod 2 AXI_BYTES, so the
  // element k of the lane rotation below is at byte k * element bytes (mod 2 AXI_BYTES): a chunk's beat (twice,
  // so the rotation is mod AXI_BYTES) from its first element's byte sh, or span run q / q + 1 from wi / wi1. A
  // logarithmic rotator (PW stages of 2:1), not a window-wide multiplexer per lane and byte
  for (genvar pt = 0; pt < 2; pt++) begin : g_rw
    wire [2*AXI_DW-1:0] win = pt == 0 && !x2_span ? {x2_data, x2_data} : {x2_data, x2_prev};
    wire [PW-1:0] base = pt == 0 ? (x2_span ? x2_wi : PW'(x2_sh)) : x2_wi + x2_str;   // (one carry chain)
    wire [2*AXI_DW-1:0] rw;
    log_shift #(.E(8), .N(2 * AXI_BYTES), .S(PW), .ROT(1'b1), .UP(1'b0)) u_rot (.sh(base), .x(win), .y(rw));
    always_ff @(posedge clk) x3_rw[2 * AXI_DW * pt +: 2 * AXI_DW] <= rw;
  end
  always_ff @(posedge clk) begin
    for (int pt = 0; pt < 2; pt++) begin
      logic [LOG2_TN-1:0] lo;
      lo = pt == 0 ? LOG2_TN'(x2_span ? x2_qpb : x2_idx0) : LOG2_TN'(x2_qpb1);
      x3_lo[pt] <= lo;
      for (int n = 0; n < TN; n++) begin
        logic [LOG2_TN-1:0] k;
        k = LOG2_TN'(n) - lo;                                         // (mod Tn)
        x3_u[UW * (TN * pt + n) +: UW] <= UW'(k) << prec16;
        x3_nxt[TN * pt + n] <= LOG2_TN'(n) < lo;
      end
    end
    x3_lob[0] <= x2_span ? '0 : HW'(x2_ph);
    x3_hib[0] <= x2_span ? (x2_spe[0] ? HW'(run_bytes[PW-1:0]) : '0) : x2_chunk ? HW'(x2_ph) + HW'(x2_cnt) : '0;
    x3_lob[1] <= '0;
    x3_hib[1] <= x2_span && x2_spe[1] ? HW'(run_bytes[PW-1:0]) : '0;
    x3_idx0[0] <= x2_span ? x2_qpb : x2_idx0;
    x3_idx0[1] <= x2_qpb1;
    for (int pt = 0; pt < 2; pt++) begin
      logic [31:0] r;
      r = (pt == 0 ? (x2_span ? x2_qpb : x2_idx0) : x2_qpb1) >> LOG2_TN;
      x3_ok0[pt] <= is_ibuf && r < 32'(IB_D);
      x3_ok1[pt] <= is_ibuf && r < 32'(IB_D - 1);                    // (r + 1 < IB_D: one compare)
    end
    x3_pok0 <= is_pbuf && x2_idx0 >> LOG2_TM < (is_tbuf ? 32'(TB_D) : 32'(PB_D));
    x3_pok1 <= is_pbuf && x2_idx0 >> LOG2_TM < (is_tbuf ? 32'(TB_D - 1) : 32'(PB_D - 1));
    x3_tb <= is_tbuf;
  end
  wire [LB-1:0] shw = x2_sh - (x2_ilo << prec16);                   // WBUF: the word's element 0 at byte 0
  wire [AXI_DW-1:0] rotw;                                             // x2_data byte r + shw (mod AXI_BYTES) at r:
  log_shift #(.E(8), .N(AXI_BYTES), .S(LB), .ROT(1'b1), .UP(1'b0)) u_rotw (.sh(shw), .x(x2_data), .y(rotw));
  always_ff @(posedge clk) begin
    logic [LOG2_G-1:0] ulo;
    logic [31:0] wrow;
    logic wok;
    for (int r = 0; r < AXI_BYTES; r++) begin
      x3_rot[8 * r +: 8] <= x2_data[8 * ((r + 32'(x2_sh)) & (AXI_BYTES - 1)) +: 8];
    end
    x3_rotw <= rotw;                                                  // (shw's chain, then 2:1 stages)
    x3_mask <= MW'(x2_ones) << x2_ph;
    wrow = x2_idx0 >> LOG2_WL;
    for (int g = 0; g < NG; g++) x3_g0[g] <= (LOG2_WL + 2 - LOG2_G)'(x2_us >> LOG2_G) == (LOG2_WL + 2 - LOG2_G)'(g);
    // units [ulo, ulo + cnt) of the two groups (cnt <= G): per bit two compares of registers with a constant (a
    // shifted thermometer code would be a 2G-bit shifter behind an adder); whether the word exists (a compare of
    // idx0's high bits: its own carry chain) is registered apart and joins the enables' LUTs
    ulo = x2_us[LOG2_G-1:0];
    wok = x2_chunk && is_wbuf && wrow < 32'(WB_D);
    x3_wok <= wok;
    for (int x = 0; x < 2 * G; x++)
      x3_wm[x] <= (LOG2_G + 1)'(x) >= (LOG2_G + 1)'(ulo) && (LOG2_G + 1)'(x - 32'(ulo)) < (LOG2_G + 1)'(x2_cnt);
    x3_wrow <= WB_AW'(wrow);
  end
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      x2_chunk <= 1'b0;
      x2_span <= 1'b0;
      x3_chunk <= 1'b0;
    end else begin
      x2_chunk <= w_chunk;
      x2_span <= w_span;
      x3_chunk <= x2_chunk || x2_span;
    end
  end
  assign busy = x2_chunk || x2_span || x3_chunk;
  wire unused = &{1'b0, run_bytes, sp_stride, w_j0, w_d0, 1'b0};   // (only their low bits are used)

  // ---- outputs. IBUF lane writes, port A (a chunk, or span run q) and port B (span run q + 1): lane n takes the
  // element k = (n - idx0) mod Tn (its byte u = k * element bytes), word idx0 / Tn or the next one. The elements
  // k = 0 .. Tn - 1 are fixed bytes of the rotated window (int16: bytes 2k, 2k + 1; int8: byte k sign-extended),
  // then rotated over the lanes by idx0 mod Tn (LOG2_TN stages of 2:1)
  for (genvar pt = 0; pt < 2; pt++) begin : g_ibw
    wire [31:0] row0 = x3_idx0[pt] >> LOG2_TN;
    wire [2*AXI_DW-1:0] rw = x3_rw[2 * AXI_DW * pt +: 2 * AXI_DW];
    logic [16*TN-1:0] el;                                             // element k at [16 k +: 16]
    localparam int W = 2 * AXI_BYTES;                                 // window bytes
    always_comb
      for (int k = 0; k < TN; k++)
        el[16 * k +: 16] = prec16 ? {rw[8 * ((2 * k + 1) % W) +: 8], rw[8 * ((2 * k) % W) +: 8]}
                                  : {{8{rw[8 * (k % W) + 7]}}, rw[8 * (k % W) +: 8]};
    wire [16*TN-1:0] lanes;                                           // lane n <- element (n - lo) mod Tn
    log_shift #(.E(16), .N(TN), .S(LOG2_TN), .ROT(1'b1), .UP(1'b1)) u_lanes (.sh(x3_lo[pt]), .x(el), .y(lanes));
    always_ff @(posedge clk) begin
      for (int n = 0; n < TN; n++) begin
        logic [UW-1:0] u0;
        logic nxt, ok, w0, w1;
        u0 = x3_u[UW * (TN * pt + n) +: UW];
        nxt = x3_nxt[TN * pt + n];
        ok = nxt ? x3_ok1[pt] : x3_ok0[pt];
        w0 = HW'(u0) >= x3_lob[pt] && HW'(u0) < x3_hib[pt];
        // byte u0 + 1, used in int16 only, where u0 = 2k is even: u0 | 1, no carry chain before the compares
        w1 = HW'({u0[UW-1:1], 1'b1}) >= x3_lob[pt] && HW'({u0[UW-1:1], 1'b1}) < x3_hib[pt];
        ibw_row[IB_AW * TN * pt + IB_AW * n +: IB_AW] <= IB_AW'(row0 + 32'(nxt));
        if (!ok || (!rst_n || clr)) ibw_we[2 * TN * pt + 2 * n +: 2] <= 2'b00;
        else ibw_we[2 * TN * pt + 2 * n +: 2] <= prec16 ? {w1, w0} : {2{w0}};
      end
      ibw_data[16 * TN * pt +: 16 * TN] <= lanes;
    end
  end

  // WBUF word write: the chunk covers units [us, us + cnt) of word idx0 / WL, at most two groups of G units: unit
  // x is written if its group is g0 (bit x mod G of the shifted mask) or g0 + 1 (bit G + x mod G); g0 one-hot, so
  // each enable is a function of four register bits. One generate block per element, its unit indices constants
  // (no function calls or loop variables for the synthesis front end to unroll).
  always_ff @(posedge clk) wbw_row <= x3_wrow;
  for (genvar q = 0; q < WL; q++) begin : g_wbw
    localparam int UA = 2 * q, UB = 2 * q + 1;   // int16: the element's two byte units; int8: unit q
    wire ea = x3_wok && x3_g0[UA / G] && x3_wm[UA % G];
    wire eb = x3_wok && x3_g0[UB / G] && x3_wm[UB % G];
    wire e8 = x3_wok && x3_g0[q / G] && x3_wm[q % G];
    wire fa, fb, f8;                             // the unit in group g0 + 1
    if (UA >= G) begin : g_a
      assign fa = x3_wok && x3_g0[UA / G - 1] && x3_wm[G + UA % G];
    end else begin : g_na
      assign fa = 1'b0;
    end
    if (UB >= G) begin : g_b
      assign fb = x3_wok && x3_g0[UB / G - 1] && x3_wm[G + UB % G];
    end else begin : g_nb
      assign fb = 1'b0;
    end
    if (q >= G) begin : g_8
      assign f8 = x3_wok && x3_g0[q / G - 1] && x3_wm[G + q % G];
    end else begin : g_n8
      assign f8 = 1'b0;
    end
    logic [1:0] we;
    logic [15:0] d;
    always_ff @(posedge clk) begin
      if (!rst_n || clr) we <= 2'b00;
      else if (prec16) we <= {eb || fb, ea || fa};
      else we <= {2{e8 || f8}};
      d <= prec16 ? {x3_rotw[8 * (UB % AXI_BYTES) +: 8], x3_rotw[8 * (UA % AXI_BYTES) +: 8]}
                  : {{8{x3_rotw[8 * (q % AXI_BYTES) + 7]}}, x3_rotw[8 * (q % AXI_BYTES) +: 8]};
    end
    assign wbw_we[2 * q +: 2] = we;
    assign wbw_data[16 * q +: 16] = d;
  end

  // PBUF lane writes: lane l takes chunk record k = (l - idx0) mod Tm, byte b of it if the chunk mask has bit
  // u = k * PARAM_BYTES + b (u < MW). The mask is read at MXW bits of u behind the compare u < MW: a selection
  // among MW / PARAM_BYTES bits (b is a constant), not among all PARAM_BYTES x Tm bytes of the lanes (a mux that
  // grows with Tm^2 in lanes and inputs, and that Yosys' techmap expanded to more than 24 GB at 32x48).
  localparam int MXW = $clog2(MW);
  wire [31:0] pbw_row0 = x3_idx0[0] >> LOG2_TM;                   // (PBUF: never a span)
  always_ff @(posedge clk) begin
    for (int l = 0; l < TM; l++) begin
      logic [LOG2_TM-1:0] k;
      logic nxt;
      k = LOG2_TM'(l) - x3_idx0[0][LOG2_TM-1:0];
      nxt = LOG2_TM'(l) < x3_idx0[0][LOG2_TM-1:0];
      pbw_row[PW_AW * l +: PW_AW] <= PW_AW'(pbw_row0 + 32'(nxt));
      for (int b = 0; b < PARAM_BYTES; b++) begin
        logic [LOG2_TM+LOG2_PB-1:0] u;
        logic pm;
        u = ((LOG2_TM + LOG2_PB)'(k) << LOG2_PB) + (LOG2_TM + LOG2_PB)'(b);
        pm = 32'(u) < 32'(MW) && x3_mask[MXW'(u)];
        pbw_we[PARAM_BYTES * l + b] <= !(!rst_n || clr) && !x3_tb && (nxt ? x3_pok1 : x3_pok0) && pm;
        tbw_we[PARAM_BYTES * l + b] <= !(!rst_n || clr) && x3_tb && (nxt ? x3_pok1 : x3_pok0) && pm;
        // (u mod AXI_BYTES: its low bits are b, a constant)
        pbw_data[PREC_W * l + 8 * b +: 8] <= AXI_BYTES <= PARAM_BYTES ? x3_rot[8 * (b % AXI_BYTES) +: 8]
                                                                      : x3_rot[8 * LB'(u) +: 8];
      end
    end
  end
endmodule
`default_nettype wire
