//! The write-coalescing buffers (§2.3.3.4: "four 128-byte write coalescing buffers",
//! shared by the threads): stores to write-coalescing memory gather here by line and
//! go to the system bus as one full-line write when a line fills, or in pieces when
//! a line must leave before it is full (ERRATA MMC22).

use crate::machine::{Keys, Moves};

/// Bytes of a coalescing buffer: an L3 line.
const LINE: u64 = 128;
/// §2.3.3.4: four buffers.
const BUFFERS: usize = 4;

/// What a flush puts on the bus: a full line (BWL), or a partial write (BWP) of an
/// aligned 32 or 16 bytes, or of 1-8 bytes in the lower or upper half of a 16-byte
/// chunk (address bit 3 clear or set: SI_WRITEQ_INSERTS' WC1_8A and WC1_8B).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    Line,
    Bytes32,
    Bytes16,
    Bytes8Low,
    Bytes8High,
}

/// The buffers, oldest first: each line's address and the bytes written so far.
#[derive(Debug, Clone, Default)]
pub struct WriteCoalescing {
    lines: Vec<(u64, u128)>,
}

impl WriteCoalescing {
    /// A store of `size` bytes at `addr` (within one line; a store crossing it is cut
    /// at the line's end). Returns what it sent to the bus: a line that filled, or the
    /// oldest line, flushed to make room for this one.
    pub fn store(&mut self, addr: u64, size: u8, sent: &mut Vec<Piece>) {
        let line = addr & !(LINE - 1);
        let offset = (addr - line) as u32;
        let len = u32::from(size.max(1)).min(LINE as u32 - offset);
        let bytes = if len == 128 { u128::MAX } else { ((1u128 << len) - 1) << offset };
        let i = match self.lines.iter().position(|&(l, _)| l == line) {
            Some(i) => i,
            None => {
                if self.lines.len() == BUFFERS {
                    let (_, mask) = self.lines.remove(0);
                    pieces(mask, sent);
                }
                self.lines.push((line, 0));
                self.lines.len() - 1
            }
        };
        self.lines[i].1 |= bytes;
        if self.lines[i].1 == u128::MAX {
            self.lines.remove(i);
            sent.push(Piece::Line);
        }
    }

    /// A fence (or an ordered access) drains every buffer, oldest first.
    pub fn drain(&mut self, sent: &mut Vec<Piece>) {
        for (_, mask) in self.lines.drain(..) {
            pieces(mask, sent);
        }
    }

    pub fn canonical(&self, keys: &Keys, out: &mut Vec<u64>) {
        out.push(u64::MAX - self.lines.len() as u64);
        for &(line, mask) in &self.lines {
            out.extend([(keys.line)(line), mask as u64, (mask >> 64) as u64]);
        }
    }

    pub fn relocate(&mut self, to: &Moves) {
        for (line, _) in &mut self.lines {
            if let Some(moved) = (to.line)(*line) {
                *line = moved;
            }
        }
    }
}

/// A partly written line as the bus takes it: each aligned 32-byte chunk written whole
/// as one write, else each whole 16-byte half of it, else each 8-byte part with any
/// byte written (the bus's partial writes carry a byte mask of up to 8 bytes below 16).
fn pieces(mask: u128, sent: &mut Vec<Piece>) {
    let all = |shift: u32, bits: u32| (mask >> shift) & ((1u128 << bits) - 1) == (1u128 << bits) - 1;
    for chunk in (0..128).step_by(32) {
        if all(chunk, 32) {
            sent.push(Piece::Bytes32);
            continue;
        }
        for half in [chunk, chunk + 16] {
            if all(half, 16) {
                sent.push(Piece::Bytes16);
                continue;
            }
            for (part, piece) in [(half, Piece::Bytes8Low), (half + 8, Piece::Bytes8High)] {
                if (mask >> part) & 0xff != 0 {
                    sent.push(piece);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_written_whole_goes_out_as_one_line() {
        let mut w = WriteCoalescing::default();
        let mut sent = Vec::new();
        w.store(0x1000, 64, &mut sent);
        assert!(sent.is_empty());
        w.store(0x1040, 64, &mut sent);
        assert_eq!(sent, [Piece::Line]);
        w.drain(&mut sent);
        assert_eq!(sent, [Piece::Line], "nothing left to drain");
    }

    #[test]
    fn a_partial_line_is_cut_into_aligned_pieces() {
        let mut w = WriteCoalescing::default();
        let mut sent = Vec::new();
        w.store(0x2000, 64, &mut sent);
        w.store(0x2040, 16, &mut sent);
        w.store(0x2058, 4, &mut sent);
        w.store(0x2060, 8, &mut sent);
        w.drain(&mut sent);
        use Piece::*;
        assert_eq!(sent, [Bytes32, Bytes32, Bytes16, Bytes8High, Bytes8Low]);
    }

    #[test]
    fn a_fifth_line_flushes_the_oldest() {
        let mut w = WriteCoalescing::default();
        let mut sent = Vec::new();
        for line in 0..5 {
            w.store(line * 128, 8, &mut sent);
        }
        assert_eq!(sent, [Piece::Bytes8Low]);
        w.drain(&mut sent);
        assert_eq!(sent.len(), 5);
    }
}
