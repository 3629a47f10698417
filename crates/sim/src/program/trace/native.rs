//! The native trace format (docs/workloads.md): `IP CLASS [OPERANDS] [kernel]
//! [thread=N]`, one instruction or device transfer a line.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use super::{Kind, Line, MemKind, Record, Transfer};
use crate::program::{FpOp, Op, DMA_MAX_BYTES};
use crate::stream::Privilege;

/// The classes of instructions without operands, as the reader and the writer name
/// them.
const PLAIN: [(&str, Op); 13] = [
    ("int", Op::Int),
    ("nop", Op::Nop),
    ("fp", Op::Fp(FpOp::Fma)),
    ("fadd", Op::Fp(FpOp::Add)),
    ("fmul", Op::Fp(FpOp::Mul)),
    ("fcvt", Op::Fp(FpOp::Convert)),
    ("fdiv", Op::Fp(FpOp::Div)),
    ("fsqrt", Op::Fp(FpOp::Sqrt)),
    ("spr", Op::SpecialReg),
    ("sys", Op::Syscall),
    ("eret", Op::ExceptionReturn),
    ("barrier", Op::Barrier),
    ("pause", Op::Pause),
];

/// The classes of data references: an address, and a size unless [`sized`] says the
/// kind is a whole line.
const MEMORY: [(&str, MemKind); 9] = [
    ("ld", MemKind::Load),
    ("fld", MemKind::FpLoad),
    ("st", MemKind::Store),
    ("rmw", MemKind::Modify),
    ("atomic", MemKind::Atomic),
    ("pf", MemKind::Prefetch),
    ("bld", MemKind::BlockLoad),
    ("bst", MemKind::BlockStore),
    ("flush", MemKind::FlushCode),
];

/// The control transfers and device transfers, read apart.
const CONTROL: [&str; 5] = ["br", "call", "ret", "jmp", "dma"];

/// Whether a data reference of `kind` takes a size (the others are a line).
fn sized(kind: MemKind) -> bool {
    !matches!(kind, MemKind::Prefetch | MemKind::BlockLoad | MemKind::BlockStore | MemKind::FlushCode)
}

/// One native line: `IP CLASS [OPERANDS] [kernel] [thread=N]`; `#` starts a comment.
pub(super) fn native_line(line: &str) -> Result<Option<Line>, (usize, String)> {
    let text = line.split('#').next().unwrap_or("");
    let mut fields = Vec::new();
    let mut at = 0;
    for word in text.split_whitespace() {
        let column = text[at..].find(word).map_or(at, |i| at + i);
        at = column + word.len();
        fields.push((column + 1, word));
    }
    let Some(&(ip_col, ip)) = fields.first() else { return Ok(None) };
    let hex = |(column, w): (usize, &str)| {
        pmukit_core::number::parse_digits(w.strip_prefix("0x").unwrap_or(w), 16)
            .ok_or_else(|| (column, format!("`{w}` is not a hexadecimal address")))
    };
    let ip = hex((ip_col, ip))?;
    let Some(&(class_col, class)) = fields.get(1) else { return Err((at + 1, "expected an instruction class after the address".into())) };
    let mut record = Record { thread: 0, privilege: Privilege::USER, ip, op: Kind::Plain(Op::Int) };
    let mut operands = Vec::new();
    let mut option = None;
    for &(column, w) in fields.get(2..).unwrap_or_default() {
        match w.split_once('=') {
            _ if w == "kernel" => record.privilege = Privilege::KERNEL,
            Some(("thread", n)) => {
                record.thread = small(n).ok_or_else(|| (column, format!("`{n}` is not a thread number (0-255)")))?;
            }
            _ => {
                operands.push((column, w));
                continue;
            }
        }
        option.get_or_insert(column);
    }
    let want = |n: usize| {
        if operands.len() == n {
            Ok(())
        } else {
            Err((class_col, format!("`{class}` takes {n} operand{}, not {}", if n == 1 { "" } else { "s" }, operands.len())))
        }
    };
    // The operand `i` of a line whose count `want` has checked.
    let nth = |i: usize| operands.get(i).copied().ok_or_else(|| (class_col, format!("`{class}` lacks operand {}", i + 1)));
    let mem = |kind: MemKind, sized: bool| -> Result<Kind, (usize, String)> {
        want(if sized { 2 } else { 1 })?;
        let size = match operands.get(1) {
            Some(&(column, w)) => small(w).filter(|&s| s > 0).ok_or((column, format!("`{w}` is not a size in bytes (1-255)")))?,
            None => 32,
        };
        Ok(Kind::Mem(kind, hex(nth(0)?)?, size))
    };
    record.op = if let Some(&(_, op)) = PLAIN.iter().find(|p| p.0 == class) {
        Kind::Plain(op)
    } else if let Some(&(_, kind)) = MEMORY.iter().find(|m| m.0 == class) {
        mem(kind, sized(kind))?
    } else {
        match class {
            "br" => {
                want(2)?;
                let taken = match nth(1)? {
                    (_, "t") => true,
                    (_, "n") => false,
                    (column, w) => return Err((column, format!("`{w}` is not a branch outcome: t (taken) or n (not taken)"))),
                };
                Kind::Branch(hex(nth(0)?)?, taken)
            }
            "call" | "ret" | "jmp" => {
                want(1)?;
                let target = hex(nth(0)?)?;
                match class {
                    "call" => Kind::Call(target),
                    "ret" => Kind::Return(target),
                    _ => Kind::Jump(target),
                }
            }
            "dma" => {
                if let Some(column) = option {
                    return Err((column, "`dma` takes no options: the transfer belongs to the instructions before it".into()));
                }
                want(2)?;
                let write = match nth(0)? {
                    (_, "r") => false,
                    (_, "w") => true,
                    (column, w) => {
                        return Err((column, format!("`{w}` is not a transfer direction: r (the device reads) or w (it writes)")))
                    }
                };
                let (column, w) = nth(1)?;
                let bytes = pmukit_core::number::parse_u64(w)
                    .ok()
                    .and_then(|b| u32::try_from(b).ok())
                    .filter(|b| (1..=DMA_MAX_BYTES).contains(b))
                    .ok_or((column, format!("`{w}` is not a transfer size in bytes (1-{DMA_MAX_BYTES})")))?;
                return Ok(Some(Line::Transfer(Transfer { at: ip, bytes, write })));
            }
            _ => {
                let valid: Vec<&str> = PLAIN.iter().map(|p| p.0).chain(MEMORY.iter().map(|m| m.0)).chain(CONTROL).collect();
                return Err((class_col, format!("unknown instruction class `{class}`; valid: {}", valid.join(", "))));
            }
        }
    };
    Ok(Some(Line::Instruction(record)))
}

/// The native line of `line`, which `native_line` reads back as it is (without its
/// line break).
pub(super) fn native_text(line: &Line) -> String {
    let r = match line {
        Line::Transfer(t) => return format!("{:#x} dma {} {}", t.at, if t.write { "w" } else { "r" }, t.bytes),
        Line::Instruction(r) => r,
    };
    let op = match r.op {
        // Integer work of any other kind is `int`.
        Kind::Plain(op) => PLAIN.iter().find(|p| p.1 == op).map_or("int", |p| p.0).to_string(),
        Kind::Mem(kind, at, size) => {
            let class = MEMORY.iter().find(|m| m.1 == kind).map_or("ld", |m| m.0);
            // The whole-line kinds take no size: a line.
            if sized(kind) {
                format!("{class} {at:#x} {size}")
            } else {
                format!("{class} {at:#x}")
            }
        }
        Kind::Branch(target, taken) => format!("br {target:#x} {}", if taken { "t" } else { "n" }),
        Kind::Call(target) => format!("call {target:#x}"),
        Kind::Return(target) => format!("ret {target:#x}"),
        Kind::Jump(target) => format!("jmp {target:#x}"),
    };
    let kernel = if r.privilege == Privilege::KERNEL { " kernel" } else { "" };
    let thread = if r.thread != 0 { format!(" thread={}", r.thread) } else { String::new() };
    format!("{:#x} {op}{kernel}{thread}", r.ip)
}

/// A number in 0..=255, read by pmukit's one strict number parser (no sign).
fn small(text: &str) -> Option<u8> {
    pmukit_core::number::parse_u64(text).ok().and_then(|n| u8::try_from(n).ok())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Any record's kind, as the native format writes it.
    pub(in crate::program::trace) fn op() -> impl Strategy<Value = Kind> {
        let plain = prop::sample::select(vec![
            Op::Int,
            Op::Nop,
            Op::Fp(FpOp::Fma),
            Op::Fp(FpOp::Add),
            Op::Fp(FpOp::Mul),
            Op::Fp(FpOp::Convert),
            Op::Fp(FpOp::Div),
            Op::Fp(FpOp::Sqrt),
            Op::SpecialReg,
            Op::Syscall,
            Op::ExceptionReturn,
            Op::Barrier,
            Op::Pause,
        ]);
        let sized = prop::sample::select(vec![MemKind::Load, MemKind::FpLoad, MemKind::Store, MemKind::Modify, MemKind::Atomic]);
        let lines = prop::sample::select(vec![MemKind::Prefetch, MemKind::BlockLoad, MemKind::BlockStore, MemKind::FlushCode]);
        prop_oneof![
            plain.prop_map(Kind::Plain),
            (sized, any::<u64>(), 1u8..).prop_map(|(k, a, s)| Kind::Mem(k, a, s)),
            // The whole-line kinds are a line: the reader gives them 32 bytes.
            (lines, any::<u64>()).prop_map(|(k, a)| Kind::Mem(k, a, 32)),
            (any::<u64>(), any::<bool>()).prop_map(|(t, taken)| Kind::Branch(t, taken)),
            any::<u64>().prop_map(Kind::Call),
            any::<u64>().prop_map(Kind::Return),
            any::<u64>().prop_map(Kind::Jump),
        ]
    }

    proptest! {
        /// `--trace-out` writes what `--trace` reads back: every record, and device
        /// transfers.
        #[test]
        fn written_lines_read_back_as_they_were(ip in any::<u64>(), op in op(), kernel in any::<bool>(), thread in any::<u8>(),
                                                at in any::<u64>(), bytes in 1..=DMA_MAX_BYTES, write in any::<bool>()) {
            let privilege = if kernel { Privilege::KERNEL } else { Privilege::USER };
            let record = Line::Instruction(Record { thread, privilege, ip, op });
            prop_assert_eq!(native_line(&native_text(&record)), Ok(Some(record)));
            let transfer = Line::Transfer(Transfer { at, bytes, write });
            prop_assert_eq!(native_line(&native_text(&transfer)), Ok(Some(transfer)));
        }
    }
}
