//! ARMv6 instructions as the machine needs them: from an instruction's bytes, whether
//! it branches (and where, when the encoding says), calls, returns, traps, or does
//! floating point or coprocessor work. The ARM Architecture Reference Manual (ARM DDI
//! 0100I) gives the encodings: A3.3 (B, BL), A4.1.10-11 (BLX, BX), A3.13 (SWI),
//! C3/C4 (VFP: coprocessors 10 and 11), B3 and B6 (CP15); A6 the 16-bit Thumb ones.
//! Loads and stores need no decoding: QEMU reports each access as it happens, and a
//! load whose condition fails makes none.

use super::Class;
use crate::program::{FpOp, Op};

const PC: u32 = 15;
const LR: u32 = 14;
const SP: u32 = 13;

/// The class of the instruction of `size` bytes at `ip` whose bytes (little-endian)
/// are `bytes`: 4 for ARM, 2 for Thumb. Anything unrecognised is an integer
/// instruction.
pub fn decode(ip: u64, bytes: &[u8]) -> Class {
    match *bytes {
        [a, b, c, d] => arm(ip, u32::from_le_bytes([a, b, c, d])),
        [a, b] => thumb(ip, u16::from_le_bytes([a, b])),
        _ => Class::Plain(Op::Int),
    }
}

fn field(word: u32, hi: u32, lo: u32) -> u32 {
    (word >> lo) & ((1 << (hi - lo + 1)) - 1)
}

/// A sign-extended `bits`-bit value.
fn signed(value: u32, bits: u32) -> i64 {
    let shift = 32 - bits;
    i64::from(((value << shift) as i32) >> shift)
}

fn arm(ip: u64, w: u32) -> Class {
    let cond = field(w, 31, 28);
    // The PC reads as the instruction's address plus 8 (A2.4.3).
    let relative = |offset: i64| ip.wrapping_add(8).wrapping_add_signed(offset);
    if cond == 0xf {
        // The unconditional space (A3.16): BLX(1) calls Thumb code; PLD is a hint.
        if field(w, 27, 25) == 0b101 {
            return Class::Call;
        }
        return Class::Plain(Op::Int);
    }
    match field(w, 27, 25) {
        0b101 if field(w, 24, 24) == 1 => Class::Call,
        0b101 => Class::Branch { target: relative(signed(field(w, 23, 0), 24) << 2) },
        0b111 if field(w, 24, 24) == 1 => Class::Plain(Op::Syscall),
        0b111 => coprocessor(w),
        0b110 => Class::Memory { fp: matches!(field(w, 11, 8), 10 | 11) },
        0b100 => {
            // LDM/STM: a load of the PC is a return when it pops the stack.
            let load = field(w, 20, 20) == 1;
            if load && field(w, 15, 15) == 1 {
                return if field(w, 19, 16) == SP { Class::Return } else { Class::Jump };
            }
            Class::Memory { fp: false }
        }
        0b010 | 0b011 => {
            // LDR/STR (0b011 with bit 4 set is a media instruction).
            if field(w, 27, 25) == 0b011 && field(w, 4, 4) == 1 {
                return Class::Plain(Op::Int);
            }
            if field(w, 20, 20) == 1 && field(w, 15, 12) == PC {
                return if field(w, 19, 16) == SP { Class::Return } else { Class::Jump };
            }
            Class::Memory { fp: false }
        }
        _ => data_processing(w),
    }
}

/// Encodings with bits 27:25 = 000 or 001: data processing, multiplies, the extra
/// loads and stores, BX/BLX, MRS/MSR, SWP.
fn data_processing(w: u32) -> Class {
    // BX Rm and BLX(2) Rm.
    if w & 0x0fff_ffd0 == 0x012f_ff10 {
        let rm = field(w, 3, 0);
        return match (field(w, 5, 5), rm) {
            (1, _) => Class::Call,
            (_, LR) => Class::Return,
            _ => Class::IndirectBranch,
        };
    }
    let register = field(w, 25, 25) == 0;
    if register && field(w, 7, 7) == 1 && field(w, 4, 4) == 1 {
        // Multiplies (SH = 00) and SWP, LDRD, LDRH and the rest (A3.13.3).
        let sh = field(w, 6, 5);
        let swap = field(w, 24, 23) == 0b10 && field(w, 21, 20) == 0 && sh == 0;
        let exclusive = field(w, 24, 23) == 0b11 && sh == 0;
        return if sh != 0 || swap || exclusive { Class::Memory { fp: false } } else { Class::Plain(Op::Int) };
    }
    // MRS, MSR: bits 24:23 = 10 with S clear.
    if field(w, 24, 23) == 0b10 && field(w, 20, 20) == 0 {
        return Class::Plain(Op::SpecialReg);
    }
    if field(w, 15, 12) == PC {
        // MOV PC, LR returns; any other write of the PC jumps (MOVS PC, LR from a
        // mode with an SPSR returns from an exception, which user code does not do).
        let mov = field(w, 24, 21) == 0b1101;
        return if register && mov && field(w, 11, 0) == LR { Class::Return } else { Class::Jump };
    }
    Class::Plain(Op::Int)
}

/// CDP, MCR and MRC (A4.1.13, A4.1.32, A4.1.35): coprocessors 10 and 11 are VFP (its
/// divide and square root by opcode), 15 the system control coprocessor, whose c7
/// operations include the barriers (B6.6.5).
fn coprocessor(w: u32) -> Class {
    let cp = field(w, 11, 8);
    let transfer = field(w, 4, 4) == 1;
    match cp {
        // A transfer to an ARM register (bit 20, L: FMRS, FMRX, FMSTAT) or from one.
        10 | 11 if transfer && field(w, 20, 20) == 1 => Class::Plain(Op::Fp(FpOp::ToInt)),
        10 | 11 if transfer => Class::Plain(Op::Fp(FpOp::Convert)),
        10 | 11 => {
            // VFP data processing: opcode p, q, r, s in bits 23, 21, 20, 6.
            let opcode = field(w, 23, 23) << 3 | field(w, 21, 20) << 1 | field(w, 6, 6);
            match opcode {
                0b1000 => Class::Plain(Op::Fp(FpOp::Div)),
                // Extension instructions: FSQRT is Fn = 0001 with N = 1.
                0b1111 if field(w, 19, 16) == 0b0001 && field(w, 7, 7) == 1 => Class::Plain(Op::Fp(FpOp::Sqrt)),
                0b1111 => Class::Plain(Op::Fp(FpOp::Convert)),
                0b0000..=0b0011 => Class::Plain(Op::Fp(FpOp::Fma)),
                0b0100 | 0b0101 => Class::Plain(Op::Fp(FpOp::Mul)),
                _ => Class::Plain(Op::Fp(FpOp::Add)),
            }
        }
        15 if transfer && field(w, 20, 20) == 0 && field(w, 19, 16) == 7 && field(w, 3, 0) == 10 && field(w, 7, 5) == 4 => {
            // MCR p15, 0, Rd, c7, c10, 4: Data Synchronization Barrier.
            Class::Plain(Op::Barrier)
        }
        _ => Class::Plain(Op::SpecialReg),
    }
}

/// 16-bit Thumb (A6): conditional and unconditional branches, BX/BLX, POP of the PC,
/// SWI; the two halves of BL/BLX, each an instruction of its own on ARMv6.
fn thumb(ip: u64, h: u16) -> Class {
    let h = u32::from(h);
    // The PC reads as the instruction's address plus 4.
    let relative = |offset: i64| ip.wrapping_add(4).wrapping_add_signed(offset);
    match field(h, 15, 11) {
        0b11100 => Class::Branch { target: relative(signed(field(h, 10, 0), 11) << 1) },
        0b11010 | 0b11011 => match field(h, 11, 8) {
            0b1111 => Class::Plain(Op::Syscall),
            0b1110 => Class::Plain(Op::Int),
            _ => Class::Branch { target: relative(signed(field(h, 7, 0), 8) << 1) },
        },
        // BL/BLX suffixes: the second half transfers control, to LR plus the offset.
        0b11111 | 0b11101 => Class::Call,
        0b11110 => Class::Plain(Op::Int),
        0b01000 if field(h, 10, 8) == 0b111 => match (field(h, 7, 7), field(h, 6, 3)) {
            (1, _) => Class::Call,
            (_, LR) => Class::Return,
            _ => Class::IndirectBranch,
        },
        // POP {…, PC}.
        0b10111 if field(h, 10, 8) == 0b101 => Class::Return,
        // Loads and stores: 0101x, 011xx, 100xx, 1001x, 1100x, LDR literal 01001,
        // PUSH/POP.
        0b01001 | 0b01010 | 0b01011 | 0b01100..=0b10011 | 0b11000 | 0b11001 => Class::Memory { fp: false },
        0b10110 | 0b10111 if field(h, 10, 9) == 0b10 => Class::Memory { fp: false },
        _ => Class::Plain(Op::Int),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(ip: u64, word: u32) -> Class {
        decode(ip, &word.to_le_bytes())
    }

    /// Encodings as GNU as writes them (arm-linux-gnueabi-as 2.40, -march=armv6kz).
    #[test]
    fn arm_control_flow() {
        // b . + 0x10; bne . - 8; bl . + 0x100
        assert_eq!(a(0x1000, 0xea00_0002), Class::Branch { target: 0x1010 });
        assert_eq!(a(0x1000, 0x1aff_fffc), Class::Branch { target: 0x0ff8 });
        assert_eq!(a(0x1000, 0xeb00_003e), Class::Call);
        // bx lr; blx r3; bx r3; mov pc, lr; pop {r4, pc}; ldr pc, [r3]
        assert_eq!(a(0, 0xe12f_ff1e), Class::Return);
        assert_eq!(a(0, 0xe12f_ff33), Class::Call);
        assert_eq!(a(0, 0xe12f_ff13), Class::IndirectBranch);
        assert_eq!(a(0, 0xe1a0_f00e), Class::Return);
        assert_eq!(a(0, 0xe8bd_8010), Class::Return);
        assert_eq!(a(0, 0xe593_f000), Class::Jump);
        // add pc, pc, r0, lsl #2 (a switch table)
        assert_eq!(a(0, 0xe08f_f100), Class::Jump);
        // svc 0
        assert_eq!(a(0, 0xef00_0000), Class::Plain(Op::Syscall));
    }

    #[test]
    fn arm_memory_fp_and_system() {
        // ldr r0, [r1]; strb r2, [r3, #1]; ldrd r4, [r0]; ldrex r0, [r1]; swp r0, r1, [r2]; push {r4, lr}
        for w in [0xe591_0000, 0xe5c3_2001, 0xe1c0_40d0, 0xe191_0f9f, 0xe102_0091, 0xe92d_4010] {
            assert_eq!(a(0, w), Class::Memory { fp: false }, "{w:#x}");
        }
        // vldr d0, [r0]
        assert_eq!(a(0, 0xed90_0b00), Class::Memory { fp: true });
        // mul r0, r1, r2; add r0, r1, r2
        assert_eq!(a(0, 0xe000_0291), Class::Plain(Op::Int));
        assert_eq!(a(0, 0xe081_0002), Class::Plain(Op::Int));
        // vadd.f64 d0, d1, d2; vmul.f64; vdiv.f64; vsqrt.f64 d0, d1; vmov r0, s0;
        // vmov s0, r0
        assert_eq!(a(0, 0xee31_0b02), Class::Plain(Op::Fp(FpOp::Add)));
        assert_eq!(a(0, 0xee21_0b02), Class::Plain(Op::Fp(FpOp::Mul)));
        assert_eq!(a(0, 0xee81_0b02), Class::Plain(Op::Fp(FpOp::Div)));
        assert_eq!(a(0, 0xeeb1_0bc1), Class::Plain(Op::Fp(FpOp::Sqrt)));
        assert_eq!(a(0, 0xee10_0a10), Class::Plain(Op::Fp(FpOp::ToInt)));
        assert_eq!(a(0, 0xee00_0a10), Class::Plain(Op::Fp(FpOp::Convert)));
        // mrs r0, cpsr; mrc p15, 0, r0, c13, c0, 3 (the TLS register); mcr p15, 0, r0, c7, c10, 4
        assert_eq!(a(0, 0xe10f_0000), Class::Plain(Op::SpecialReg));
        assert_eq!(a(0, 0xee1d_0f70), Class::Plain(Op::SpecialReg));
        assert_eq!(a(0, 0xee07_0f9a), Class::Plain(Op::Barrier));
    }

    #[test]
    fn thumb_control_flow() {
        let t = |ip: u64, h: u16| decode(ip, &h.to_le_bytes());
        // b . + 8; beq . - 4; bx lr; blx r3; pop {r4, pc}; svc 0
        assert_eq!(t(0x100, 0xe002), Class::Branch { target: 0x108 });
        assert_eq!(t(0x100, 0xd0fc), Class::Branch { target: 0xfc });
        assert_eq!(t(0, 0x4770), Class::Return);
        assert_eq!(t(0, 0x4798), Class::Call);
        assert_eq!(t(0, 0xbd10), Class::Return);
        assert_eq!(t(0, 0xdf00), Class::Plain(Op::Syscall));
        // ldr r0, [r1]; push {r4, lr}; adds r0, #1
        assert_eq!(t(0, 0x6808), Class::Memory { fp: false });
        assert_eq!(t(0, 0xb510), Class::Memory { fp: false });
        assert_eq!(t(0, 0x3001), Class::Plain(Op::Int));
    }
}
