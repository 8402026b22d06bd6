// Synchronous FIFO (first-word fall-through): instruction queues of the fetch/dispatch unit.
`default_nettype none
module sync_fifo #(
  parameter int W = 256,
  parameter int DEPTH = 8
) (
  input  wire          clk,
  input  wire          rst_n,
  input  wire          clr,
  input  wire          wr,
  input  wire [W-1:0]  wdata,
  input  wire          rd,
  output logic [W-1:0] rdata,
  output logic         empty,
  output logic         full,
  output logic [$clog2(DEPTH):0] count
);
  localparam int AW = $clog2(DEPTH);
  logic [W-1:0] mem [DEPTH];
  logic [AW-1:0] wp, rp;
  assign rdata = mem[rp];
  assign empty = count == 0;
  assign full = count == (AW+1)'(DEPTH);
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      wp <= '0;
      rp <= '0;
      count <= '0;
    end else begin
      if (wr && !full) begin
        wp <= wp + 1'b1;
      end
      if (rd && !empty) begin
        rp <= rp + 1'b1;
      end
      count <= count + (AW+1)'(wr && !full) - (AW+1)'(rd && !empty);
    end
  end
  always_ff @(posedge clk) begin
    if (wr && !full) mem[wp] <= wdata;
  end
endmodule
`default_nettype wire
