// One PE of the array (rtl/pe_array.sv): one DSP48E2 (UG579) as a multiply-accumulate link of a cascade,
//   P <= A * B + (CASC ? PCIN : 0)
// with AREG / BREG input registers (1 or 2: the chain's skew uses the DSP's own second register), MREG = 1 and
// PREG = 1; PCOUT = P goes to the next link's PCIN over the dedicated cascade route (no fabric adder, no fabric
// register). A is signed DSP_A_W (27) bits, B signed DSP_B_W (18), the product signed 45 bits, P 48 bits.
// Latency: AREG (= BREG) + 2 clocks from A / B to P; a new operand pair every clock.
// Under synthesis (`SYNTHESIS`: Vivado, Yosys) this is the DSP48E2 primitive with those attributes: A port 30
// bits (A sign-extended, AMULTSEL = "A", no pre-adder), B port 18 bits, INMODE = 0 (the multiplier takes A2 / B2,
// the last input register), OPMODE W = 0, Z = PCIN (CASC) or 0, Y = X = M (the multiplier's two partial products),
// ALUMODE = 0 (Z + W + X + Y), clock enables 1, resets 0. Elsewhere (Verilator) the behavioural model below, the
// same register stages and arithmetic (UG579, "DSP48E2 Slice Functional Description"; tests/rtl/test_pe_array.py
// checks it through the array against numpy).
`default_nettype none
module pe_dsp
  import accel_pkg::*;
#(
  parameter int AREG = 1,
  parameter int BREG = 1,
  parameter bit CASC = 1'b0
) (
  input  wire                          clk,
  input  wire signed [DSP_A_W-1:0]     a,
  input  wire signed [DSP_B_W-1:0]     b,
  input  wire signed [47:0]            pcin,
  output wire signed [47:0]            p,
  output wire signed [47:0]            pcout
);
  if (AREG < 1 || AREG > 2 || BREG < 1 || BREG > 2) begin : g_bad_reg
    $error("pe_dsp: AREG and BREG must be 1 or 2 (DSP48E2 input registers)");
  end
`ifdef SYNTHESIS
  /* verilator lint_off PINCONNECTEMPTY */
  DSP48E2 #(
    .AMULTSEL("A"), .BMULTSEL("B"), .PREADDINSEL("A"), .USE_MULT("MULTIPLY"), .USE_SIMD("ONE48"),
    .USE_PATTERN_DETECT("NO_PATDET"), .A_INPUT("DIRECT"), .B_INPUT("DIRECT"),
    .AREG(AREG), .ACASCREG(AREG), .BREG(BREG), .BCASCREG(BREG), .MREG(1), .PREG(1),
    .ADREG(0), .DREG(0), .CREG(0), .INMODEREG(0), .OPMODEREG(0), .ALUMODEREG(0), .CARRYINREG(0),
    .CARRYINSELREG(0)
  ) u_dsp (
    .CLK(clk),
    .A(30'(a)), .B(b), .C(48'd0), .D(27'd0), .PCIN(pcin), .ACIN(30'd0), .BCIN(18'd0),
    .CARRYIN(1'b0), .CARRYCASCIN(1'b0), .MULTSIGNIN(1'b0), .CARRYINSEL(3'd0),
    .INMODE(5'd0), .ALUMODE(4'd0), .OPMODE({2'b00, CASC ? 3'b001 : 3'b000, 2'b01, 2'b01}),
    .CEA1(1'b1), .CEA2(1'b1), .CEB1(1'b1), .CEB2(1'b1), .CEM(1'b1), .CEP(1'b1), .CEAD(1'b0), .CED(1'b0),
    .CEC(1'b0), .CECARRYIN(1'b0), .CECTRL(1'b0), .CEINMODE(1'b0), .CEALUMODE(1'b0),
    .RSTA(1'b0), .RSTB(1'b0), .RSTC(1'b0), .RSTD(1'b0), .RSTM(1'b0), .RSTP(1'b0), .RSTCTRL(1'b0),
    .RSTINMODE(1'b0), .RSTALUMODE(1'b0), .RSTALLCARRYIN(1'b0),
    .P(p), .PCOUT(pcout),
    .ACOUT(), .BCOUT(), .CARRYCASCOUT(), .CARRYOUT(), .MULTSIGNOUT(), .OVERFLOW(), .PATTERNBDETECT(),
    .PATTERNDETECT(), .UNDERFLOW(), .XOROUT()
  );
  /* verilator lint_on PINCONNECTEMPTY */
`else
  logic signed [DSP_A_W-1:0] a_r [AREG];               // A1 (AREG = 2), A2
  logic signed [DSP_B_W-1:0] b_r [BREG];
  logic signed [DSP_A_W+DSP_B_W-1:0] m_r;               // MREG
  logic signed [47:0] p_r;                              // PREG
  always_ff @(posedge clk) begin
    a_r[0] <= a;
    b_r[0] <= b;
    for (int k = 1; k < AREG; k++) a_r[k] <= a_r[k - 1];
    for (int k = 1; k < BREG; k++) b_r[k] <= b_r[k - 1];
    m_r <= a_r[AREG - 1] * b_r[BREG - 1];
    p_r <= 48'(m_r) + (CASC ? pcin : 48'sd0);
  end
  assign p = p_r;
  assign pcout = p_r;
`endif
endmodule
`default_nettype wire
