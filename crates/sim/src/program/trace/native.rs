//! The native trace format (docs/workloads.md): `IP CLASS [OPERANDS] [kernel]
//! [thread=N]`, one instruction or device transfer a line.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use super::{Kind, Line, MemKind, Record, Transfer};
use crate::program::{FpOp, Op, DMA_MAX_BYTES};
use crate::stream::Privilege;

/// The classes of instructions without operands, as the reader and the writer name
/// them.
const PLAIN: [(&str, Op); 14] = [
    ("int", Op::Int),
    ("nop", Op::Nop),
    ("fp", Op::Fp(FpOp::Fma)),
    ("fadd", Op::Fp(FpOp::Add)),
    ("fmul", Op::Fp(FpOp::Mul)),
    ("fcvt", Op::Fp(FpOp::Convert)),
    ("ftoi", Op::Fp(FpOp::ToInt)),
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

/// A line of the shapes `--trace-out` writes (`0xIP CLASS` with its `0x` address and
/// its size or outcome, no options, no comment, a line break right after), read where
/// it lies: the bytes it takes, and its record. `None` leaves the line to
/// [`native_line`], which reads every line this reads as this does (property-tested)
/// and every other. Splitting each line into fields and finding each field's column,
/// for messages a well-formed line never needs, took two thirds of replaying a trace.
pub(super) fn fast(buf: &[u8]) -> Option<(usize, Line)> {
    let mut at = 0;
    let ip = hex(buf, &mut at)?;
    space(buf, &mut at)?;
    let start = at;
    while buf.get(at).is_some_and(u8::is_ascii_lowercase) {
        at += 1;
    }
    let class = buf.get(start..at)?;
    let op = if let Some(&(_, op)) = PLAIN.iter().find(|p| p.0.as_bytes() == class) {
        Kind::Plain(op)
    } else if let Some(&(_, kind)) = MEMORY.iter().find(|m| m.0.as_bytes() == class) {
        space(buf, &mut at)?;
        let address = hex(buf, &mut at)?;
        let size = if sized(kind) {
            space(buf, &mut at)?;
            size(buf, &mut at)?
        } else {
            32
        };
        Kind::Mem(kind, address, size)
    } else {
        space(buf, &mut at)?;
        let to = hex(buf, &mut at)?;
        match class {
            b"br" => {
                space(buf, &mut at)?;
                let taken = match buf.get(at)? {
                    b't' => true,
                    b'n' => false,
                    _ => return None,
                };
                at += 1;
                Kind::Branch(to, taken)
            }
            b"call" => Kind::Call(to),
            b"ret" => Kind::Return(to),
            b"jmp" => Kind::Jump(to),
            _ => return None,
        }
    };
    (buf.get(at) == Some(&b'\n')).then_some((at + 1, Line::Instruction(Record { thread: 0, privilege: Privilege::USER, ip, op })))
}

/// One space at `at`, which moves past it.
fn space(buf: &[u8], at: &mut usize) -> Option<()> {
    (buf.get(*at) == Some(&b' ')).then(|| *at += 1)
}

/// `0x` and one to sixteen lower-case hexadecimal digits at `at`, which moves past
/// them: the value (sixteen digits cannot overflow).
fn hex(buf: &[u8], at: &mut usize) -> Option<u64> {
    let digits = buf.get(*at..)?.strip_prefix(b"0x")?;
    let n = digits.iter().take_while(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')).count();
    let value = digits.get(..n).filter(|_| (1..=16).contains(&n))?.iter().fold(0u64, |v, &d| {
        let d = if d.is_ascii_digit() { d - b'0' } else { d - b'a' + 10 };
        v << 4 | u64::from(d)
    });
    *at += 2 + n;
    Some(value)
}

/// One to three decimal digits at `at`, which moves past them: a size of 1-255 bytes.
fn size(buf: &[u8], at: &mut usize) -> Option<u8> {
    let n = buf.get(*at..)?.iter().take_while(|b| b.is_ascii_digit()).count();
    let digits = buf.get(*at..*at + n).filter(|_| (1..=3).contains(&n))?;
    let value = digits.iter().fold(0u32, |v, d| 10 * v + u32::from(d - b'0'));
    *at += n;
    u8::try_from(value).ok().filter(|&s| s > 0)
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
            Op::Fp(FpOp::ToInt),
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

    /// Lines as `--trace-out` writes them, and near misses: another address (up to
    /// eighteen digits), a character more or less, upper case, an option, a comment,
    /// a last operand of 0 or 256.
    fn lines() -> impl Strategy<Value = String> {
        let written = (any::<u64>(), op(), any::<bool>(), any::<u8>()).prop_map(|(ip, op, kernel, thread)| {
            let privilege = if kernel { Privilege::KERNEL } else { Privilege::USER };
            native_text(&Line::Instruction(Record { thread: thread % 3, privilege, ip, op }))
        });
        let change = (
            0u8..8,
            any::<prop::sample::Index>(),
            prop::sample::select(vec![' ', '#', 'x', 'X', '0', 't', 'n', '\r']),
            "[1-9a-f][0-9a-f]{13,17}|[0-9a-f]{0,2}",
        );
        (written, proptest::option::of(change)).prop_map(|(line, change)| {
            let Some((how, at, c, digits)) = change else { return line };
            let at = at.index(line.len() + 1);
            match how {
                0 => format!("0x{digits}{}", &line[line.find(' ').unwrap_or(line.len())..]),
                1 => format!("{}{c}{}", &line[..at], &line[at..]),
                2 if at < line.len() => format!("{}{}", &line[..at], &line[at + 1..]),
                3 => line.to_uppercase(),
                4 => format!("{line} kernel"),
                5 | 6 => {
                    format!("{} {}", line.rsplit_once(' ').map_or(line.as_str(), |(head, _)| head), if how == 5 { "0" } else { "256" })
                }
                _ => format!("{line} # {c}"),
            }
        })
    }

    proptest! {
        // Cheap cases, and near misses are rare among them: many more than the default.
        #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

        /// The fast pass reads a line as `native_line` does, or leaves it to it.
        #[test]
        fn the_fast_pass_agrees_with_the_general_one(line in lines(), after in "(\n|\r\n|)[0-9a-z ]{0,3}") {
            let bytes = format!("{line}{after}");
            if let Some((n, record)) = fast(bytes.as_bytes()) {
                prop_assert_eq!(n, line.len() + 1);
                prop_assert!(after.starts_with('\n'));
                prop_assert_eq!(native_line(line.trim_end()), Ok(Some(record)));
            }
        }

        /// Every line `--trace-out` writes takes the fast pass but those with options.
        #[test]
        fn written_lines_take_the_fast_pass(ip in any::<u64>(), op in op()) {
            let record = Line::Instruction(Record { thread: 0, privilege: Privilege::USER, ip, op });
            let text = format!("{}\n", native_text(&record));
            prop_assert_eq!(fast(text.as_bytes()), Some((text.len(), record)));
        }

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
