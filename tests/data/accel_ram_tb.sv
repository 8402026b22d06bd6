// Testbench of hls_templates/bd/accel_ram.v (tests/backends/test_hls_block_design.py, under Verilator with the
// xpm stand-ins of this folder): the SDP shared read port, ACC's port B shared by the post IP's read, an IBUF
// lane memory's port A shared by COMPUTE's read; a write always wins a shared port.
module tb;
  localparam integer W = 48 * 4, LSB = 5, NB = W / 8;
  reg clk = 0;
  always #5 clk = ~clk;
  reg ok = 1;
  function [W-1:0] pat(input integer k); pat = {W/32{32'hA5000000 + k}}; endfunction
  // ---- sdp: SDP, port C shares the read port B (ultra)
  reg s_ena = 0, s_enb = 0, s_enc = 0;
  reg [NB-1:0] s_wea = 0;
  reg [31:0] s_addra = 0, s_addrb = 0, s_addrc = 0;
  reg [W-1:0] s_dina = 0;
  wire [W-1:0] s_douta, s_doutb, s_doutc, s_doutd;
  accel_ram #(.DEPTH(64), .WIDTH(W), .ADDR_LSB(LSB), .MEMORY_PRIMITIVE("ultra"), .SHARED_B(1)) sdp (
    .clka(clk), .rsta(1'b0), .ena(s_ena), .wea(s_wea), .addra(s_addra), .dina(s_dina), .douta(s_douta),
    .clkb(clk), .rstb(1'b0), .enb(s_enb), .web({NB{1'b0}}), .addrb(s_addrb), .dinb({W{1'b0}}), .doutb(s_doutb),
    .clkc(clk), .rstc(1'b0), .enc(s_enc), .wec({NB{1'b0}}), .addrc(s_addrc), .dinc({W{1'b0}}), .doutc(s_doutc),
    .clkd(clk), .rstd(1'b0), .en_d(1'b0), .wed({NB{1'b0}}), .addrd(32'd0), .dind({W{1'b0}}), .doutd(s_doutd));
  // ---- acc: TDP; A = compute PORTA, B = compute PORTB (reads + writes), C = post's read sharing port B
  reg c_ena = 0, c_enb = 0, c_enc = 0;
  reg [NB-1:0] c_wea = 0, c_web = 0;
  reg [31:0] c_addra = 0, c_addrb = 0, c_addrc = 0;
  reg [W-1:0] c_dina = 0, c_dinb = 0;
  wire [W-1:0] c_douta, c_doutb, c_doutc, c_doutd;
  accel_ram #(.DEPTH(64), .WIDTH(W), .ADDR_LSB(LSB), .MEMORY_PRIMITIVE("block"), .SHARED_B(1), .TDP(1)) acc (
    .clka(clk), .rsta(1'b0), .ena(c_ena), .wea(c_wea), .addra(c_addra), .dina(c_dina), .douta(c_douta),
    .clkb(clk), .rstb(1'b0), .enb(c_enb), .web(c_web), .addrb(c_addrb), .dinb(c_dinb), .doutb(c_doutb),
    .clkc(clk), .rstc(1'b0), .enc(c_enc), .wec({NB{1'b0}}), .addrc(c_addrc), .dinc({W{1'b0}}), .doutc(c_doutc),
    .clkd(clk), .rstd(1'b0), .en_d(1'b0), .wed({NB{1'b0}}), .addrd(32'd0), .dind({W{1'b0}}), .doutd(c_doutd));
  // ---- ibuf (one lane memory): TDP; A = load PORTA (writes), D = compute PORTA (reads) sharing port A; B = compute
  // PORTB (reads) alone
  reg i_ena = 0, i_enb = 0, i_end = 0;
  reg [NB-1:0] i_wea = 0;
  reg [31:0] i_addra = 0, i_addrb = 0, i_addrd = 0;
  reg [W-1:0] i_dina = 0;
  wire [W-1:0] i_douta, i_doutb, i_doutc, i_doutd;
  accel_ram #(.DEPTH(64), .WIDTH(W), .ADDR_LSB(LSB), .MEMORY_PRIMITIVE("ultra"), .SHARED_A(1), .SHARED_B(0),
              .TDP(1)) ibuf (
    .clka(clk), .rsta(1'b0), .ena(i_ena), .wea(i_wea), .addra(i_addra), .dina(i_dina), .douta(i_douta),
    .clkb(clk), .rstb(1'b0), .enb(i_enb), .web({NB{1'b0}}), .addrb(i_addrb), .dinb({W{1'b0}}), .doutb(i_doutb),
    .clkc(clk), .rstc(1'b0), .enc(1'b0), .wec({NB{1'b0}}), .addrc(32'd0), .dinc({W{1'b0}}), .doutc(i_doutc),
    .clkd(clk), .rstd(1'b0), .en_d(i_end), .wed({NB{1'b0}}), .addrd(i_addrd), .dind({W{1'b0}}), .doutd(i_doutd));
  integer k;
  initial begin
    // ---- sdp: port A writes words 0..7 (byte address k << LSB), then a partial write (byte enables) of word 3
    for (k = 0; k < 8; k = k + 1) begin
      @(negedge clk); s_ena = 1; s_wea = {NB{1'b1}}; s_addra = k << LSB; s_dina = pat(k);
    end
    @(negedge clk); s_wea = 1; s_addra = 3 << LSB; s_dina = {W{1'b1}};
    @(negedge clk); s_ena = 0; s_wea = 0;
    s_enb = 1; s_addrb = 5 << LSB;                   // port B reads word 5 (compute) ...
    @(negedge clk); s_enb = 0;
    if (s_doutb !== pat(5)) begin $display("FAIL sdp B %h", s_doutb); ok = 0; end
    s_enc = 1; s_addrc = 3 << LSB;                   // ... then port C (store) word 3 through the shared port
    @(negedge clk); s_enc = 0;
    if (s_doutc !== {{W/32-1{32'hA5000003}}, 32'hA50000FF}) begin $display("FAIL sdp C %h", s_doutc); ok = 0; end
    // ---- acc: compute writes words 0..7 on port A
    for (k = 0; k < 8; k = k + 1) begin
      @(negedge clk); c_ena = 1; c_wea = {NB{1'b1}}; c_addra = k << LSB; c_dina = pat(k);
    end
    // compute writes word 10 on port B while post's read (port C, word 3) is enabled: the write is kept
    @(negedge clk); c_ena = 0; c_wea = 0;
    c_enb = 1; c_web = {NB{1'b1}}; c_addrb = 10 << LSB; c_dinb = pat(10); c_enc = 1; c_addrc = 3 << LSB;
    // and a byte-masked write of word 4 on port B while post reads word 3 again
    @(negedge clk); c_web = 2; c_addrb = 4 << LSB; c_dinb = {W{1'b1}};
    @(negedge clk); c_enb = 0; c_web = 0; c_addrc = 10 << LSB;          // post alone: word 10
    @(negedge clk); c_enc = 0;
    if (c_doutc !== pat(10)) begin $display("FAIL acc write under a shared read %h", c_doutc); ok = 0; end
    c_ena = 1; c_addra = 4 << LSB;                                        // compute's port A: word 4
    @(negedge clk); c_ena = 0;
    if (c_douta !== (pat(4) | 16'hFF00)) begin
      $display("FAIL acc masked write under a shared read %h", c_douta); ok = 0; end
    // compute reads word 5 on port B while post reads word 3: post (the sharing reader) takes the port
    c_enb = 1; c_addrb = 5 << LSB; c_enc = 1; c_addrc = 3 << LSB;
    @(negedge clk); c_enb = 1; c_enc = 0;                                 // then compute alone: word 5
    if (c_doutc !== pat(3) || c_doutb !== pat(3)) begin $display("FAIL acc post read %h", c_doutc); ok = 0; end
    @(negedge clk); c_enb = 0;
    if (c_doutb !== pat(5)) begin $display("FAIL acc compute read %h", c_doutb); ok = 0; end
    // ---- ibuf: load writes words 0..3 on port A (one row a cycle)
    for (k = 0; k < 4; k = k + 1) begin
      @(negedge clk); i_ena = 1; i_wea = {NB{1'b1}}; i_addra = k << LSB; i_dina = pat(k);
    end
    // load writes word 8 while compute reads word 0 on port A (D) and word 1 on port B: the write is kept
    @(negedge clk); i_addra = 8 << LSB; i_dina = pat(8); i_end = 1; i_addrd = 0; i_enb = 1; i_addrb = 1 << LSB;
    @(negedge clk); i_wea = 1; i_addra = 2 << LSB; i_dina = {W{1'b1}};   // byte 0 of word 2, compute still reading
    if (i_doutb !== pat(1)) begin $display("FAIL ibuf port B read %h", i_doutb); ok = 0; end
    // load's port enabled without writing: compute's reads take port A (word 8) with port B (word 3), the pixel pair
    @(negedge clk); i_wea = 0; i_addrd = 8 << LSB; i_addrb = 3 << LSB;
    @(negedge clk); i_ena = 0; i_addrd = 2 << LSB; i_addrb = 8 << LSB;
    if (i_doutd !== pat(8) || i_doutb !== pat(3)) begin
      $display("FAIL ibuf write under a shared read / pair read %h %h", i_doutd, i_doutb); ok = 0; end
    @(negedge clk); i_end = 0; i_enb = 0;
    if (i_doutd !== (pat(2) | 8'hFF) || i_doutb !== pat(8)) begin
      $display("FAIL ibuf masked write under a shared read %h %h", i_doutd, i_doutb); ok = 0; end
    if (ok) $display("PASS");
    $finish;
  end
endmodule
