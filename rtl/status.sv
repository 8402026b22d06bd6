// Completion, error status and debug counters.
// err_bits: the status bits (accel_pkg ST_*) raised this cycle; `stop` (registered): an error was raised, no
// instruction starts afterwards. finish (registered): the run ends (every unit idle, no read in flight) after an error, after
// END with the queues empty, or when the fetch ran out of instructions. TOKENS_LEFT: the program ended normally with
// tokens in a FIFO. WATCHDOG: WATCHDOG_CYCLES cycles of a run without progress (no unit executing, no instruction
// fetched or dispatched, no read in flight): without progress no token can arrive, so it is a deadlock.
// Debug counters (not in the register map; the cocotb bench samples them for the per-layer cycle report).
`default_nettype none
module status
  import accel_pkg::*;
(
  input  wire          clk,
  input  wire          rst_n,
  input  wire          start_pulse,    // clears
  input  wire          run,
  // errors found by the units this cycle
  input  wire          illegal,
  input  wire          cfg_missing,
  input  wire          cfg_err_isa,
  input  wire          cfg_err_cfg,
  input  wire          out_of_range,
  input  wire          no_end,
  input  wire          tok_overflow,
  input  wire          tok_any,
  // unit states
  input  wire          fe_idle,
  input  wire          ld_idle,
  input  wire          cp_idle,
  input  wire          st_idle,
  input  wire          rd_busy,
  input  wire          insn_moved,
  input  wire          queues_empty,
  input  wire          fe_exhausted,
  input  wire          end_done,
  input  wire          cp_busy,
  input  wire          st_retire,
  output logic [31:0]  err_bits,
  output logic         stop,
  output logic         finish,
  output logic [31:0]  dbg_st_retired, // instructions the STORE module finished (POST, STORE, END)
  output logic [31:0]  dbg_ld_busy,    // cycles the LOAD module was executing an instruction
  output logic [31:0]  dbg_cp_busy     // cycles the PE array was computing
);
  wire clr = start_pulse;
  logic tokens_left, wd_fire;
  always_comb begin
    err_bits = '0;
    err_bits[ST_ILLEGAL_OPCODE] = illegal;
    err_bits[ST_CONFIG_MISSING] = cfg_missing;
    err_bits[ST_ISA_VERSION_MISMATCH] = cfg_err_isa;
    err_bits[ST_CONFIG_MISMATCH] = cfg_err_cfg;
    err_bits[ST_OUT_OF_RANGE] = out_of_range;
    err_bits[ST_NO_END] = no_end;
    err_bits[ST_TOKEN_OVERFLOW] = run && tok_overflow;
    err_bits[ST_TOKENS_LEFT] = tokens_left;
    err_bits[ST_WATCHDOG] = wd_fire;
  end
  always_ff @(posedge clk) begin
    if (!rst_n || clr) stop <= 1'b0;
    else if (err_bits != 0) stop <= 1'b1;
  end

  // finish and TOKENS_LEFT registered (one cycle after the condition; everything stays idle meanwhile)
  wire all_idle = ld_idle && cp_idle && st_idle && fe_idle && !rd_busy;
  wire finish_c = run && all_idle && (stop || (end_done && queues_empty) || (fe_exhausted && queues_empty));
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      finish <= 1'b0;
      tokens_left <= 1'b0;
    end else begin
      finish <= finish_c;
      tokens_left <= finish_c && !stop && end_done && queues_empty && tok_any;
    end
  end
  localparam int WDW = $clog2(WATCHDOG_CYCLES) + 1;
  logic [WDW-1:0] wd_cnt;                                             // idle cycles since the last progress
  logic wd_prog_q;                                                    // progress, registered (a cycle late, so
  wire wd_progress = !ld_idle || !cp_idle || !st_idle || !fe_idle || insn_moved || rd_busy;   // the count
  always_ff @(posedge clk) begin                                      // restarts at 1 and never fires with it)
    wd_prog_q <= wd_progress && rst_n && !clr;
    if (!rst_n || clr || !run || stop) wd_cnt <= '0;
    else if (wd_prog_q) wd_cnt <= WDW'(1);
    else wd_cnt <= wd_cnt + WDW'(1);
  end
  assign wd_fire = run && !stop && !wd_prog_q && wd_cnt == WDW'(WATCHDOG_CYCLES - 1);

  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      dbg_st_retired <= '0;
      dbg_ld_busy <= '0;
      dbg_cp_busy <= '0;
    end else begin
      dbg_st_retired <= dbg_st_retired + 32'(st_retire);
      dbg_ld_busy <= dbg_ld_busy + 32'(!ld_idle);
      dbg_cp_busy <= dbg_cp_busy + 32'(cp_busy);
    end
  end
endmodule
`default_nettype wire
