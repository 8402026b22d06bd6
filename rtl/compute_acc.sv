// COMPUTE's accumulation tail for one ACC copy (rtl/compute.sv; two copies when the PE array is double-pumped,
// PUMP = 2: pixel pair A into ACC copy 0, pair B into copy 1, rtl/buffers.sv): the running sums of the output word
// of two pixels (s0: pixel x0 or the single pixel, s1: x1) over the steps of the word (at stage SR: `v` a step,
// `first` its word's first step), then the read-modify-write's combine with the ACC words read at SR (acc_rd_a for
// x0, acc_rd_b for x1, both banks; the bank `bank`): the step's sums registered at SR, the running sums and the
// ACC words at SR + 1, their sum (acc_init: the running sums alone) registered at SR + 2 as the write data wd0 /
// wd1, which rtl/buffers.sv writes at NS = SR + 3. 48-bit sums are carry-select adders of two halves (no carry
// chain over 32 bits).
`default_nettype none
module compute_acc
  import accel_pkg::*;
(
  input  wire                   clk,
  input  wire                   v,              // stage SR holds a step
  input  wire                   first,          // ... the first of its output word
  input  wire                   acc_init,       // the instruction's acc_init: ACC = sums, not ACC + sums
  input  wire                   bank,           // the instruction's ACC bank
  input  wire [TM*ACC_W-1:0]    s0,             // the step's sums of pixel x0 (the single pixel), stage SR
  input  wire [TM*ACC_W-1:0]    s1,             // ... of pixel x1
  input  wire [2*ACC_W*TM-1:0]  acc_rd_a,       // ACC words read at SR (ports A: x0, B: x1), both banks
  input  wire [2*ACC_W*TM-1:0]  acc_rd_b,
  output logic [TM*ACC_W-1:0]   wd0,            // ACC write data of x0 / x1 (registered at SR + 2)
  output logic [TM*ACC_W-1:0]   wd1
);
  function automatic logic [ACC_W-1:0] add_cs(input logic [ACC_W-1:0] a, input logic [ACC_W-1:0] b);
    // a + b as a carry-select adder: the low half, and the high half with carry-in 0 and 1, chosen by the low
    // half's carry (three carry chains of about ACC_W / 2 bits side by side)
    localparam int H = ACC_W / 2;
    logic [H:0] lo;
    logic [ACC_W-H-1:0] h0;
    /* verilator lint_off UNUSEDSIGNAL */
    logic [ACC_W-H:0] h1;                              // (2 a + 1) + (2 b + 1) = 2 (a + b + 1)
    /* verilator lint_on UNUSEDSIGNAL */
    lo = {1'b0, a[H-1:0]} + {1'b0, b[H-1:0]};
    h0 = a[ACC_W-1:H] + b[ACC_W-1:H];
    h1 = {a[ACC_W-1:H], 1'b1} + {b[ACC_W-1:H], 1'b1};
    add_cs = {lo[H] ? h1[ACC_W-H:1] : h0, lo[H-1:0]};
  endfunction
  // the step's sums registered first (s0_r / s1_r: rtl/compute.sv's operand selects end in this register), the
  // running sums a cycle later (first step: 0 + the sums, the select on the adder's operand), so the adder sees
  // registers only; the combine reads the running sums directly (their value after this step's update)
  logic [TM*ACC_W-1:0] s0_r, s1_r;
  logic v_r, first_r;
  always_ff @(posedge clk) begin
    s0_r <= s0;
    s1_r <= s1;
    v_r <= v;
    first_r <= first;
  end
  logic [ACC_W-1:0] run0 [TM];                         // running sums of the output word
  logic [ACC_W-1:0] run1 [TM];
  always_ff @(posedge clk) begin
    if (v_r) begin
      for (int m = 0; m < TM; m++) begin
        run0[m] <= add_cs(first_r ? '0 : run0[m], s0_r[ACC_W * m +: ACC_W]);
        run1[m] <= add_cs(first_r ? '0 : run1[m], s1_r[ACC_W * m +: ACC_W]);
      end
    end
  end
  logic [TM*ACC_W-1:0] acc_a, acc_b;
  always_ff @(posedge clk) begin
    acc_a <= bank ? acc_rd_a[ACC_W * TM +: ACC_W * TM] : acc_rd_a[0 +: ACC_W * TM];
    acc_b <= bank ? acc_rd_b[ACC_W * TM +: ACC_W * TM] : acc_rd_b[0 +: ACC_W * TM];
    for (int m = 0; m < TM; m++) begin
      wd0[ACC_W * m +: ACC_W] <= acc_init ? run0[m] : add_cs(run0[m], acc_a[ACC_W * m +: ACC_W]);
      wd1[ACC_W * m +: ACC_W] <= acc_init ? run1[m] : add_cs(run1[m], acc_b[ACC_W * m +: ACC_W]);
    end
  end
endmodule
`default_nettype wire
