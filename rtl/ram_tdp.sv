// True-dual-port RAM with synchronous (registered) reads and write-enable granules: the form Yosys
// (memory_libmap) and Vivado infer as UltraScale+ block RAM (RAMB36E2 / RAMB18E2, UG573) or UltraRAM (URAM288).
// Each port reads or writes one word per cycle; in a cycle a port writes, its read data keeps its value
// (no-change mode, the only read-during-write mode of URAM288; the accelerator never uses it). The accelerator
// never lets both ports touch one address in one cycle.
// STYLE: 0 lets synthesis choose, 1 binds block RAM, 2 UltraRAM (the ram_style attribute). UltraRAM's port A
// write is seen new by a port B read of the same address in the same cycle (UG573), this description's old: the
// accelerator never lets that happen, so the UltraRAM memory carries no_rw_check (Yosys: collisions undefined),
// without which Yosys' memory_libmap finds no URAM288 mapping of a memory both of whose ports write.
`default_nettype none
module ram_tdp #(
  parameter int W = 16,                 // word width (bits)
  parameter int D = 1024,               // words
  parameter int NB = 1,                 // write-enable granules per word (W / NB bits each)
  parameter int STYLE = 0,
  parameter int AW = (D > 1) ? $clog2(D) : 1
) (
  input  wire            clk,
  input  wire            a_en,
  input  wire [NB-1:0]   a_we,
  input  wire [AW-1:0]   a_addr,
  input  wire [W-1:0]    a_wdata,
  output logic [W-1:0]   a_rdata,
  input  wire            b_en,
  input  wire [NB-1:0]   b_we,
  input  wire [AW-1:0]   b_addr,
  input  wire [W-1:0]    b_wdata,
  output logic [W-1:0]   b_rdata
);
  localparam int GW = W / NB;
`define RAM_TDP_BODY \
    always_ff @(posedge clk) begin \
      if (a_en) begin \
        for (int k = 0; k < NB; k++) if (a_we[k]) mem[a_addr][k * GW +: GW] <= a_wdata[k * GW +: GW]; \
        if (a_we == '0) a_rdata <= mem[a_addr]; \
      end \
    end \
    always_ff @(posedge clk) begin \
      if (b_en) begin \
        for (int k = 0; k < NB; k++) if (b_we[k]) mem[b_addr][k * GW +: GW] <= b_wdata[k * GW +: GW]; \
        if (b_we == '0) b_rdata <= mem[b_addr]; \
      end \
    end
  if (STYLE == 2) begin : g_ultra
    (* ram_style = "ultra", no_rw_check *) logic [W-1:0] mem [D];
    `RAM_TDP_BODY
  end else if (STYLE == 1) begin : g_block
    (* ram_style = "block" *) logic [W-1:0] mem [D];
    `RAM_TDP_BODY
  end else begin : g_auto
    logic [W-1:0] mem [D];
    `RAM_TDP_BODY
  end
`undef RAM_TDP_BODY
endmodule
`default_nettype wire
