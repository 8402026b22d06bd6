"""The accelerator's error status and token limits (part of the ISA, :mod:`generator.spec.isa`, which re-exports
every name here): the token FIFOs' depth, the RTL watchdog, the ``status`` register's bits and what each executor
does on an error."""
from __future__ import annotations

from host.registers import status_bit_names

#: every instruction's width (bits, bytes)
INSN_BITS = 256
INSN_BYTES = INSN_BITS // 8
#: depth of each of the four dependency-token FIFOs (tokens it holds). 512: an AXI4-Stream FIFO of the block design
#: (power-of-two depths 16..32768; 512 x 1 bit is one SRL/LUTRAM or BRAM18 FIFO) between the HLS kernel's
#: free-running modules, where 65535 (the RTL's former 16-bit counter) has no FIFO IP. Every executor implements
#: exactly this depth: the RTL keeps each FIFO as a counter of ``TOKEN_COUNT_BITS`` bits that refuses the push onto
#: a full one, the HLS kernel's token streams have this depth (C-simulation: bounded FIFOs of it), the golden
#: simulator checks every push against it, and the compiler (:func:`generator.codegen.program.check_tokens`) refuses a
#: program whose tokens in flight, counted in program order, would exceed it (its own programs hold at most 2).
TOKEN_QUEUE_DEPTH = 512
TOKEN_COUNT_BITS = TOKEN_QUEUE_DEPTH.bit_length()
#: RTL watchdog: cycles without progress (no module executing an instruction, no instruction fetched or
#: dispatched, no token moved) after which a run that has not finished stops with WATCHDOG. Without progress no
#: token can ever arrive, so this is a deadlock detector; the value only bounds how long the RTL takes to notice.
WATCHDOG_CYCLES = 1 << 12

#: Bits of the ``status`` register (0: the run succeeded). Bits 0-3 keep their numbers of ISA version 1.
#:
#: ====================== === ===========================================================================================
#: name                   bit condition
#: ====================== === ===========================================================================================
#: ILLEGAL_OPCODE         0   an instruction up to the first END has an opcode outside :data:`OPCODES`, non-zero bits
#:                            above its format, or a pop/push flag towards a module its module does not border
#:                            (LOAD-module instructions have no prev, STORE-module ones no next neighbour)
#: CONFIG_MISMATCH        1   CONFIG for another accelerator: Tn, Tm or config_id differ from the hardware's
#: ISA_VERSION_MISMATCH   2   CONFIG.isa_version != :data:`ISA_VERSION` (checked before CONFIG_MISMATCH)
#: OUT_OF_RANGE           3   a LOAD / STORE byte outside [0, size) of its base register (the ``*_size``
#:                            registers; the golden simulator without sizes: outside the DDR image), an on-chip
#:                            index outside IBUF / WBUF / PBUF / ACC / OBUF (LOAD.buf = 3 included), a COMPUTE
#:                            window wider than its tile (``(ow-1)*stride + kw > in_cols``), a bypass of more
#:                            channels than the ifmap lanes (emul: ``b_word*Tn + og*Tm > ig*Tn``); RTL only:
#:                            POST.pbuf_oc not a multiple of Tm
#: CONFIG_MISSING         4   the first instruction is not CONFIG (any instruction before CONFIG)
#: NO_END                 5   the program runs off its end: ``n_insns`` instructions (DDR fetch) or the whole ROM
#:                            without an END (an empty program included)
#: WATCHDOG               6   no module can make progress: every module waits for a token that can never come
#:                            (a pop without a matching push = token underflow, or a dependency cycle); the RTL
#:                            flags it after :data:`WATCHDOG_CYCLES` cycles without progress
#: TOKEN_OVERFLOW         7   a push onto a token FIFO that already holds :data:`TOKEN_QUEUE_DEPTH` tokens
#: TOKENS_LEFT            8   the program ended (END executed, every module idle) with tokens in a FIFO
#: PARTIAL_INSN           9   the program is not a whole number of :data:`INSN_BYTES`-byte instructions
#: ARITH_OVERFLOW         10  golden simulator and HLS kernel only: an accumulator leaves its acc_bits range, a
#:                            requantization shift outside [1, MAX_SHIFT] or pre_shift above MAX_SHIFT, or a
#:                            requantization operand (acc + bias) >> pre_shift outside REQUANT_OPERAND_BITS (the
#:                            compiler never emits any of these; the RTL does not check them)
#: ====================== === ===========================================================================================
#:
#: What each executor does on an error (see :class:`generator.exec.golden.SimError`):
#:
#: * every executor: the status bit is set, no instruction starts afterwards, ``ap_done`` (and the interrupt) is
#:   raised; instructions already executing finish (a STORE already writing completes its bursts), so DDR
#:   writes stop at the failing instruction. Only the first error is reported (the RTL ORs the bits of errors
#:   found in the same clock cycle).
#: * golden simulator (:mod:`generator.exec.golden`): PARTIAL_INSN, ILLEGAL_OPCODE, CONFIG_MISSING and NO_END are found
#:   before anything runs (the whole program is decoded first); the others when the instruction executes, in
#:   the time order of the three modules; TOKENS_LEFT after the last instruction. It raises SimError with
#:   ``status`` and ``insn``; ARITH_OVERFLOW too.
#: * HLS kernel: ILLEGAL_OPCODE, CONFIG_MISSING, NO_END and the CONFIG checks by the fetch block's pass over the
#:   program before it dispatches anything (nothing executes, no DDR write); the rest in the modules while running
#:   (each module's sticky error bits go onto an error wire that all modules read, so no instruction starts
#:   anywhere after an error), ARITH_OVERFLOW too; the fetch block ORs the modules' done reports into ``status``.
#:   TOKEN_OVERFLOW by the same pass, before anything runs: each token FIFO's pushes minus pops counted in program
#:   order up to END (as :func:`generator.codegen.program.check_tokens`), a push finding :data:`TOKEN_QUEUE_DEPTH`
#:   tokens is the error (the modules push with blocking writes only: the AXI4-Stream token ports take no
#:   ``full()``), so the kernel reports it where the golden simulator may first run (and write DDR for) the
#:   instructions before the overflowing push. The threaded C-simulation finds a deadlock exactly
#:   (WATCHDOG: every module thread blocked on a FIFO that cannot move) and checks TOKENS_LEFT after the run; the
#:   synthesized kernel has blocking token reads (a deadlock hangs it: the driver's timeout) and cannot look into
#:   the block design's token FIFOs at the end (no TOKENS_LEFT).
#: * RTL: errors as the instructions are dispatched / executed (instructions before the bad one run); on-chip and
#:   DDR range checks on values registered at decode, before any address is issued; WATCHDOG by the counter;
#:   no ARITH_OVERFLOW (accumulators wrap).
#: * PARTIAL_INSN: the ``n_insns`` register counts whole instructions, so the hardware never sees a partial one;
#:   the loaders refuse it with this bit without starting a run: the golden simulator's ``run(blob)``, the
#:   C-simulation (:func:`generator.exec.csim.run_csim`), the RTL bench (:meth:`generator.exec.rtl.RtlBuild.run`) and the
#:   PYNQ driver (``YoloAccelerator`` raises AcceleratorError when ``program.bin`` is not a whole number of
#:   instructions).
STATUS_BITS = {"ILLEGAL_OPCODE": 0, "CONFIG_MISMATCH": 1, "ISA_VERSION_MISMATCH": 2, "OUT_OF_RANGE": 3,
               "CONFIG_MISSING": 4, "NO_END": 5, "WATCHDOG": 6, "TOKEN_OVERFLOW": 7, "TOKENS_LEFT": 8,
               "PARTIAL_INSN": 9, "ARITH_OVERFLOW": 10}


def status_names(status: int) -> list[str]:
    """Names of the :data:`STATUS_BITS` set in a status word (unknown bits as ``bitN``)."""
    return status_bit_names(status, STATUS_BITS)


def status_of(name: str) -> int:
    """The status word with bit ``name`` of :data:`STATUS_BITS` set. Raises KeyError for an unknown name."""
    return 1 << STATUS_BITS[name]


#: the token-FIFO flags each module may use (the others name a neighbour the module does not have)
MODULE_FLAGS = {"load": ("pop_next", "push_next"), "compute": ("pop_prev", "pop_next", "push_prev", "push_next"),
                "store": ("pop_prev", "push_prev")}


def partial_insn_status(blob_len: int) -> int:
    """PARTIAL_INSN's status word if a program of ``blob_len`` bytes is not whole instructions, else 0."""
    return status_of("PARTIAL_INSN") if blob_len % INSN_BYTES else 0
