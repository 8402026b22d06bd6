// accel_ram.v -- one on-chip buffer memory of the block design (vivado_bd.tcl adds it as a module reference; static,
// copied by generator/hls.py). A simple-dual-port xpm_memory_sdpram of DEPTH x WIDTH bits on the PL clock, or with
// TDP = 1 a true-dual-port xpm_memory_tdpram (the accumulator banks: compute reads and writes on both ports):
//   BRAM_A  written by the producer IP's memory port (Vitis HLS mode=bram: byte address, one write enable per byte;
//           TDP: also read)
//   BRAM_B  read by the consumer IP's memory port (TDP: also written)
//   BRAM_C  (SHARED_B = 1) a second reader of port B: the accumulator banks, read by compute (accumulation) and by
//           store (POST); the c2s / s2c dependency tokens hand a bank from one to the other, so the two never read
//           the same memory in the same cycle; C's address is taken when its enable is high.
// The HLS bram port addresses bytes; a word is 2**ADDR_LSB bytes apart (ADDR_LSB = ceil(log2(WIDTH / 8))).
// MEMORY_PRIMITIVE: "block", "ultra" or "distributed", as generator/resources.py maps the buffer.
`timescale 1ns / 1ps
module accel_ram #(
    parameter integer DEPTH = 1024,
    parameter integer WIDTH = 512,
    parameter integer ADDR_LSB = 6,
    parameter MEMORY_PRIMITIVE = "block",
    parameter integer SHARED_B = 0,
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
    output wire [WIDTH-1:0]       doutc
);
    localparam integer AW = DEPTH <= 2 ? 1 : $clog2(DEPTH);
    wire use_c = SHARED_B != 0 && enc;
    wire [31:0] raddr = use_c ? addrc : addrb;
    wire [WIDTH-1:0] rdata;
    assign doutb = rdata;
    assign doutc = rdata;

    generate
        if (TDP != 0) begin : g_tdp
            // both ports read and write; C (a reader) shares port B: its enable selects its address, never a write
            xpm_memory_tdpram #(
                .ADDR_WIDTH_A(AW), .ADDR_WIDTH_B(AW), .BYTE_WRITE_WIDTH_A(8), .BYTE_WRITE_WIDTH_B(8),
                .CLOCKING_MODE("common_clock"), .MEMORY_PRIMITIVE(MEMORY_PRIMITIVE), .MEMORY_SIZE(DEPTH * WIDTH),
                .READ_DATA_WIDTH_A(WIDTH), .READ_DATA_WIDTH_B(WIDTH), .READ_LATENCY_A(1), .READ_LATENCY_B(1),
                .WRITE_DATA_WIDTH_A(WIDTH), .WRITE_DATA_WIDTH_B(WIDTH),
                .WRITE_MODE_A(MEMORY_PRIMITIVE == "ultra" ? "no_change" : "read_first"),
                .WRITE_MODE_B(MEMORY_PRIMITIVE == "ultra" ? "no_change" : "read_first")
            ) mem (
                .sleep(1'b0), .clka(clka), .rsta(1'b0), .ena(ena), .regcea(1'b1), .wea(wea),
                .addra(addra[ADDR_LSB +: AW]), .dina(dina), .douta(douta),
                .clkb(clka), .rstb(1'b0), .enb(enb | (SHARED_B != 0 && enc)), .regceb(1'b1),
                .web(use_c ? {(WIDTH/8){1'b0}} : web), .addrb(raddr[ADDR_LSB +: AW]), .dinb(dinb), .doutb(rdata),
                .injectsbiterra(1'b0), .injectdbiterra(1'b0), .injectsbiterrb(1'b0), .injectdbiterrb(1'b0),
                .sbiterra(), .dbiterra(), .sbiterrb(), .dbiterrb()
            );
        end else begin : g_sdp
            assign douta = {WIDTH{1'b0}};     // port A only writes
            xpm_memory_sdpram #(
                .ADDR_WIDTH_A(AW), .ADDR_WIDTH_B(AW), .BYTE_WRITE_WIDTH_A(8), .CLOCKING_MODE("common_clock"),
                .MEMORY_PRIMITIVE(MEMORY_PRIMITIVE), .MEMORY_SIZE(DEPTH * WIDTH), .READ_DATA_WIDTH_B(WIDTH),
                .READ_LATENCY_B(1), .WRITE_DATA_WIDTH_A(WIDTH),
                .WRITE_MODE_B(MEMORY_PRIMITIVE == "ultra" ? "no_change" : "read_first")
            ) mem (
                .sleep(1'b0), .clka(clka), .ena(ena), .wea(wea), .addra(addra[ADDR_LSB +: AW]), .dina(dina),
                .injectsbiterra(1'b0), .injectdbiterra(1'b0),
                .clkb(clka), .rstb(1'b0), .enb(enb | (SHARED_B != 0 && enc)), .regceb(1'b1),
                .addrb(raddr[ADDR_LSB +: AW]), .doutb(rdata), .sbiterrb(), .dbiterrb()
            );
        end
    endgenerate
endmodule
