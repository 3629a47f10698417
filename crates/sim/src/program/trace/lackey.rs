//! Valgrind Lackey's `--trace-mem=yes` lines: `I  ADDR,SIZE` for an instruction, ` L`,
//! ` S` and ` M` for its loads, stores and read-modify-writes.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use super::{Kind, MemKind, Record};
use crate::program::Op;
use crate::stream::Privilege;

/// A Lackey instruction waiting for its data lines and its successor: address, size
/// and its first data access.
pub(super) type Held = (u64, u64, Option<(MemKind, u64, u8)>);

/// One Lackey line: an instruction completes the one `held` before it. Parsed as
/// bytes: traces run to billions of lines. An error is a column and a message.
pub(super) fn lackey_line(line: &[u8], held: &mut Option<Held>) -> Result<Option<Record>, (usize, String)> {
    let end = line.iter().rposition(|b| !matches!(b, b'\n' | b'\r' | b' ')).map_or(0, |last| last + 1);
    let line = line.get(..end).unwrap_or_default();
    if line.is_empty() || line.starts_with(b"==") || line.starts_with(b"--") {
        return Ok(None);
    }
    let kind = match line {
        [b'I', b' ', b' ', ..] => b'I',
        [b' ', k @ (b'L' | b'S' | b'M'), b' ', ..] => *k,
        _ => return Err((1, "expected `I  ADDR,SIZE` or ` L|S|M ADDR,SIZE` (Valgrind Lackey --trace-mem=yes)".into())),
    };
    let rest = line.get(3..).unwrap_or_default();
    // One pass over the address's digits up to the comma (the common case); a
    // malformed line is diagnosed below.
    let mut addr = 0u64;
    let mut comma = 0;
    for (i, &d) in rest.iter().enumerate().take(17) {
        match hex_digit(d) {
            Some(v) => addr = addr << 4 | u64::from(v),
            None if d == b',' && i > 0 => {
                comma = i;
                break;
            }
            _ => break,
        }
    }
    if comma == 0 {
        return Err(lackey_address_error(rest));
    }
    let size = rest.get(comma + 1..).unwrap_or_default();
    let Some(size) = decimal_u8(size) else {
        let text = String::from_utf8_lossy(size).into_owned();
        return Err((4 + comma + 1, format!("`{text}` is not a size in bytes (1-255)")));
    };
    take(kind, addr, size, held).ok_or_else(|| (2, "a data access before any instruction".into()))
}

/// Takes one parsed line into `held`: an instruction completes the one before it (the
/// record returned), a data access attaches to the held instruction (the first of
/// each instruction is kept). `None` for a data access before any instruction.
fn take(kind: u8, addr: u64, size: u8, held: &mut Option<Held>) -> Option<Option<Record>> {
    if kind == b'I' {
        let before = held.replace((addr, u64::from(size), None));
        return Some(before.map(|(ip, isize, mem)| lackey_record(ip, isize, mem, addr)));
    }
    let mem = match kind {
        b'L' => MemKind::Load,
        b'S' => MemKind::Store,
        _ => MemKind::Modify,
    };
    match held {
        Some((_, _, first @ None)) => *first = Some((mem, addr, size)),
        Some(_) => {}
        None => return None,
    }
    Some(None)
}

/// A decimal number in 1..=255.
fn decimal_u8(digits: &[u8]) -> Option<u8> {
    if digits.is_empty() || digits.len() > 3 {
        return None;
    }
    let n = digits.iter().try_fold(0u32, |n, &d| Some(n * 10 + (d as char).to_digit(10)?))?;
    u8::try_from(n).ok().filter(|&n| n > 0)
}

/// What is wrong with a Lackey line's `ADDR,SIZE` when the fast pass failed.
fn lackey_address_error(rest: &[u8]) -> (usize, String) {
    match rest.iter().position(|&b| b == b',') {
        None => (4, "expected ADDR,SIZE".into()),
        Some(comma) => {
            let text = String::from_utf8_lossy(rest.get(..comma).unwrap_or_default()).into_owned();
            (4, format!("`{text}` is not a hexadecimal address"))
        }
    }
}

/// The value of a byte as a hexadecimal digit.
fn hex_digit(d: u8) -> Option<u8> {
    match d {
        b'0'..=b'9' => Some(d - b'0'),
        b'a'..=b'f' => Some(d - b'a' + 10),
        b'A'..=b'F' => Some(d - b'A' + 10),
        _ => None,
    }
}

/// A Lackey instruction, once the next one's address (`next`) is known: a jump when
/// it is not the fall-through.
pub(super) fn lackey_record(ip: u64, size: u64, mem: Option<(MemKind, u64, u8)>, next: u64) -> Record {
    let op = match mem {
        _ if next != ip + size => Kind::Branch(next, true),
        Some((kind, addr, size)) => Kind::Mem(kind, addr, size),
        None => Kind::Plain(Op::Int),
    };
    Record { thread: 0, privilege: Privilege::USER, ip, op }
}

/// What the fast pass made of the bytes at the front of the buffer.
pub(super) enum Fast {
    /// A whole plain line of so many bytes (its line break included), and the record
    /// it completed, if any.
    Line(usize, Option<Record>),
    /// Anything else, which the general path reads: a line not all in the buffer, a
    /// malformed one, Valgrind's banner, one with trailing blanks.
    Slow,
}

/// Parses a plain Lackey line at the front of `bytes` in one pass, finding its end as
/// it goes (looking for the line break first cost as much as parsing), with the same
/// outcome as `lackey_line`; changes nothing unless it succeeds.
pub(super) fn fast(bytes: &[u8], held: &mut Option<Held>) -> Fast {
    let kind = match bytes {
        [b'I', b' ', b' ', ..] => b'I',
        [b' ', k @ (b'L' | b'S' | b'M'), b' ', ..] => *k,
        _ => return Fast::Slow,
    };
    let mut i = 3;
    let mut addr = 0u64;
    while let Some(&d) = bytes.get(i).filter(|_| i < 3 + 16) {
        match hex_digit(d) {
            Some(v) => addr = addr << 4 | u64::from(v),
            None => break,
        }
        i += 1;
    }
    if i == 3 || bytes.get(i) != Some(&b',') {
        return Fast::Slow;
    }
    i += 1;
    let digits = i;
    let mut size = 0u32;
    while let Some(&d) = bytes.get(i).filter(|d| d.is_ascii_digit() && i < digits + 3) {
        size = size * 10 + u32::from(d - b'0');
        i += 1;
    }
    if i == digits || bytes.get(i) != Some(&b'\n') {
        return Fast::Slow;
    }
    let Some(size) = u8::try_from(size).ok().filter(|&s| s > 0) else { return Fast::Slow };
    match take(kind, addr, size, held) {
        Some(record) => Fast::Line(i + 1, record),
        None => Fast::Slow,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Lines as Lackey writes them and as a damaged file might: kinds, addresses of 0
    /// to 18 digits, sizes of 0 to 4 digits, blanks and carriage returns.
    fn lines() -> impl Strategy<Value = String> {
        let kind = prop_oneof![Just("I  "), Just(" L "), Just(" S "), Just(" M "), Just(" X "), Just("==1== ")];
        let addr = "[0-9a-fA-Fg]{0,18}";
        let size = "[0-9]{0,4}";
        let tail = prop_oneof![Just(""), Just(" "), Just("\r")];
        (kind, addr, prop_oneof![Just(","), Just(";")], size, tail).prop_map(|(k, a, c, s, t)| format!("{k}{a}{c}{s}{t}"))
    }

    proptest! {
        /// The fast pass reads a line as `lackey_line` does, or leaves it to it and
        /// changes nothing.
        #[test]
        fn the_fast_pass_agrees_with_the_general_one(first in proptest::option::of((0u64..1 << 40, 1u64..16)), line in lines()) {
            let held = first.map(|(ip, size)| (ip, size, None));
            let (mut fast_held, mut slow_held) = (held, held);
            let bytes = format!("{line}\n");
            match fast(bytes.as_bytes(), &mut fast_held) {
                Fast::Line(n, record) => {
                    prop_assert_eq!(n, bytes.len());
                    let slow = lackey_line(line.as_bytes(), &mut slow_held);
                    prop_assert_eq!(format!("{:?}", slow), format!("{:?}", Ok::<_, (usize, String)>(record)));
                    prop_assert_eq!(fast_held, slow_held);
                }
                Fast::Slow => prop_assert_eq!(fast_held, held),
            }
        }
    }
}
