// accel_kernel_base.h -- static (not rendered), the first part of accel_kernel.h: what every module uses
// (instruction fields, DDR buffer checks, PBUF record fields). Needs the rendered accel.h.
#ifndef ACCEL_KERNEL_BASE_H
#define ACCEL_KERNEL_BASE_H

#include "accel.h"
#include "insn_rom.h"
#if !defined(ACCEL_SYNTH) && defined(ACCEL_CSIM_SLOW_POST_US)
#include <chrono>
#include <thread>
#endif

typedef long long i64;

// ------------------------------------------------------------------------------------------ instruction fields
template <int LO, int W>
static inline ap_uint<W> fld(const insn_t &x) {
    return x.range(LO + W - 1, LO);
}
#define F(x, OP, NAME) ((i64)fld<ISA_##OP##_##NAME##_LO, ISA_##OP##_##NAME##_W>(x).to_uint64())
#define FH(x, NAME) F(x, NOP, NAME)  // header fields sit at the same bits in every format

static inline int opcode_of(const insn_t &x) { return (int)FH(x, OPCODE); }

// ------------------------------------------------------------------------------------------ DDR access
// a LOAD / STORE touching bytes [off, end) of base register sel: inside its buffer?
static inline bool ddr_in_range(const run_t &r, int sel, i64 end) { return end <= (i64)r.size[sel].to_uint64(); }

static inline i64 ddr_base(const run_t &r, int sel) { return (i64)r.base[sel].to_uint64(); }

#define PARAM_FIELD(rec, NAME) \
    (rec).range(PARAM_##NAME##_OFFSET * 8 + PARAM_##NAME##_BYTES * 8 - 1, PARAM_##NAME##_OFFSET * 8)

#endif  // ACCEL_KERNEL_BASE_H
