// accel_ram.v -- one on-chip buffer memory of the block design (vivado_bd.tcl adds it as a module reference; static,
// copied by generator/backends/hls/kernel.py). A simple-dual-port xpm_memory_sdpram of DEPTH x WIDTH bits on the PL
// clock, or with TDP = 1 a true-dual-port xpm_memory_tdpram (both ports read and write; UG974 XPM_MEMORY_TDPRAM):
//   BRAM_A  the memory's port A: the writer's memory port (Vitis HLS mode=bram: byte address, one write enable per
//           byte; TDP: also reads)
//   BRAM_B  the memory's port B: SDP the reader's; TDP a second read-write port (ACC: COMPUTE's PORTB; IBUF:
//           COMPUTE's PORTB, the second word of the int8 pixel pair)
//   BRAM_C  (SHARED_B = 1) a second IP on port B: ACC the post IP's read
//   BRAM_D  (SHARED_A = 1, TDP only) a second IP on port A: IBUF COMPUTE's PORTA read (LOAD writes port A)
// (a general mechanism: vivado_bd.tcl sets SHARED_A / SHARED_B / USE_B from the IP ports it finds)
// Sharing rule, per memory port (generator/spec/memories.py, the kernel's memory plan): a WRITE of the first IP
// (BRAM_A / BRAM_B with en and any we bit) always takes the port; otherwise the sharing IP (BRAM_D / BRAM_C, a
// reader: its WE / DIN are ignored) takes it when its enable is high, else the first IP (a read). The ping-pong tokens
// (l2c / c2l, c2s / s2c) keep the two IPs on different banks, so the only access that can lose is a speculative
// read of the sharing IP whose data it discards; no write enable is ever forced low because of a reader. Both IPs
// of a port see the port's read data one cycle later (douta = doutd, doutb = doutc).
// USE_B = 0: nothing is connected to port B (vivado_bd.tcl found no IP port for it): enb is held low.
// The HLS bram port addresses bytes; a word is 2**ADDR_LSB bytes apart (ADDR_LSB = ceil(log2(WIDTH / 8))).
// MEMORY_PRIMITIVE: "block", "ultra" or "distributed", as generator/spec/memories.py maps the buffer (a TDP memory
// is never "distributed": distributed RAM writes through port A only, UG974 XPM_MEMORY_DPDISTRAM).
`timescale 1ns / 1ps
module accel_ram #(
    parameter integer DEPTH = 1024,
    parameter integer WIDTH = 512,
    parameter integer ADDR_LSB = 6,
    parameter MEMORY_PRIMITIVE = "block",
    parameter integer SHARED_A = 0,
    parameter integer SHARED_B = 0,
    parameter integer USE_B = 1,
    parameter integer TDP = 0
) (
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_A CLK" *)
    (* X_INTERFACE_PARAMETER = "MASTER_TYPE BRAM_CTRL, MEM_ECC NONE, READ_LATENCY 1" *)
    input  wire                   clka,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_A RST" *)
    input  wire                   rsta,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_A EN" *)
    input  wire                   ena,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_A WE" *)
    input  wire [WIDTH/8-1:0]     wea,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_A ADDR" *)
    input  wire [31:0]            addra,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_A DIN" *)
    input  wire [WIDTH-1:0]       dina,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_A DOUT" *)
    output wire [WIDTH-1:0]       douta,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_B CLK" *)
    (* X_INTERFACE_PARAMETER = "MASTER_TYPE BRAM_CTRL, MEM_ECC NONE, READ_LATENCY 1" *)
    input  wire                   clkb,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_B RST" *)
    input  wire                   rstb,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_B EN" *)
    input  wire                   enb,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_B WE" *)
    input  wire [WIDTH/8-1:0]     web,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_B ADDR" *)
    input  wire [31:0]            addrb,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_B DIN" *)
    input  wire [WIDTH-1:0]       dinb,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_B DOUT" *)
    output wire [WIDTH-1:0]       doutb,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_C CLK" *)
    (* X_INTERFACE_PARAMETER = "MASTER_TYPE BRAM_CTRL, MEM_ECC NONE, READ_LATENCY 1" *)
    input  wire                   clkc,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_C RST" *)
    input  wire                   rstc,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_C EN" *)
    input  wire                   enc,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_C WE" *)
    input  wire [WIDTH/8-1:0]     wec,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_C ADDR" *)
    input  wire [31:0]            addrc,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_C DIN" *)
    input  wire [WIDTH-1:0]       dinc,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_C DOUT" *)
    output wire [WIDTH-1:0]       doutc,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_D CLK" *)
    (* X_INTERFACE_PARAMETER = "MASTER_TYPE BRAM_CTRL, MEM_ECC NONE, READ_LATENCY 1" *)
    input  wire                   clkd,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_D RST" *)
    input  wire                   rstd,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_D EN" *)
    input  wire                   en_d,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_D WE" *)
    input  wire [WIDTH/8-1:0]     wed,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_D ADDR" *)
    input  wire [31:0]            addrd,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_D DIN" *)
    input  wire [WIDTH-1:0]       dind,
    (* X_INTERFACE_INFO = "xilinx.com:interface:bram:1.0 BRAM_D DOUT" *)
    output wire [WIDTH-1:0]       doutd
);
    localparam integer AW = DEPTH <= 2 ? 1 : $clog2(DEPTH);
    localparam integer NB = WIDTH / 8;

    // ---- port A: BRAM_A, or BRAM_D (SHARED_A, TDP) when BRAM_A does not write and BRAM_D is enabled. The sharing
    // IP only reads (its WE and DIN are not used): the memory port takes its address and enable, never its data, so
    // a shared port costs an address multiplexer, not a data one.
    wire a_writes = ena && (|wea);
    wire use_d = TDP != 0 && SHARED_A != 0 && !a_writes && en_d;
    wire          pa_en = ena | use_d;
    wire [NB-1:0] pa_we = use_d ? {NB{1'b0}} : wea;      // (use_d: BRAM_A does not write anyway)
    wire [31:0]   pa_addr = use_d ? addrd : addra;
    wire [WIDTH-1:0] pa_dout;
    assign douta = pa_dout;
    assign doutd = pa_dout;

    // ---- port B: BRAM_B (USE_B), or BRAM_C (SHARED_B) when BRAM_B does not write (SDP: port B never writes) and
    // BRAM_C is enabled; BRAM_C only reads, as BRAM_D
    wire b_en = USE_B != 0 && enb;
    wire b_writes = TDP != 0 && b_en && (|web);
    wire use_c = SHARED_B != 0 && !b_writes && enc;
    wire          pb_en = b_en | use_c;
    wire [NB-1:0] pb_we = (use_c || USE_B == 0) ? {NB{1'b0}} : web;
    wire [31:0]   pb_addr = use_c ? addrc : addrb;
    wire [WIDTH-1:0] pb_dout;
    assign doutb = pb_dout;
    assign doutc = pb_dout;

    generate
        if (TDP != 0) begin : g_tdp
            xpm_memory_tdpram #(
                .ADDR_WIDTH_A(AW), .ADDR_WIDTH_B(AW), .BYTE_WRITE_WIDTH_A(8), .BYTE_WRITE_WIDTH_B(8),
                .CLOCKING_MODE("common_clock"), .MEMORY_PRIMITIVE(MEMORY_PRIMITIVE), .MEMORY_SIZE(DEPTH * WIDTH),
                .READ_DATA_WIDTH_A(WIDTH), .READ_DATA_WIDTH_B(WIDTH), .READ_LATENCY_A(1), .READ_LATENCY_B(1),
                .WRITE_DATA_WIDTH_A(WIDTH), .WRITE_DATA_WIDTH_B(WIDTH),
                .WRITE_MODE_A(MEMORY_PRIMITIVE == "ultra" ? "no_change" : "read_first"),
                .WRITE_MODE_B(MEMORY_PRIMITIVE == "ultra" ? "no_change" : "read_first")
            ) mem (
                .sleep(1'b0), .clka(clka), .rsta(1'b0), .ena(pa_en), .regcea(1'b1), .wea(pa_we),
                .addra(pa_addr[ADDR_LSB +: AW]), .dina(dina), .douta(pa_dout),
                .clkb(clka), .rstb(1'b0), .enb(pb_en), .regceb(1'b1), .web(pb_we),
                .addrb(pb_addr[ADDR_LSB +: AW]), .dinb(dinb), .doutb(pb_dout),
                .injectsbiterra(1'b0), .injectdbiterra(1'b0), .injectsbiterrb(1'b0), .injectdbiterrb(1'b0),
                .sbiterra(), .dbiterra(), .sbiterrb(), .dbiterrb()
            );
        end else begin : g_sdp
            assign pa_dout = {WIDTH{1'b0}};   // port A only writes
            xpm_memory_sdpram #(
                .ADDR_WIDTH_A(AW), .ADDR_WIDTH_B(AW), .BYTE_WRITE_WIDTH_A(8), .CLOCKING_MODE("common_clock"),
                .MEMORY_PRIMITIVE(MEMORY_PRIMITIVE), .MEMORY_SIZE(DEPTH * WIDTH), .READ_DATA_WIDTH_B(WIDTH),
                .READ_LATENCY_B(1), .WRITE_DATA_WIDTH_A(WIDTH),
                .WRITE_MODE_B(MEMORY_PRIMITIVE == "ultra" ? "no_change" : "read_first")
            ) mem (
                .sleep(1'b0), .clka(clka), .ena(pa_en), .wea(pa_we), .addra(pa_addr[ADDR_LSB +: AW]),
                .dina(dina), .injectsbiterra(1'b0), .injectdbiterra(1'b0),
                .clkb(clka), .rstb(1'b0), .enb(pb_en), .regceb(1'b1),
                .addrb(pb_addr[ADDR_LSB +: AW]), .doutb(pb_dout), .sbiterrb(), .dbiterrb()
            );
        end
    endgenerate
endmodule
