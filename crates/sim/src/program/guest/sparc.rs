//! SPARC V9 instructions as the machine needs them, from the SPARC Architecture
//! Manual Version 9 (SPARC International, 1994): the formats of §6.2 and Appendix E's
//! opcode maps. Branches and calls have a delay slot (§6.3.4); loads and stores need
//! no decoding, as QEMU reports each access as it happens.

use super::Class;
use crate::program::{FpOp, Op};

/// %o7 and %i7, the registers a call leaves its return address in (§6.3.4.4, the
/// caller's and callee's views).
const O7: u32 = 15;
const I7: u32 = 31;

fn field(word: u32, hi: u32, lo: u32) -> u32 {
    (word >> lo) & ((1 << (hi - lo + 1)) - 1)
}

fn signed(value: u32, bits: u32) -> i64 {
    let shift = 32 - bits;
    i64::from(((value << shift) as i32) >> shift)
}

/// The class of the instruction at `ip` whose bytes (big-endian) are `bytes`.
pub fn decode(ip: u64, bytes: &[u8]) -> Class {
    let [a, b, c, d] = *bytes else { return Class::Plain(Op::Int) };
    let w = u32::from_be_bytes([a, b, c, d]);
    let relative = |disp: i64| ip.wrapping_add_signed(disp << 2);
    match field(w, 31, 30) {
        // CALL: disp30 (A.8).
        1 => Class::Call,
        0 => {
            let target = match field(w, 24, 22) {
                // BPcc, FBPfcc: disp19 (A.7, A.5).
                1 | 5 => relative(signed(field(w, 18, 0), 19)),
                // Bicc, FBfcc: disp22 (A.6, A.4).
                2 | 6 => relative(signed(field(w, 21, 0), 22)),
                // BPr: d16hi:d16lo (A.3); its rcond 000 and 100 are reserved.
                3 => relative(signed(field(w, 21, 20) << 14 | field(w, 13, 0), 16)),
                // SETHI (NOP is SETHI 0, %g0) and ILLTRAP.
                _ => return Class::Plain(Op::Int),
            };
            Class::Branch { target }
        }
        2 => format3(w),
        _ => Class::Memory { fp: matches!(field(w, 24, 19), 0x20..=0x23 | 0x30..=0x33) },
    }
}

/// Whether the instruction whose bytes are `bytes` may trap to have its register
/// window spilled or filled (SAVE, RESTORE, RETURN: §6.4; FLUSHW, A.21), which QEMU's
/// user mode does for the program and then runs the instruction again from its start.
pub fn restarts(bytes: &[u8]) -> bool {
    let [a, b, c, d] = *bytes else { return false };
    let w = u32::from_be_bytes([a, b, c, d]);
    field(w, 31, 30) == 2 && matches!(field(w, 24, 19), 0x3c | 0x3d | 0x39 | 0x2b)
}

/// op = 2: arithmetic, control transfer by register, traps, state registers, FPops.
fn format3(w: u32) -> Class {
    let (rd, rs1, imm) = (field(w, 29, 25), field(w, 18, 14), field(w, 13, 13) == 1);
    match field(w, 24, 19) {
        // JMPL (A.30): `ret` and `retl` are jmpl %i7+8 and %o7+8 into %g0; one that
        // links into %o7 calls.
        0x38 => match (rd, rs1, imm, field(w, 12, 0)) {
            (0, I7 | O7, true, 8) => Class::Return,
            (O7, ..) => Class::Call,
            _ => Class::Jump,
        },
        // RETURN (A.46).
        0x39 => Class::Return,
        // Tcc (A.61): Linux's system calls are `ta 0x10` (32-bit) and `ta 0x6d`.
        0x3a => Class::Plain(Op::Syscall),
        // FLUSH (A.20).
        0x3b => Class::Plain(Op::Int),
        // FPop1 (A.12-A.18): divides and square roots by opf.
        0x34 => Class::Plain(Op::Fp(match field(w, 13, 5) {
            0x04d..=0x04f => FpOp::Div,
            0x029..=0x02b => FpOp::Sqrt,
            0x049..=0x04b | 0x069 | 0x06e => FpOp::Mul,
            0x041..=0x047 => FpOp::Add,
            _ => FpOp::Convert,
        })),
        // FPop2: compares and conditional moves.
        0x35 => Class::Plain(Op::Fp(FpOp::Convert)),
        // RDASR with rs1 = 15 and rd = 0 is MEMBAR (i = 1) or STBAR (A.32, A.51).
        0x28 if rs1 == 15 && rd == 0 => Class::Plain(Op::Barrier),
        // RDASR/RDY, RDPR, FLUSHW, WRASR/WRY, SAVED/RESTORED, WRPR, DONE/RETRY.
        0x28 | 0x2a | 0x2b | 0x30 | 0x31 | 0x32 | 0x3e => Class::Plain(Op::SpecialReg),
        _ => Class::Plain(Op::Int),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(ip: u64, word: u32) -> Class {
        decode(ip, &word.to_be_bytes())
    }

    /// Encodings as GNU as writes them (sparc64-linux-gnu-as 2.40, -Av9).
    #[test]
    fn control_flow() {
        // call . + 0x40; ba,a . + 8; bne,pn %icc, . - 16; brz %o0, . + 0x20; fbl . + 12
        assert_eq!(s(0x1000, 0x4000_0010), Class::Call);
        assert_eq!(s(0x1000, 0x3080_0002), Class::Branch { target: 0x1008 });
        assert_eq!(s(0x1000, 0x1247_fffc), Class::Branch { target: 0x0ff0 });
        assert_eq!(s(0x1000, 0x02ca_0008), Class::Branch { target: 0x1020 });
        assert_eq!(s(0x1000, 0x0980_0003), Class::Branch { target: 0x100c });
        // ret; retl; jmpl %g1, %o7 (call %g1); jmp %g1; return %i7+8; ta 0x6d
        assert_eq!(s(0, 0x81c7_e008), Class::Return);
        assert_eq!(s(0, 0x81c3_e008), Class::Return);
        assert_eq!(s(0, 0x9fc0_4000), Class::Call);
        assert_eq!(s(0, 0x81c0_4000), Class::Jump);
        assert_eq!(s(0, 0x81cf_e008), Class::Return);
        assert_eq!(s(0, 0x91d0_206d), Class::Plain(Op::Syscall));
    }

    #[test]
    fn memory_fp_and_system() {
        // ldx [%o0], %o1; stb %g1, [%o2]; casx [%o0], %o1, %o2; ldstub [%o0], %g1
        for w in [0xd25a_0000, 0xc22a_8000, 0xd5f2_1009, 0xc26a_0000] {
            assert_eq!(s(0, w), Class::Memory { fp: false }, "{w:#x}");
        }
        // ldd [%o0], %f0; std %f0, [%o0]
        assert_eq!(s(0, 0xc11a_0000), Class::Memory { fp: true });
        assert_eq!(s(0, 0xc13a_0000), Class::Memory { fp: false });
        // faddd; fmuld; fdivd; fsqrtd; fcmpd
        assert_eq!(s(0, 0x81a0_0842), Class::Plain(Op::Fp(FpOp::Add)));
        assert_eq!(s(0, 0x81a0_0942), Class::Plain(Op::Fp(FpOp::Mul)));
        assert_eq!(s(0, 0x81a0_09c2), Class::Plain(Op::Fp(FpOp::Div)));
        assert_eq!(s(0, 0x81a0_0542), Class::Plain(Op::Fp(FpOp::Sqrt)));
        assert_eq!(s(0, 0x81a8_0a42), Class::Plain(Op::Fp(FpOp::Convert)));
        // membar #StoreLoad; rd %tick, %g1; nop; add %o0, 1, %o0
        assert_eq!(s(0, 0x8143_e002), Class::Plain(Op::Barrier));
        assert_eq!(s(0, 0x8341_0000), Class::Plain(Op::SpecialReg));
        assert_eq!(s(0, 0x0100_0000), Class::Plain(Op::Int));
        assert_eq!(s(0, 0x9002_2001), Class::Plain(Op::Int));
    }

    /// Window instructions QEMU may run twice (a spill or fill between: SPARC V9 §6.4,
    /// A.21), and others.
    #[test]
    fn window_instructions_restart() {
        // save %sp, -176, %sp; restore; return %i7+8; flushw
        for w in [0x9de3_bf50u32, 0x81e8_0000, 0x81cf_e008, 0x8158_0000] {
            assert!(restarts(&w.to_be_bytes()), "{w:#x}");
        }
        // add %o0, 1, %o0; ret; call; ldx [%o0], %o1
        for w in [0x9002_2001u32, 0x81c7_e008, 0x4000_0010, 0xd25a_0000] {
            assert!(!restarts(&w.to_be_bytes()), "{w:#x}");
        }
    }
}
