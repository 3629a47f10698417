//! The memory controllers behind a SPARC core's last cache level: DRAM banks, write
//! queues, and the order in which they serve transactions (ERRATA MSP14-16).
//!
//! A transaction goes to one bank of one channel of one MCU, chosen by its line
//! address: bits [1:0] the MCU and [4] the channel, as the DRAM PMU model routes it
//! (`docs/t4-dram-model.md`), the bits above them the bank, and the rest the row. A
//! bank serves one access at a time, in the order the transactions reach it, and keeps
//! the row of its last access open: an access to that row takes `row_hit_cycles`, one
//! to another row `bank_cycles` (the row cycle time). A read waits for its bank and is
//! then served; the core waits with it. A write (a write-back) holds an entry of its
//! MCU's write queue until its bank takes it, while the core goes on; a write that
//! finds every entry taken has starved, and waits where it is for the first to free
//! (the cache level that sent it holds it, and whatever waits on that level waits too).
//! A read of a line whose write is still queued is deferred behind it (a
//! writeback-buffer hit). What each transaction met is credited to the cycle that
//! carries it ([`MemoryQueues`]).

use std::collections::VecDeque;

use crate::machine::mem::{Entries, Queue};
use crate::machine::{Keys, Moves};
use crate::stream::MemoryQueues;

/// MCUs and channels per MCU of the interleave (TABLES 10-4 to 10-7: four MCUs with
/// DRAM counters, channels 0 and 1).
const MCUS: u64 = 4;
const CHANNELS: u64 = 2;
/// Line-address bits below the bank number: MCU [1:0], COU port [3:2], channel [4].
const BANK_SHIFT: u32 = 5;
/// Cycles after its bank took it that a write is forgotten (`Mcus::pending`): more
/// than any instruction's fetch, table walks and trap before its data access.
const SETTLED: u64 = 1 << 12;

/// The memory controllers' parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McuConfig {
    /// Bytes per transaction: the line of the cache in front of memory.
    pub line: u64,
    /// Banks per channel (a power of two).
    pub banks: u64,
    /// Core cycles a bank is busy with an access to another row than its open one,
    /// and with one to the open row.
    pub bank_cycles: u64,
    pub row_hit_cycles: u64,
    /// Writes each MCU can hold queued.
    pub write_queue: usize,
}

impl McuConfig {
    /// Bytes after which every transaction maps to the same bank again.
    pub fn span(&self) -> u64 {
        self.line << BANK_SHIFT << self.banks.trailing_zeros()
    }
}

/// A write in its MCU's queue until its bank takes it at `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Queued {
    line: u64,
    start: u64,
}

/// One DRAM bank: the address of the access that opened its row, and the cycle it is
/// free again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Bank {
    opened_by: Option<u64>,
    free: u64,
}

/// The MCUs of the socket.
pub struct Mcus {
    cfg: McuConfig,
    /// Cycles since the machine started; every time below is on this clock.
    clock: u64,
    /// Each bank's open row and the cycle it is free again, by [`Mcus::place`].
    banks: Vec<Bank>,
    /// Each MCU's queued writes, oldest first (the lines, for writeback-buffer hits).
    writes: Vec<VecDeque<Queued>>,
    /// Each MCU's write-queue entries, held from a write's arrival until its bank
    /// takes it.
    entries: Vec<Entries>,
    /// What the transactions since the last [`Mcus::take`] met.
    met: MemoryQueues,
}

impl Mcus {
    pub fn new(cfg: McuConfig) -> Mcus {
        let banks = (MCUS * CHANNELS * cfg.banks) as usize;
        Mcus {
            cfg,
            clock: 0,
            banks: vec![Bank::default(); banks],
            writes: vec![VecDeque::new(); MCUS as usize],
            entries: vec![Entries::new(cfg.write_queue); MCUS as usize],
            met: MemoryQueues::default(),
        }
    }

    /// Bytes after which every line maps to the same bank again.
    pub fn span(&self) -> u64 {
        self.cfg.span()
    }

    pub fn elapse(&mut self, cycles: u64) {
        self.clock += cycles;
    }

    pub fn set_now(&mut self, now: u64) {
        self.clock = now;
    }

    /// The line, its MCU and its bank (MCU, channel, then bank number).
    fn place(&self, addr: u64) -> (u64, usize, usize) {
        let line = addr / self.cfg.line;
        let channel = (line >> 4) & (CHANNELS - 1);
        let bank = (line >> BANK_SHIFT) & (self.cfg.banks - 1);
        (line, (line % MCUS) as usize, ((bank * CHANNELS + channel) * MCUS + line % MCUS) as usize)
    }

    /// Queues a transaction of `line` arriving at `at` at its bank: returns the cycle
    /// the bank takes it.
    fn queue(&mut self, bank: usize, line: u64, at: u64) -> u64 {
        let row = |line: u64| line * self.cfg.line / self.cfg.span();
        let b = &mut self.banks[bank];
        let start = at.max(b.free);
        let open = b.opened_by.is_some_and(|a| row(a / self.cfg.line) == row(line));
        let busy = if open { self.cfg.row_hit_cycles } else { self.cfg.bank_cycles };
        if !open {
            b.opened_by = Some(line * self.cfg.line);
        }
        b.free = start + busy;
        self.met.bank_stall_cycles += wait(start - at);
        start
    }

    /// The writes `mcu` still holds: those their banks have not taken yet. Writes
    /// taken `SETTLED` cycles ago are forgotten: strands that run at once reach the
    /// controllers at cycles up to that far apart (an instruction's fetch and table
    /// walk before its access), so a write one strand's clock has passed may still be
    /// queued at another's.
    fn pending(&mut self, mcu: usize) -> impl Iterator<Item = &Queued> {
        let clock = self.clock;
        let q = &mut self.writes[mcu];
        while q.front().is_some_and(|w| w.start + SETTLED <= clock) {
            q.pop_front();
        }
        q.iter().filter(move |w| w.start > clock)
    }

    /// A read of the line at `addr`: returns the cycles it waits for its bank.
    pub fn read(&mut self, addr: u64) -> u64 {
        let (line, mcu, bank) = self.place(addr);
        if self.pending(mcu).any(|w| w.line == line) {
            // The queued write is ahead of the read at the bank: the read gets its data.
            self.met.writeback_hits = self.met.writeback_hits.saturating_add(1);
        }
        let waited = self.queue(bank, line, self.clock) - self.clock;
        self.met.read_cycles += wait(waited);
        waited
    }

    /// A write of the line at `addr`: it takes an entry of its MCU's write queue,
    /// waiting for the first to free when all are taken (MSP15), and holds it until its
    /// bank takes it. Returns the cycles it waited for the entry.
    pub fn write(&mut self, addr: u64) -> u64 {
        let (line, mcu, bank) = self.place(addr);
        let (entry, free) = self.entries[mcu].first();
        let accepted = self.clock.max(free);
        if accepted > self.clock {
            self.met.writes_starved = self.met.writes_starved.saturating_add(1);
        }
        let start = self.queue(bank, line, accepted);
        self.entries[mcu].hold(entry, self.clock, accepted, start);
        self.met.write_cycles += wait(start - accepted);
        // Kept in the order the banks take them, so that the front goes first.
        let q = &mut self.writes[mcu];
        let at = q.iter().rposition(|w| w.start <= start).map_or(0, |i| i + 1);
        q.insert(at, Queued { line, start });
        accepted - self.clock
    }

    /// A device's transaction (DMA): it takes its bank and queues like the core's,
    /// but what it meets is not counted as the core's.
    pub fn device(&mut self, addr: u64, write: bool) {
        let met = self.met;
        if write {
            self.write(addr);
        } else {
            self.read(addr);
        }
        self.met = met;
    }

    /// What each MCU's write queue has held.
    pub fn queues(&self) -> impl Iterator<Item = Queue> + '_ {
        self.entries.iter().enumerate().map(|(mcu, e)| Queue {
            name: "MCU write queue",
            unit: Some(mcu),
            size: e.size(),
            occupancy: e.occupancy(),
        })
    }

    /// What the transactions since the last call met; starts afresh.
    pub fn take(&mut self) -> MemoryQueues {
        std::mem::take(&mut self.met)
    }

    /// The state relative to now: each bank's open row (as the line that opened it
    /// would key it) and remaining busy cycles, and each queued write's line and
    /// remaining wait (which are also the write-queue entries still held).
    pub fn canonical(&self, keys: &Keys, out: &mut Vec<u64>) {
        for b in &self.banks {
            out.push(b.opened_by.map_or(u64::MAX, |a| (keys.line)(a)));
            out.push(b.free.saturating_sub(self.clock));
        }
        for q in &self.writes {
            let live = q.iter().filter(|w| w.start > self.clock);
            out.push(u64::MAX - live.clone().count() as u64);
            out.extend(live.flat_map(|w| [(keys.line)(w.line * self.cfg.line), w.start - self.clock]));
        }
    }

    pub fn relocate(&mut self, to: &Moves) {
        for b in &mut self.banks {
            if let Some(moved) = b.opened_by.and_then(|a| (to.line)(a)) {
                b.opened_by = Some(moved);
            }
        }
        let bytes = self.cfg.line;
        for w in self.writes.iter_mut().flatten() {
            if let Some(moved) = (to.line)(w.line * bytes) {
                w.line = moved / bytes;
            }
        }
    }
}

/// A wait as the queue counters take it (u32: a wait of 2^32 cycles cannot happen with
/// queues of at most 2^8 entries and banks busy at most 2^16 cycles).
fn wait(cycles: u64) -> u32 {
    u32::try_from(cycles).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CFG: McuConfig = McuConfig { line: 64, banks: 8, bank_cycles: 100, row_hit_cycles: 100, write_queue: 2 };

    /// The line address of bank `bank` of MCU 0, channel 0, row `row`.
    fn at(bank: u64, row: u64) -> u64 {
        ((row << 3 | bank) << BANK_SHIFT) * 64
    }

    #[test]
    fn a_read_waits_for_its_bank_and_not_for_another() {
        let mut m = Mcus::new(CFG);
        assert_eq!(m.read(at(0, 0)), 0);
        m.elapse(30);
        assert_eq!(m.read(at(0, 1)), 70, "the bank is busy 100 cycles from the first read");
        assert_eq!(m.read(at(1, 0)), 0);
        let q = m.take();
        assert_eq!((q.read_cycles, q.bank_stall_cycles), (70, 70));
        assert!(m.take().is_empty());
    }

    #[test]
    fn writes_queue_behind_the_bank_and_a_full_queue_starves_and_pushes_back() {
        let mut m = Mcus::new(CFG);
        // The first goes to its bank at once; the next two wait in the queue's two
        // entries, until 100 and 200.
        assert_eq!([m.write(at(0, 0)), m.write(at(0, 1)), m.write(at(0, 2))], [0, 0, 0]);
        assert_eq!(m.take().writes_starved, 0);
        assert_eq!(m.write(at(0, 3)), 100, "the fourth waits outside for the first entry to free");
        let q = m.take();
        assert_eq!((q.writes_starved, q.write_cycles), (1, 200), "then 200 cycles in the queue for bank 0");
        let held: Vec<_> = m.queues().map(|q| q.occupancy).collect();
        assert_eq!((held[0].requests, held[0].residence, held[0].waited, held[0].most), (4, 500, 100, 2));
        m.elapse(1000);
        assert_eq!(m.write(at(0, 3)), 0);
        assert_eq!(m.take(), MemoryQueues::default(), "the queue drained long ago");
    }

    #[test]
    fn a_read_of_a_queued_line_is_a_writeback_buffer_hit() {
        let mut m = Mcus::new(CFG);
        m.read(at(2, 0));
        m.write(at(2, 5));
        m.take();
        assert_eq!(m.read(at(2, 5)), 200, "behind the read and the write");
        assert_eq!(m.take().writeback_hits, 1);
        m.elapse(500);
        m.read(at(2, 5));
        assert_eq!(m.take().writeback_hits, 0, "the write has gone");
    }
}
