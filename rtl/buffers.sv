// On-chip buffers: inferable RAMs (rtl/ram_tdp.sv, synchronous read), every element 16 bits wide, per ping-pong
// bank b (geometry in accel_pkg):
//   IBUF  Tn lane memories x IB_D words (element idx: lane idx % Tn, word idx / Tn); port A: LOAD write or COMPUTE
//         read of pixel x0 (bypass: first word), port B: LOAD span write or COMPUTE read of pixel x1 (second word)
//   WBUF  Tm memories of Tn elements x 2 WB_D words, both banks (WB_ONE: word {row, bank}; port A: LOAD write of
//         a word's run, port B: COMPUTE read of bank cp_wb_bank: one read word, no bank multiplexer), else a memory
//         of WB_D words per bank
//   ACC   Tm lane memories x ACC_WORDS (port A: COMPUTE read / write of pixel x0, POST read; port B: pixel x1, or
//         the write of a single pixel)
//   OBUF  OL lane memories, one bank (port A: POST write, port B: STORE read of a beat's window)
//   PBUF  Tm lane memories of PARAM_BYTES-byte records (entry e: lane e % Tm; port A LOAD, port B POST)
//   TBUF  Tm lane memories of TB_D activation-table records (as PBUF; port B: lane l's own POST read address)
// Double-pumped PE array (PUMP = 2): IBUF and ACC have a second copy (copy 1) for the DSP operand pair B: LOAD
// writes both IBUF copies alike, COMPUTE reads copy 1 on its ports C / D (pair B's pixels); ACC copy c holds the
// pixels of the odd (c = 1) / even tile columns (rtl/compute.sv), copy 1's ports as copy 0's with cp_wr_b,
// cp_s3_two_b, aw2 / aw3 and wd2 / wd3; POST reads port A of both copies at pp_aw and takes its pixel's copy.
// LOAD writes bank ld_bank only; COMPUTE never reads the bank being loaded, and the IBUF / ACC read data of both
// banks go out (bank b at [b * width +: width]).
`default_nettype none
module buffers
  import accel_pkg::*;
(
  input  wire                   clk,
  // LOAD writes
  input  wire                   ld_bank,
  input  wire [2*2*TN-1:0]      ibw_we,         // port A at [0 +: 2*TN], port B at [2*TN +: 2*TN]
  input  wire [2*16*TN-1:0]     ibw_data,
  input  wire [2*IB_AW*TN-1:0]  ibw_row,
  input  wire [2*WL-1:0]        wbw_we,
  input  wire [16*WL-1:0]       wbw_data,
  input  wire [WB_AW-1:0]       wbw_row,
  input  wire [PARAM_BYTES*TM-1:0] pbw_we,
  input  wire [PARAM_BYTES*TM-1:0] tbw_we,
  input  wire [PREC_W*TM-1:0]   pbw_data,
  input  wire [PW_AW*TM-1:0]    pbw_row,
  // COMPUTE
  input  wire [IB_AW-1:0]       cp_ib_a,
  input  wire [IB_AW-1:0]       cp_ib_b,
  input  wire [WB_AW-1:0]       cp_wb_a,
  input  wire                   cp_wb_bank,     // the WBUF bank of the read (the address's low bit)
  input  wire                   cp_acc_bank,
  input  wire                   cp_wr,
  input  wire                   cp_s3_two,
  input  wire [AC_AW-1:0]       cp_s2_aw0, cp_s2_aw1, cp_s3_aw0, cp_s3_aw1,
  input  wire [TM*ACC_W-1:0]    cp_wd0, cp_wd1,
  input  wire [IB_AW-1:0]       cp_ib_c,        // PUMP = 2: copy 1
  input  wire [IB_AW-1:0]       cp_ib_d,
  input  wire                   cp_wr_b,
  input  wire                   cp_s3_two_b,
  input  wire [AC_AW-1:0]       cp_s2_aw2, cp_s2_aw3, cp_s3_aw2, cp_s3_aw3,
  input  wire [TM*ACC_W-1:0]    cp_wd2, cp_wd3,
  output logic [2*16*TN-1:0]    ib_rd_a,
  output logic [2*16*TN-1:0]    ib_rd_b,
  output logic [2*16*TN-1:0]    ib_rd_c,        // PUMP = 2: copy 1 (else 0)
  output logic [2*16*TN-1:0]    ib_rd_d,
  output logic [2*16*WL-1:0]    wb_rd,          // WB_ONE: the word of bank cp_wb_bank, else both banks'
  output logic [2*ACC_W*TM-1:0] acc_rd_a,
  output logic [2*ACC_W*TM-1:0] acc_rd_b,
  output logic [2*ACC_W*TM-1:0] acc_rd_c,       // PUMP = 2: copy 1 (else 0)
  output logic [2*ACC_W*TM-1:0] acc_rd_d,
  // POST
  input  wire                   pp_acc_rd,
  input  wire                   pp_acc_bank,
  input  wire [AC_AW-1:0]       pp_aw,
  input  wire [PB_AW-1:0]       pp_prow,
  output logic [PREC_W*TM-1:0]  pb_rd,
  input  wire [TB_AW*TM-1:0]    pp_trow,
  output logic [PREC_W*TM-1:0]  tb_rd,
  input  wire [OL-1:0]          obw_we,
  input  wire [16*OL-1:0]       obw_data,
  input  wire [OB_AW*OL-1:0]    obw_row,
  // STORE
  input  wire [OB_AW*OL-1:0]    obr_row,
  output logic [16*OL-1:0]      ob_rd
);
  for (genvar b = 0; b < 2; b++) begin : g_bank
    wire ld_here = ld_bank == 1'(b);
    for (genvar n = 0; n < TN; n++) begin : g_ibuf
      wire [1:0] we = ld_here ? ibw_we[2 * n +: 2] : 2'b00;
      wire [1:0] we_b = ld_here ? ibw_we[2 * TN + 2 * n +: 2] : 2'b00;
      ram_tdp #(.W(16), .D(IB_D), .NB(2), .STYLE(IBUF_STYLE)) u_ram (
        .clk,
        .a_en(1'b1), .a_we(we), .a_addr(we != 0 ? ibw_row[IB_AW * n +: IB_AW] : cp_ib_a),
        .a_wdata(ibw_data[16 * n +: 16]), .a_rdata(ib_rd_a[16 * TN * b + 16 * n +: 16]),
        .b_en(1'b1), .b_we(we_b), .b_addr(we_b != 0 ? ibw_row[IB_AW * TN + IB_AW * n +: IB_AW] : cp_ib_b),
        .b_wdata(ibw_data[16 * TN + 16 * n +: 16]), .b_rdata(ib_rd_b[16 * TN * b + 16 * n +: 16]));
      if (PUMP == 2) begin : g_copy1
        ram_tdp #(.W(16), .D(IB_D), .NB(2), .STYLE(IBUF_STYLE)) u_ram1 (
          .clk,
          .a_en(1'b1), .a_we(we), .a_addr(we != 0 ? ibw_row[IB_AW * n +: IB_AW] : cp_ib_c),
          .a_wdata(ibw_data[16 * n +: 16]), .a_rdata(ib_rd_c[16 * TN * b + 16 * n +: 16]),
          .b_en(1'b1), .b_we(we_b), .b_addr(we_b != 0 ? ibw_row[IB_AW * TN + IB_AW * n +: IB_AW] : cp_ib_d),
          .b_wdata(ibw_data[16 * TN + 16 * n +: 16]), .b_rdata(ib_rd_d[16 * TN * b + 16 * n +: 16]));
      end else begin : g_one
        assign ib_rd_c[16 * TN * b + 16 * n +: 16] = '0;
        assign ib_rd_d[16 * TN * b + 16 * n +: 16] = '0;
      end
    end
    wire cw = cp_wr && cp_acc_bank == 1'(b);
    wire cw1 = cp_wr_b && cp_acc_bank == 1'(b);
    wire unused_cw1 = cw1;                              // (PUMP = 1: no copy 1)
    wire post_here = pp_acc_rd && pp_acc_bank == 1'(b);
    for (genvar m = 0; m < TM; m++) begin : g_acc
      ram_tdp #(.W(ACC_W), .D(ACC_WORDS), .NB(1), .STYLE(ACC_STYLE)) u_ram (
        .clk,
        .a_en(1'b1), .a_we(cw && cp_s3_two), .a_addr(cw && cp_s3_two ? cp_s3_aw0 : post_here ? pp_aw : cp_s2_aw0),
        .a_wdata(cp_wd0[ACC_W * m +: ACC_W]), .a_rdata(acc_rd_a[ACC_W * TM * b + ACC_W * m +: ACC_W]),
        .b_en(1'b1), .b_we(cw), .b_addr(cw ? (cp_s3_two ? cp_s3_aw1 : cp_s3_aw0) : cp_s2_aw1),
        .b_wdata(cp_s3_two ? cp_wd1[ACC_W * m +: ACC_W] : cp_wd0[ACC_W * m +: ACC_W]),
        .b_rdata(acc_rd_b[ACC_W * TM * b + ACC_W * m +: ACC_W]));
      if (PUMP == 2) begin : g_copy1
        ram_tdp #(.W(ACC_W), .D(ACC_WORDS), .NB(1), .STYLE(ACC_STYLE)) u_ram1 (
          .clk,
          .a_en(1'b1), .a_we(cw1 && cp_s3_two_b),
          .a_addr(cw1 && cp_s3_two_b ? cp_s3_aw2 : post_here ? pp_aw : cp_s2_aw2),
          .a_wdata(cp_wd2[ACC_W * m +: ACC_W]), .a_rdata(acc_rd_c[ACC_W * TM * b + ACC_W * m +: ACC_W]),
          .b_en(1'b1), .b_we(cw1), .b_addr(cw1 ? (cp_s3_two_b ? cp_s3_aw3 : cp_s3_aw2) : cp_s2_aw3),
          .b_wdata(cp_s3_two_b ? cp_wd3[ACC_W * m +: ACC_W] : cp_wd2[ACC_W * m +: ACC_W]),
          .b_rdata(acc_rd_d[ACC_W * TM * b + ACC_W * m +: ACC_W]));
      end else begin : g_one
        assign acc_rd_c[ACC_W * TM * b + ACC_W * m +: ACC_W] = '0;
        assign acc_rd_d[ACC_W * TM * b + ACC_W * m +: ACC_W] = '0;
      end
    end
  end
  // WBUF: both ping-pong banks in one memory per m (WB_ONE), the bank as the address's low bit ({row, bank}: 2 x
  // WB_D words, no padding), so COMPUTE's read word needs no bank multiplexer: the word of bank cp_wb_bank at
  // wb_rd[0 +: 16 WL]; else a memory per bank and m (bank b's word at wb_rd[16 WL b +: 16 WL]). LOAD writes port
  // A (bank ld_bank), COMPUTE reads port B.
  for (genvar m = 0; m < TM; m++) begin : g_wbuf
    /* verilator lint_off PINCONNECTEMPTY */
    if (WB_ONE) begin : g_one
      ram_tdp #(.W(16 * TN), .D(2 * WB_D), .NB(2 * TN), .STYLE(WBUF_STYLE)) u_ram (
        .clk,
        .a_en(1'b1), .a_we(wbw_we[2 * TN * m +: 2 * TN]), .a_addr({wbw_row, ld_bank}),
        .a_wdata(wbw_data[16 * TN * m +: 16 * TN]), .a_rdata(),
        .b_en(1'b1), .b_we('0), .b_addr({cp_wb_a, cp_wb_bank}), .b_wdata('0),
        .b_rdata(wb_rd[16 * TN * m +: 16 * TN]));
      assign wb_rd[16 * WL + 16 * TN * m +: 16 * TN] = '0;
    end else begin : g_two
      for (genvar b = 0; b < 2; b++) begin : g_bank
        ram_tdp #(.W(16 * TN), .D(WB_D), .NB(2 * TN), .STYLE(WBUF_STYLE)) u_ram (
          .clk,
          .a_en(1'b1), .a_we(ld_bank == 1'(b) ? wbw_we[2 * TN * m +: 2 * TN] : '0), .a_addr(wbw_row),
          .a_wdata(wbw_data[16 * TN * m +: 16 * TN]), .a_rdata(),
          .b_en(1'b1), .b_we('0), .b_addr(cp_wb_a), .b_wdata('0),
          .b_rdata(wb_rd[16 * WL * b + 16 * TN * m +: 16 * TN]));
      end
    end
    /* verilator lint_on PINCONNECTEMPTY */
  end
  wire unused_wb_bank = WB_ONE || cp_wb_bank;          // (two memories: the bank selects after the read)
  for (genvar l = 0; l < OL; l++) begin : g_obuf
    /* verilator lint_off PINCONNECTEMPTY */
    ram_tdp #(.W(16), .D(OB_D), .NB(1), .STYLE(OBUF_STYLE)) u_ram (
      .clk,
      .a_en(1'b1), .a_we(obw_we[l]), .a_addr(obw_row[OB_AW * l +: OB_AW]), .a_wdata(obw_data[16 * l +: 16]),
      .a_rdata(),
      .b_en(1'b1), .b_we(1'b0), .b_addr(obr_row[OB_AW * l +: OB_AW]), .b_wdata('0), .b_rdata(ob_rd[16 * l +: 16]));
    /* verilator lint_on PINCONNECTEMPTY */
  end
  for (genvar l = 0; l < TM; l++) begin : g_pbuf
    /* verilator lint_off PINCONNECTEMPTY */
    ram_tdp #(.W(PREC_W), .D(PB_D), .NB(PARAM_BYTES), .STYLE(PBUF_STYLE)) u_ram (
      .clk,
      .a_en(1'b1), .a_we(pbw_we[PARAM_BYTES * l +: PARAM_BYTES]), .a_addr(pbw_row[PW_AW * l +: PB_AW]),
      .a_wdata(pbw_data[PREC_W * l +: PREC_W]), .a_rdata(),
      .b_en(1'b1), .b_we('0), .b_addr(pp_prow), .b_wdata('0), .b_rdata(pb_rd[PREC_W * l +: PREC_W]));
    /* verilator lint_on PINCONNECTEMPTY */
  end
  for (genvar l = 0; l < TM; l++) begin : g_tbuf
    /* verilator lint_off PINCONNECTEMPTY */
    ram_tdp #(.W(PREC_W), .D(TB_D), .NB(PARAM_BYTES), .STYLE(TBUF_STYLE)) u_ram (
      .clk,
      .a_en(1'b1), .a_we(tbw_we[PARAM_BYTES * l +: PARAM_BYTES]), .a_addr(pbw_row[PW_AW * l +: TB_AW]),
      .a_wdata(pbw_data[PREC_W * l +: PREC_W]), .a_rdata(),
      .b_en(1'b1), .b_we('0), .b_addr(pp_trow[TB_AW * l +: TB_AW]), .b_wdata('0),
      .b_rdata(tb_rd[PREC_W * l +: PREC_W]));
    /* verilator lint_on PINCONNECTEMPTY */
  end
  wire unused_pump = &{1'b0, cp_ib_c, cp_ib_d, cp_wr_b, cp_s3_two_b, cp_s2_aw2, cp_s2_aw3, cp_s3_aw2, cp_s3_aw3,
                       cp_wd2, cp_wd3, 1'b0};           // (PUMP = 1: no copy 1)
endmodule
`default_nettype wire
