// AXI-Lite control registers: the Vitis HLS ap_ctrl_hs register map of generator/spec/isa.py REGISTERS (offsets in
// accel_pkg REG_*), run control, status and the cycle counter.
//   CTRL: ap_start (set by a write while idle, cleared when accepted), ap_done / ap_ready (set at the end of a run,
//   cleared on read), ap_idle, auto_restart (stored only). GIE / IER / ISR: interrupt enable and status (ISR bits
//   toggle on write); `interrupt` = GIE && (ISR & IER). STATUS / HW_INFO / CONFIG_ID / CYCLES are read-only; every
//   other word is a plain read/write register (base addresses, sizes, n_insns, fetch_ddr, PRE's frame registers).
// start_pulse: one cycle after the accepted start (it clears the units); run: from start_pulse until finish.
// status: OR of err_bits while running and not yet stopped (the first error's bits only).
`default_nettype none
module ctrl_regs
  import accel_pkg::*;
(
  input  wire                   clk,
  input  wire                   rst_n,
  input  wire [AXIL_AW-1:0]     s_axil_awaddr,
  input  wire                   s_axil_awvalid,
  output logic                  s_axil_awready,
  input  wire [31:0]            s_axil_wdata,
  input  wire                   s_axil_wvalid,
  output logic                  s_axil_wready,
  output logic [1:0]            s_axil_bresp,
  output logic                  s_axil_bvalid,
  input  wire                   s_axil_bready,
  input  wire [AXIL_AW-1:0]     s_axil_araddr,
  input  wire                   s_axil_arvalid,
  output logic                  s_axil_arready,
  output logic [31:0]           s_axil_rdata,
  output logic [1:0]            s_axil_rresp,
  output logic                  s_axil_rvalid,
  input  wire                   s_axil_rready,
  output logic                  irq,
  input  wire [31:0]            err_bits,       // status bits raised this cycle
  input  wire                   stop,           // an error stopped the run
  input  wire                   finish,         // the run ends this cycle
  output logic                  start_pulse,
  output logic                  run,
  output logic [4*64-1:0]       base_addrs,     // base register k at [64*k +: 64]
  output logic [4*32-1:0]       ddr_sizes,      // bytes of base register k's buffer at [32*k +: 32]
  output logic [63:0]           insns_addr,
  output logic [31:0]           n_insns,
  output logic                  fetch_ddr,
  output logic [63:0]           frame_addr,     // PRE's frame registers (isa.PRE_REGISTERS): frame, and from
  output logic [11*32-1:0]      pre_regs,       // frame_size on, register k at [32*k +: 32] in that order
  output logic [31:0]           status_r,
  output logic [31:0]           cycles_r
);
  localparam int REGW_N = 2 ** (AXIL_AW - 2);
  logic [31:0] regw [REGW_N];
  logic ap_start_r, ap_done_r, ap_idle_r, ap_ready_r, auto_restart_r, gie;
  logic [1:0] ier, isr;

  wire wr_en = s_axil_awvalid && s_axil_wvalid && !s_axil_bvalid;
  assign s_axil_awready = wr_en;
  assign s_axil_wready = wr_en;
  assign s_axil_bresp = 2'b00;
  assign s_axil_rresp = 2'b00;
  logic rd_q, rd2_q;                                                  // a read address taken; decoded
  logic [AXIL_AW-1:0] ra_q;
  logic [7:0] rsel;                                                   // CTRL, GIE, IER, ISR, STATUS, HW_INFO,
  logic [31:0] rw_q;                                                  // CONFIG_ID, CYCLES; else the file word
  localparam int RGB = 3;                                             // 2^RGB file words per read group
  logic [31:0] rgrp [2**RGB];                                         // the group of the read address's word
  assign s_axil_arready = !s_axil_rvalid && !rd_q && !rd2_q;
  assign irq = gie && |(isr & ier);
  wire [31:0] wa = 32'(s_axil_awaddr);
  wire [31:0] ra = 32'(ra_q);
  wire [AXIL_AW-3:0] widx = s_axil_awaddr[AXIL_AW-1:2];

  assign base_addrs = {regw[REG_BASE3 / 4 + 1], regw[REG_BASE3 / 4], regw[REG_BASE2 / 4 + 1], regw[REG_BASE2 / 4],
                       regw[REG_BASE1 / 4 + 1], regw[REG_BASE1 / 4], regw[REG_BASE0 / 4 + 1], regw[REG_BASE0 / 4]};
  assign ddr_sizes = {regw[REG_SIZE3 / 4], regw[REG_SIZE2 / 4], regw[REG_SIZE1 / 4], regw[REG_SIZE0 / 4]};
  assign insns_addr = {regw[REG_INSNS / 4 + 1], regw[REG_INSNS / 4]};
  assign n_insns = regw[REG_N_INSNS / 4];
  assign fetch_ddr = regw[REG_FETCH_DDR / 4][0];
  assign frame_addr = {regw[REG_FRAME / 4 + 1], regw[REG_FRAME / 4]};
  assign pre_regs = {regw[REG_PRE_STEP_Y / 4], regw[REG_PRE_STEP_X / 4], regw[REG_PRE_TOP / 4], regw[REG_PRE_LEFT / 4],
                     regw[REG_PRE_OUT_H / 4], regw[REG_PRE_OUT_W / 4], regw[REG_FRAME_BGR / 4],
                     regw[REG_FRAME_PITCH / 4], regw[REG_FRAME_H / 4], regw[REG_FRAME_W / 4], regw[REG_FRAME_SIZE / 4]};

  logic [31:0] ctrl_word;
  always_comb begin
    ctrl_word = '0;
    ctrl_word[CTRL_AP_START] = ap_start_r;
    ctrl_word[CTRL_AP_DONE] = ap_done_r;
    ctrl_word[CTRL_AP_IDLE] = ap_idle_r;
    ctrl_word[CTRL_AP_READY] = ap_ready_r;
    ctrl_word[CTRL_AUTO_RESTART] = auto_restart_r;
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      ap_start_r <= 1'b0;
      ap_done_r <= 1'b0;
      ap_idle_r <= 1'b1;
      ap_ready_r <= 1'b0;
      auto_restart_r <= 1'b0;
      gie <= 1'b0;
      ier <= '0;
      isr <= '0;
      s_axil_bvalid <= 1'b0;
      s_axil_rvalid <= 1'b0;
      s_axil_rdata <= '0;
      rd_q <= 1'b0;
      rd2_q <= 1'b0;
      ra_q <= '0;
      rsel <= '0;
      rw_q <= '0;
      start_pulse <= 1'b0;
      run <= 1'b0;
      status_r <= '0;
      cycles_r <= '0;
      for (int k = 0; k < REGW_N; k++) regw[k] <= '0;
    end else begin
      logic [1:0] isr_n;
      isr_n = isr;
      start_pulse <= 1'b0;
      if (start_pulse) ap_start_r <= 1'b0;      // accepted
      // ---- writes
      if (s_axil_bvalid && s_axil_bready) s_axil_bvalid <= 1'b0;
      if (wr_en) begin
        s_axil_bvalid <= 1'b1;
        case (wa)
          REG_CTRL: begin
            auto_restart_r <= s_axil_wdata[CTRL_AUTO_RESTART];
            if (s_axil_wdata[CTRL_AP_START] && ap_idle_r && !run) begin
              ap_start_r <= 1'b1;
              ap_idle_r <= 1'b0;
              ap_done_r <= 1'b0;
              ap_ready_r <= 1'b0;
              start_pulse <= 1'b1;
            end
          end
          REG_GIE: gie <= s_axil_wdata[0];
          REG_IER: ier <= s_axil_wdata[1:0];
          REG_ISR: isr_n = isr_n ^ s_axil_wdata[1:0];
          REG_STATUS, REG_HW_INFO, REG_CONFIG_ID, REG_CYCLES: ;
          default: regw[widx] <= s_axil_wdata;
        endcase
      end
      // ---- reads: the address registered; next cycle the register decoded (one-hot) and the register file word
      // selected; the cycle after, the data and rvalid
      if (s_axil_rvalid && s_axil_rready) s_axil_rvalid <= 1'b0;
      if (s_axil_arvalid && s_axil_arready) begin   // the word's group of 8 now, the word next cycle: two
        rd_q <= 1'b1;                                  // 8:1 selects instead of one REGW_N:1
        ra_q <= s_axil_araddr;
        for (int j = 0; j < 2**RGB; j++) rgrp[j] <= regw[{s_axil_araddr[AXIL_AW-1:2+RGB], RGB'(j)}];
      end
      rd2_q <= rd_q;
      if (rd_q) begin
        rd_q <= 1'b0;
        rsel <= {ra == REG_CTRL, ra == REG_GIE, ra == REG_IER, ra == REG_ISR, ra == REG_STATUS, ra == REG_HW_INFO,
                 ra == REG_CONFIG_ID, ra == REG_CYCLES};
        rw_q <= rgrp[ra_q[2 +: RGB]];
      end
      if (rd2_q) begin
        s_axil_rvalid <= 1'b1;
        s_axil_rdata <= ({32{rsel[7]}} & ctrl_word) | ({32{rsel[6]}} & {31'b0, gie})
                        | ({32{rsel[5]}} & {30'b0, ier}) | ({32{rsel[4]}} & {30'b0, isr})
                        | ({32{rsel[3]}} & status_r) | ({32{rsel[2]}} & HW_INFO) | ({32{rsel[1]}} & CONFIG_ID)
                        | ({32{rsel[0]}} & cycles_r) | ({32{rsel == '0}} & rw_q);
        if (rsel[7]) begin                      // clear on read
          ap_done_r <= 1'b0;
          ap_ready_r <= 1'b0;
        end
      end
      // ---- run control
      if (start_pulse) begin
        run <= 1'b1;
        status_r <= '0;
        cycles_r <= '0;
      end else if (run) begin
        cycles_r <= cycles_r + 32'd1;
        if (!stop) status_r <= status_r | err_bits;     // the first error's bit(s) only
        if (finish) begin
          run <= 1'b0;
          ap_done_r <= 1'b1;
          ap_idle_r <= 1'b1;
          ap_ready_r <= 1'b1;
          if (ier[0]) isr_n[0] = 1'b1;
        end
      end
      isr <= isr_n;
    end
  end
endmodule
`default_nettype wire
