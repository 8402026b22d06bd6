// LOAD write formatting (combinational): the chunk of the current beat (or, for span segments, runs q and q + 1
// from the two-beat window) as write enables / data / rows of the IBUF lane memories (ports A and B), the WBUF word
// and the PBUF lane memories. Every element is stored 16 bits wide (int8 sign-extended).
// Legend: j0 chunk's first byte in the beat, ph its byte within its first element / record, idx0 that element's
// index, cnt the chunk's bytes; MW bits of the chunk mask (bytes from the first element's first byte);
// ibp_ the per-port IBUF source (rotated data, first element, byte mask of IXW-bit positions); G = AXI_BYTES: the
// WBUF unit groups (units: int8 elements, int16 bytes) a chunk can touch are g0 and g0 + 1.
`default_nettype none
module load_wr
  import accel_pkg::*;
(
  input  wire                   prec16,
  input  wire [AXI_DW-1:0]      rdata,          // this beat
  input  wire [AXI_DW-1:0]      prev,           // the previous beat of the segment (span window)
  input  wire                   is_ibuf,
  input  wire                   is_wbuf,
  input  wire                   is_pbuf,
  input  wire                   wr,             // a chunk is written (not span)
  input  wire [BYTE_POS_W-1:0]  j0,
  input  wire [31:0]            ph,
  input  wire [31:0]            idx0,
  input  wire [31:0]            cnt,
  input  wire                   span,
  input  wire [1:0]             sp_e,           // span: run q / q + 1 ends in this beat
  input  wire [31:0]            sp_qpb,         // span: first element of run q
  input  wire [BYTE_POS_W-1:0]  sp_wi,          // span: window byte of run q's first byte
  input  wire [31:0]            sp_stride,
  input  wire [31:0]            run_bytes,
  input  wire [31:0]            run_step,       // element index step per run
  output logic [2*2*TN-1:0]     ibw_we,
  output logic [2*16*TN-1:0]    ibw_data,
  output logic [2*IB_AW*TN-1:0] ibw_row,
  output logic [2*WL-1:0]       wbw_we,
  output logic [16*WL-1:0]      wbw_data,
  output logic [WB_AW-1:0]      wbw_row,
  output logic [PARAM_BYTES*TM-1:0] pbw_we,
  output logic [PREC_W*TM-1:0]  pbw_data,
  output logic [PB_AW*TM-1:0]   pbw_row
);
  localparam int PW = BYTE_POS_W;
  // beat rotated so that chunk byte u (counted from the chunk's first element / record) is ld_rot byte u mod
  // AXI_BYTES; the WBUF rotation also aligns element q of the word: element q byte b is ld_rotw byte (q*eb + b)
  logic [AXI_DW-1:0] ld_rot, ld_rotw;
  always_comb begin
    logic [LOG2_BYTES-1:0] sh, shw;
    sh = LOG2_BYTES'(j0) - LOG2_BYTES'(ph);
    shw = sh - (LOG2_BYTES'(idx0) << prec16);
    for (int r = 0; r < AXI_BYTES; r++) begin
      ld_rot[8 * r +: 8] = rdata[8 * ((r + 32'(sh)) & (AXI_BYTES - 1)) +: 8];
      ld_rotw[8 * r +: 8] = rdata[8 * ((r + 32'(shw)) & (AXI_BYTES - 1)) +: 8];
    end
  end
  // chunk mask: bit u set for the bytes u in [ph, ph + cnt) (cnt <= AXI_BYTES, ph < PARAM_BYTES)
  localparam int MW = AXI_BYTES + PARAM_BYTES;
  logic [MW-1:0] ld_mask;
  always_comb begin
    logic [MW-1:0] ones;
    ones = MW'(((MW + 1)'(1) << cnt[PW-1:0]) - (MW + 1)'(1));
    ld_mask = wr ? ones << ph[LOG2_PB-1:0] : '0;
  end
  // span: run q / q + 1 from its first byte
  logic [AXI_DW-1:0] sp_rot [2];
  always_comb begin
    logic [2*AXI_DW-1:0] win;
    logic [PW-1:0] w1;
    win = {rdata, prev};
    w1 = sp_wi + PW'(sp_stride);
    for (int r = 0; r < AXI_BYTES; r++) begin
      sp_rot[0][8 * r +: 8] = win[8 * ((r + 32'(sp_wi)) & (2 * AXI_BYTES - 1)) +: 8];
      sp_rot[1][8 * r +: 8] = win[8 * ((r + 32'(w1)) & (2 * AXI_BYTES - 1)) +: 8];
    end
  end

  // IBUF lane writes, port A (a chunk, or span run q) and port B (span run q + 1): lane n takes the element
  // k = (n - idx0) mod Tn, word idx0 / Tn or the next one
  localparam int IXW = $clog2(2 * TN + MW);
  localparam int IMX = 2 ** IXW;
  logic [AXI_DW-1:0] ibp_rot [2];
  logic [31:0] ibp_idx0 [2];
  logic [IMX-1:0] ibp_mask [2];
  always_comb begin
    logic [IMX-1:0] runm;
    runm = IMX'(((IMX + 1)'(1) << run_bytes[PW-1:0]) - (IMX + 1)'(1));
    ibp_rot[0] = span ? sp_rot[0] : ld_rot;
    ibp_idx0[0] = span ? sp_qpb : idx0;
    ibp_mask[0] = span ? (sp_e[0] ? runm : '0) : IMX'(ld_mask);
    ibp_rot[1] = sp_rot[1];
    ibp_idx0[1] = sp_qpb + run_step;
    ibp_mask[1] = sp_e[1] ? runm : '0;
  end
  for (genvar pt = 0; pt < 2; pt++) begin : g_ibw
    wire [31:0] row0 = ibp_idx0[pt] >> LOG2_TN;
    wire ok0 = row0 < 32'(IB_D);
    wire ok1 = row0 + 32'd1 < 32'(IB_D);
    always_comb begin
      for (int n = 0; n < TN; n++) begin
        logic [LOG2_TN-1:0] k;
        logic [LOG2_TN+1:0] u0, u1;
        logic [7:0] d0, d1;
        logic nxt, ok;
        k = LOG2_TN'(n) - ibp_idx0[pt][LOG2_TN-1:0];
        nxt = LOG2_TN'(n) < ibp_idx0[pt][LOG2_TN-1:0];
        ok = is_ibuf && (nxt ? ok1 : ok0);
        u0 = (LOG2_TN + 2)'(k) << prec16;
        u1 = u0 + (LOG2_TN + 2)'(1);
        d0 = ibp_rot[pt][8 * LOG2_BYTES'(u0) +: 8];
        d1 = ibp_rot[pt][8 * LOG2_BYTES'(u1) +: 8];
        ibw_row[IB_AW * TN * pt + IB_AW * n +: IB_AW] = IB_AW'(row0 + 32'(nxt));
        if (!ok) ibw_we[2 * TN * pt + 2 * n +: 2] = 2'b00;
        else if (prec16) ibw_we[2 * TN * pt + 2 * n +: 2] = {ibp_mask[pt][IXW'(u1)], ibp_mask[pt][IXW'(u0)]};
        else ibw_we[2 * TN * pt + 2 * n +: 2] = {2{ibp_mask[pt][IXW'(u0)]}};
        ibw_data[16 * TN * pt + 16 * n +: 16] = prec16 ? {d1, d0} : {{8{d0[7]}}, d0};
      end
    end
  end

  // WBUF word write: the chunk covers units [us, us + cnt) of word idx0 / WL, at most two groups of G units: unit
  // x is written if its group is g0 (bit x mod G of the shifted mask) or g0 + 1 (bit G + x mod G)
  localparam int G = AXI_BYTES;
  localparam int LOG2_G = LOG2_BYTES;
  wire [31:0] wbw_row32 = idx0 >> LOG2_WL;
  assign wbw_row = WB_AW'(wbw_row32);
  wire [LOG2_WL:0] wbw_us = ((LOG2_WL + 1)'(idx0[LOG2_WL-1:0]) << prec16) + (LOG2_WL + 1)'(ph);
  wire [LOG2_WL+1-LOG2_G:0] wbw_g0 = (LOG2_WL + 2 - LOG2_G)'(wbw_us >> LOG2_G);
  wire [2*G-1:0] wbw_m = wr && is_wbuf && wbw_row32 < 32'(WB_D)
                         ? (2 * G)'(((2 * G + 1)'(1) << cnt[PW-1:0]) - (2 * G + 1)'(1)) << wbw_us[LOG2_G-1:0] : '0;
  function automatic logic wb_unit(input int x, input logic [LOG2_WL+1-LOG2_G:0] g0, input logic [2*G-1:0] m);
    wb_unit = ((LOG2_WL + 2 - LOG2_G)'(x / G) == g0 && m[x % G])
           || ((LOG2_WL + 2 - LOG2_G)'(x / G) == g0 + 1'b1 && m[G + x % G]);
  endfunction
  always_comb begin
    for (int q = 0; q < WL; q++) begin
      logic [7:0] d0, d1, e8;
      d0 = ld_rotw[8 * ((2 * q) % AXI_BYTES) +: 8];
      d1 = ld_rotw[8 * ((2 * q + 1) % AXI_BYTES) +: 8];
      e8 = ld_rotw[8 * (q % AXI_BYTES) +: 8];
      if (prec16) wbw_we[2 * q +: 2] = {wb_unit(2 * q + 1, wbw_g0, wbw_m), wb_unit(2 * q, wbw_g0, wbw_m)};
      else wbw_we[2 * q +: 2] = {2{wb_unit(q, wbw_g0, wbw_m)}};
      wbw_data[16 * q +: 16] = prec16 ? {d1, d0} : {{8{e8[7]}}, e8};
    end
  end

  // PBUF lane writes: lane l takes chunk record k = (l - idx0) mod Tm (k*16 + b < MW)
  localparam int PXW = $clog2(PARAM_BYTES * TM + MW);
  localparam int PMX = 2 ** PXW;
  wire [PMX-1:0] pb_mask = PMX'(ld_mask);
  wire [31:0] pbw_row0 = idx0 >> LOG2_TM;
  wire pbw_ok0 = is_pbuf && pbw_row0 < 32'(PB_D);
  wire pbw_ok1 = is_pbuf && pbw_row0 + 32'd1 < 32'(PB_D);
  always_comb begin
    for (int l = 0; l < TM; l++) begin
      logic [LOG2_TM-1:0] k;
      logic nxt;
      k = LOG2_TM'(l) - idx0[LOG2_TM-1:0];
      nxt = LOG2_TM'(l) < idx0[LOG2_TM-1:0];
      pbw_row[PB_AW * l +: PB_AW] = PB_AW'(pbw_row0 + 32'(nxt));
      for (int b = 0; b < PARAM_BYTES; b++) begin
        logic [LOG2_TM+LOG2_PB-1:0] u;
        u = ((LOG2_TM + LOG2_PB)'(k) << LOG2_PB) + (LOG2_TM + LOG2_PB)'(b);
        pbw_we[PARAM_BYTES * l + b] = (nxt ? pbw_ok1 : pbw_ok0) && pb_mask[PXW'(u)];
        // (u mod AXI_BYTES: its low bits are b, a constant)
        pbw_data[PREC_W * l + 8 * b +: 8] = AXI_BYTES <= PARAM_BYTES ? ld_rot[8 * (b % AXI_BYTES) +: 8]
                                                                     : ld_rot[8 * LOG2_BYTES'(u) +: 8];
      end
    end
  end
  wire unused = &{1'b0, j0, ph, cnt, sp_stride, run_bytes, 1'b0};   // (only their low bits are used)
endmodule
`default_nettype wire
