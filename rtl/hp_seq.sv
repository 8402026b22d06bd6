`default_nettype none
// The order of the parts of the bursts in flight (axi_hp_split): entries {z0, z1, h0 - 1, h1 - 1} in, and for the
// head burst the port whose words come next (ph), whether the current beat is its part's last (part_last) and the
// burst's last (burst_last), all from registers: the head's counts are loaded into a down-counter with a
// registered last flag, the next entry is popped as the head's last beat is taken.
module hp_seq #(
  parameter int OUTST = 32
) (
  input  wire          clk,
  input  wire          rst_n,
  input  wire          wr,
  input  wire [17:0]   wdata,
  output logic         full,
  input  wire          take,            // a beat of the current part moved (only while valid)
  output logic         valid,
  output logic         ph,
  output logic         part_last,
  output logic         burst_last
);
  logic empty;
  logic [19:0] q;                       // an entry with "h0 = 1" and "h1 = 1" flags computed as it is written
  logic [$clog2(OUTST):0] count;
  logic hz1, h1z;                       // head: port 1 has no part; port 1's part has one beat
  logic [7:0] h1m1, left;
  assign burst_last = part_last && (ph || hz1);
  wire done = take && burst_last;
  wire load = !empty && (!valid || done);
  sync_fifo #(.W(20), .DEPTH(OUTST)) u_q (
    .clk, .rst_n, .clr(1'b0), .wr, .wdata({wdata[15:8] == 8'd0, wdata[7:0] == 8'd0, wdata}), .rd(load), .rdata(q),
    .empty, .full, .count);
  always_ff @(posedge clk) begin
    if (!rst_n) valid <= 1'b0;
    else if (load || done) valid <= load;
  end
  always_ff @(posedge clk) begin
    if (load) begin
      hz1 <= q[16];
      h1m1 <= q[7:0];
      h1z <= q[18];
      ph <= q[17];
      left <= q[17] ? q[7:0] : q[15:8];
      part_last <= q[17] ? q[18] : q[19];
    end else if (take) begin
      if (part_last) begin                       // port 0's part done: port 1's next
        ph <= 1'b1;
        left <= h1m1;
        part_last <= h1z;
      end else begin
        left <= left - 8'd1;
        part_last <= left == 8'd1;
      end
    end
  end
  wire unused = &{1'b0, count, 1'b0};
endmodule
`default_nettype wire
