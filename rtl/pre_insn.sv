// PRE instruction of the LOAD module (generator/spec/isa.py FORMATS "PRE", host/pre.py): rtl/load.sv hands the
// queue head over (`go`, LD_PRE until `done`); this unit checks it against the per-frame registers (ctrl_regs:
// frame, frame_size .. pre_step_y, isa.PRE_REGISTERS) and runs rtl/pre.sv on it.
// A band of rows = 0 does nothing (no check). Checks (OUT_OF_RANGE, host.pre.pre_violation, the band, and the
// destination as LOAD / STORE check theirs): frame_w, frame_h, net_w, net_h in [1, 4096]; frame_pitch in
// [3 frame_w, 65535]; 1 <= pre_out_w <= net_w - pre_left and likewise rows; (frame_h - 1) pitch + 3 frame_w <=
// frame_size; y0 + rows <= net_h; pix_stride >= 3 elem_bytes; ddr_offset + (rows - 1) row_stride + (net_w - 1) pix_stride + 3 elem_bytes <=
// the base register's size (ddr_offset: the band's first row). The products are serial (rtl/seq_mul2.sv, two bits
// a cycle: 7 cycles; also the band's source-row accumulator sy0 = step_y max(y0 - top, 0) mod 2^32 and the row span
// (net_w - 1) pix_stride + 3 elem_bytes), the sums carry-select (accel_pkg addr_add), the compares registered.
// The band's first source row r_first (sy0 >> 20 clamped as rtl/pre.sv clamps its first placed row's iy; equal to
// host.pre.source_rows(g, y0, rows)[0]) and its address frame + r_first pitch (a 6-cycle serial product after
// sy0) start rtl/pre.sv's row walk there: 16 cycles from `go` to the start of rtl/pre.sv (generator/spec/timing.py
// PRE_FIXED counts them). A refused PRE issues nothing: `oob` and `done`.
// No ARITH_OVERFLOW here (the shift's range, as for POST: the golden simulator's check only).
// Run: rtl/pre.sv from frame row r_first (the frame register's address, absolute, + r_first pitch), to
// base[base_reg] + ddr_offset (the band's first row), rows row_stride,
// pixels pix_stride apart, swap = model_bgr XOR frame_bgr[0]; `done` after its last write response.
// AXI: PRE's reads go out on the LOAD module's read port (l_ in, merged out to rtl/axi_rd_arb.sv: the LOAD module
// runs one instruction at a time, so PRE and LOAD never have reads in flight together); its writes to
// rtl/axi_wr_arb.sv (shared with STORE).
// Legend: i_ the instruction, c_ checks (registered), s_ the sums of the extents, p_ rtl/pre.sv's side.
`default_nettype none
module pre_insn
  import accel_pkg::*;
(
  input  wire                   clk,
  input  wire                   rst_n,
  input  wire                   clr,
  input  wire                   go,             // take `ins` (the LOAD queue's head, a PRE)
  input  wire [INSN_BITS-1:0]   ins,
  output logic                  done,           // PRE finished (pulse)
  output logic                  oob,            // OUT_OF_RANGE (pulse, with done)
  input  wire [4*64-1:0]        base_addrs,
  input  wire [4*32-1:0]        ddr_sizes,
  input  wire [63:0]            frame_addr,
  input  wire [11*32-1:0]       pre_regs,       // frame_size .. pre_step_y (rtl/ctrl_regs.sv)
  // LOAD's read requests (l_) merged with PRE's onto the LOAD port of axi_rd_arb
  input  wire                   l_arvalid,
  input  wire [63:0]            l_araddr,
  input  wire [7:0]             l_arlen,
  output logic                  l_ar_ok,
  input  wire                   l_rready,
  output logic                  l_rvalid,
  output logic                  arvalid,
  output logic [63:0]           araddr,
  output logic [7:0]            arlen,
  input  wire                   ar_ok,
  output logic                  rready,
  input  wire                   rvalid,
  input  wire [AXI_DW-1:0]      rdata,
  input  wire                   rlast,
  // PRE's writes (to axi_wr_arb)
  output logic [AXI_AW-1:0]     awaddr,
  output logic [7:0]            awlen,
  output logic                  awvalid,
  input  wire                   awready,
  output logic [AXI_DW-1:0]     wdata,
  output logic [AXI_BYTES-1:0]  wstrb,
  output logic                  wlast,
  output logic                  wvalid,
  input  wire                   wready,
  input  wire                   bvalid
);
  localparam int MUL_CYC = 7;                                        // seq_mul2: ceil(13 / 2) cycles
  localparam int RF_CYC = 6;                                         // seq_mul2: ceil(12 / 2) cycles
  typedef enum logic [3:0] {P_IDLE, P_S1, P_MUL, P_A1, P_A2, P_A3, P_CMP, P_RF, P_GO, P_RUN} p_state_t;
  (* fsm_encoding = "none" *) p_state_t st;
  logic [INSN_BITS-1:0] i_ins;
  logic [3:0] cnt;
  wire [1:0]  i_base = i_ins[F_PRE_BASE_REG_LSB +: F_PRE_BASE_REG_W];
  wire [31:0] i_off = 32'(i_ins[F_PRE_DDR_OFFSET_LSB +: F_PRE_DDR_OFFSET_W]);
  wire [31:0] i_rs = 32'(i_ins[F_PRE_ROW_STRIDE_LSB +: F_PRE_ROW_STRIDE_W]);
  wire [7:0]  i_ps = 8'(i_ins[F_PRE_PIX_STRIDE_LSB +: F_PRE_PIX_STRIDE_W]);
  wire [12:0] i_nw = 13'(i_ins[F_PRE_NET_W_LSB +: F_PRE_NET_W_W]);
  wire [12:0] i_nh = 13'(i_ins[F_PRE_NET_H_LSB +: F_PRE_NET_H_W]);
  wire [15:0] i_mult = 16'(i_ins[F_PRE_MULT_LSB +: F_PRE_MULT_W]);
  wire [5:0]  i_shift = 6'(i_ins[F_PRE_SHIFT_LSB +: F_PRE_SHIFT_W]);
  wire [15:0] i_zp = 16'(i_ins[F_PRE_ZP_LSB +: F_PRE_ZP_W]);
  wire        i_mbgr = i_ins[F_PRE_MODEL_BGR_LSB];
  wire        i_p16 = 32'(i_ins[F_PRE_PREC_LSB +: F_PRE_PREC_W]) == PREC_INT16;
  wire [12:0] i_y0 = 13'(i_ins[F_PRE_Y0_LSB +: F_PRE_Y0_W]);
  wire [12:0] i_rows = 13'(i_ins[F_PRE_ROWS_LSB +: F_PRE_ROWS_W]);
  // the frame registers (isa.PRE_REGISTERS after frame)
  wire [31:0] r_size = pre_regs[0 +: 32], r_fw = pre_regs[32 +: 32], r_fh = pre_regs[64 +: 32];
  wire [31:0] r_pitch = pre_regs[96 +: 32], r_bgr = pre_regs[128 +: 32], r_ow = pre_regs[160 +: 32];
  wire [31:0] r_oh = pre_regs[192 +: 32], r_left = pre_regs[224 +: 32], r_top = pre_regs[256 +: 32];
  wire [31:0] r_sx = pre_regs[288 +: 32], r_sy = pre_regs[320 +: 32];

  // ---- checks: S1 registers the simple compares' operands and starts the products
  function automatic logic in_size(input logic [31:0] v);
    in_size = v != 0 && v <= 32'(PRE_MAX_FRAME);
  endfunction
  logic c_sizes, c_fits, c_pitch_hi, c_place, c_bad, c_band, c_ps;
  logic [13:0] c_yr;                                                  // y0 + rows
  logic [14:0] c_w3;                                                  // 3 frame_w
  logic [13:0] c_xe, c_ye;                                            // left + out_w, top + out_h
  logic [AXI_AW-1:0] c_dst;                                           // base + ddr_offset
  logic [31:0] c_dsize;
  logic [2:0] c_e;                                                    // bytes of a pixel
  logic [12:0] c_fh1, c_yf;                                           // frame_h - 1; the band's first placed row
  logic c_lf;                                                         // ... is the last placed row
  wire mul_go = st == P_S1;
  // row_stride x (rows - 1) by 16-bit halves (29-bit products: no carry chain over 30 bits), joined in A1;
  // (frame_h - 1) pitch < 2^29 always
  localparam int HB = AXI_AW - 16;                                    // bits of a high half's product kept
  logic [28:0] m_rs_lo, m_rs_hi, m_fb;
  logic [31:0] m_sy;
  logic [20:0] m_sp;
  logic [27:0] m_rf;                                                  // r_first pitch
  logic [AXI_AW-1:0] j_rs;                                            // the joined product
  logic j_big;                                                        // row_stride (rows - 1) >= 2^AXI_AW
  seq_mul2 #(.AW(16), .BW(13), .PW(29)) u_rs_lo (.clk, .load(mul_go), .a(i_rs[15:0]), .b(i_rows - 13'd1), .p(m_rs_lo));
  seq_mul2 #(.AW(16), .BW(13), .PW(29)) u_rs_hi (.clk, .load(mul_go), .a(i_rs[31:16]), .b(i_rows - 13'd1), .p(m_rs_hi));
  seq_mul2 #(.AW(32), .BW(13), .PW(32)) u_sy (                       // (mod 2^32, as the accumulator)
    .clk, .load(mul_go), .a(r_sy), .b(i_y0 > r_top[12:0] ? i_y0 - r_top[12:0] : 13'd0), .p(m_sy));
  seq_mul2 #(.AW(16), .BW(13), .PW(29)) u_fb (.clk, .load(mul_go), .a(r_pitch[15:0]), .b(r_fh[12:0] - 13'd1), .p(m_fb));
  seq_mul2 #(.AW(8), .BW(13), .PW(21)) u_sp (.clk, .load(mul_go), .a(i_ps), .b(i_nw - 13'd1), .p(m_sp));
  // the band's first source row r_first (as rtl/pre.sv clamps its first placed row's iy: frame_h - 1 past the
  // frame or on the last placed row) from sy0 in A1, its offset r_first pitch (< 2^28) serially from A1
  wire [12:0] rf = 13'(m_sy[31:20]) >= c_fh1 || c_lf ? c_fh1 : 13'(m_sy[31:20]);
  seq_mul2 #(.AW(16), .BW(12), .PW(28)) u_rf (.clk, .load(st == P_A1), .a(r_pitch[15:0]), .b(rf[11:0]), .p(m_rf));
  logic [12:0] s_rf;
  logic [AXI_AW-1:0] s_e1, s_e2, s_e3, s_f;
  logic s_ddr_oob, s_frame_oob;
  always_ff @(posedge clk) begin
    if (st == P_S1) begin
      c_sizes <= in_size(r_fw) && in_size(r_fh) && in_size(32'(i_nw)) && in_size(32'(i_nh));
      c_yr <= 14'(i_y0) + 14'(i_rows);                // (compared with nh in P_MUL: one carry chain each)
      c_ps <= i_ps >= (i_p16 ? 8'd6 : 8'd3);          // (+ a whole pixel)
      c_fits <= r_ow[31:13] == '0 && r_left[31:13] == '0 && r_oh[31:13] == '0 && r_top[31:13] == '0
                && r_ow != 0 && r_oh != 0;
      c_pitch_hi <= r_pitch[31:16] == '0;
      c_w3 <= {2'b00, r_fw[12:0]} + {1'b0, r_fw[12:0], 1'b0};
      c_xe <= 14'(r_left[12:0]) + 14'(r_ow[12:0]);
      c_ye <= 14'(r_top[12:0]) + 14'(r_oh[12:0]);
      c_dst <= addr_add(AXI_AW'(base_addrs[64 * i_base +: 64]), AXI_AW'(i_off));
      c_dsize <= ddr_sizes[32 * i_base +: 32];
      c_e <= i_p16 ? 3'd6 : 3'd3;
      c_fh1 <= r_fh[12:0] - 13'd1;
      c_yf <= i_y0 > r_top[12:0] ? i_y0 : r_top[12:0];
    end
    if (st == P_MUL) c_lf <= 14'(c_yf) + 14'd1 == c_ye;
    if (st == P_MUL) c_band <= c_yr <= 14'(i_nh) && c_ps;
    if (st == P_A1) s_rf <= rf;
    if (st == P_MUL) c_place <= c_fits && c_xe <= 14'(i_nw) && c_ye <= 14'(i_nh) && c_pitch_hi
                                && r_pitch[15:0] >= 16'(c_w3);
    // extents (after the products): A1 the joined products, A2 the partial sums, A3 the totals, CMP the compares
    if (st == P_A1) begin
      j_rs <= addr_add({m_rs_hi[HB-1:0], 16'd0}, AXI_AW'(m_rs_lo));
      j_big <= m_rs_hi[28:HB] != '0;
      s_e2 <= addr_add(AXI_AW'(m_sp), AXI_AW'(c_e));
      s_f <= addr_add(AXI_AW'(m_fb), AXI_AW'(c_w3));
    end
    if (st == P_A2) s_e1 <= addr_add(AXI_AW'(i_off), j_rs);
    if (st == P_A3) s_e3 <= addr_add(s_e1, s_e2);
    if (st == P_CMP) begin
      s_ddr_oob <= j_big || s_e3[AXI_AW-1:32] != '0 || s_e3[31:0] > c_dsize;
      s_frame_oob <= s_f[AXI_AW-1:32] != '0 || s_f[31:0] > r_size;
    end
  end
  assign c_bad = !c_sizes || !c_band || !c_place || s_ddr_oob || s_frame_oob;

  // ---- sequence
  logic p_start, p_done;
  always_ff @(posedge clk) begin
    p_start <= 1'b0;
    done <= 1'b0;
    oob <= 1'b0;
    if (!rst_n || clr) begin
      st <= P_IDLE;
    end else begin
      case (st)
        P_IDLE: if (go) begin
          i_ins <= ins;
          st <= P_S1;
        end
        P_S1: begin
          cnt <= '0;
          st <= P_MUL;
          if (i_rows == '0) begin                      // an empty band: nothing
            done <= 1'b1;
            st <= P_IDLE;
          end
        end
        P_MUL: begin                                   // the products final MUL_CYC cycles after their load
          cnt <= cnt + 4'd1;
          if (cnt == 4'(MUL_CYC - 1)) st <= P_A1;
        end
        P_A1: st <= P_A2;
        P_A2: st <= P_A3;
        P_A3: st <= P_CMP;
        P_CMP: begin
          cnt <= '0;
          st <= P_RF;
        end
        P_RF: begin                  // r_first pitch: final RF_CYC + 1 cycles after A1, the cycle rtl/pre.sv takes it
          cnt <= cnt + 4'd1;
          if (cnt == 4'(RF_CYC - 5)) st <= P_GO;
        end
        P_GO: begin
          if (c_bad) begin                             // refused: nothing issued
            oob <= 1'b1;
            done <= 1'b1;
            st <= P_IDLE;
          end else begin
            p_start <= 1'b1;
            st <= P_RUN;
          end
        end
        P_RUN: if (p_done) begin
          done <= 1'b1;
          st <= P_IDLE;
        end
        default: st <= P_IDLE;
      endcase
    end
  end

  // ---- the read port: LOAD's, or PRE's while it runs
  wire act = st == P_RUN;
  logic p_arvalid, p_rready;
  logic [AXI_AW-1:0] p_araddr;
  logic [7:0] p_arlen;
  assign arvalid = act ? p_arvalid : l_arvalid;
  assign araddr = act ? 64'(p_araddr) : l_araddr;
  assign arlen = act ? p_arlen : l_arlen;
  assign l_ar_ok = ar_ok && !act;
  assign rready = act ? p_rready : l_rready;
  assign l_rvalid = rvalid && !act;

  wire [AXI_AW-1:0] src0 = addr_add(frame_addr[AXI_AW-1:0], AXI_AW'(m_rf));    // frame row r_first
  /* verilator lint_off PINCONNECTEMPTY */
  pre #(.DW(AXI_DW)) u_pre (
    .clk, .rst_n, .start(p_start), .busy(), .done(p_done), .src_addr(src0), .src_row(s_rf),
    .src_pitch(r_pitch[15:0]), .frame_w(r_fw[12:0]), .frame_h(r_fh[12:0]), .net_w(i_nw),
    .out_w(r_ow[12:0]), .out_h(r_oh[12:0]), .left(r_left[12:0]), .top(r_top[12:0]), .step_x(r_sx), .step_y(r_sy),
    .y0(i_y0), .rows(i_rows), .sy0(m_sy),
    .mult(i_mult), .shift(i_shift), .zero_point(i_zp), .prec(i_p16), .swap(i_mbgr ^ r_bgr[0]), .dst_addr(c_dst),
    .dst_row(i_rs), .dst_pix(i_ps), .span_e(s_e2[20:0]),
    .m_axi_arid(), .m_axi_araddr(p_araddr), .m_axi_arlen(p_arlen), .m_axi_arsize(), .m_axi_arburst(),
    .m_axi_arlock(), .m_axi_arcache(), .m_axi_arprot(), .m_axi_arvalid(p_arvalid), .m_axi_arready(ar_ok && act),
    .m_axi_rid(1'b0), .m_axi_rdata(rdata), .m_axi_rresp(2'b00), .m_axi_rlast(rlast), .m_axi_rvalid(rvalid && act),
    .m_axi_rready(p_rready), .m_axi_awid(), .m_axi_awaddr(awaddr), .m_axi_awlen(awlen), .m_axi_awsize(),
    .m_axi_awburst(), .m_axi_awlock(), .m_axi_awcache(), .m_axi_awprot(), .m_axi_awvalid(awvalid),
    .m_axi_awready(awready), .m_axi_wdata(wdata), .m_axi_wstrb(wstrb), .m_axi_wlast(wlast), .m_axi_wvalid(wvalid),
    .m_axi_wready(wready), .m_axi_bid(1'b0), .m_axi_bresp(2'b00), .m_axi_bvalid(bvalid), .m_axi_bready());
  /* verilator lint_on PINCONNECTEMPTY */
  wire unused = &{1'b0, frame_addr[63:AXI_AW], r_bgr[31:1], r_fw[31:13], r_fh[31:13], 1'b0};
endmodule
`default_nettype wire
