// Synchronous FIFO (first-word fall-through): instruction queues of the fetch/dispatch unit, the burst splitter's
// data FIFOs. DISTRIBUTED = 1 binds the storage to LUTRAM (ram_style "distributed"): the splitter's 128-deep data
// FIFOs, which synthesis would otherwise put in 17 BRAM36 the buffers need (generator/estimate/rtl_model.py counts
// them as LUTRAM); 0 lets synthesis choose.
`default_nettype none
module sync_fifo #(
  parameter int W = 256,
  parameter int DEPTH = 8,
  parameter bit DISTRIBUTED = 1'b0
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
  logic [AW-1:0] wp, rp;
  logic nz;                                                           // (flags as registers next to count)
  assign empty = !nz;
  wire push = wr && !full, pull = rd && !empty;
  wire inc = push && !pull, dec = pull && !push;
  always_ff @(posedge clk) begin
    if (!rst_n || clr) begin
      wp <= '0;
      rp <= '0;
      count <= '0;
      nz <= 1'b0;
      full <= 1'b0;
    end else begin
      if (push) wp <= wp + 1'b1;
      if (pull) rp <= rp + 1'b1;
      // count + 1 and count - 1 side by side, selected AND-OR (as a mux of the two adders synthesis would share one
      // adder behind the mux, after rd)
      count <= ({(AW+1){inc}} & (count + 1'b1)) | ({(AW+1){dec}} & (count - 1'b1))
               | ({(AW+1){!inc && !dec}} & count);
      nz <= inc || (dec ? count != (AW+1)'(1) : nz);
      full <= inc ? count == (AW+1)'(DEPTH - 1) : dec ? 1'b0 : full;
    end
  end
  if (DISTRIBUTED) begin : g_lutram
    (* ram_style = "distributed" *) logic [W-1:0] mem [DEPTH];
    assign rdata = mem[rp];
    always_ff @(posedge clk) begin
      if (push) mem[wp] <= wdata;
    end
  end else begin : g_auto
    logic [W-1:0] mem [DEPTH];
    assign rdata = mem[rp];
    always_ff @(posedge clk) begin
      if (push) mem[wp] <= wdata;
    end
  end
endmodule
`default_nettype wire
