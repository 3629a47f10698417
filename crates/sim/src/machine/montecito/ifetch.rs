//! The instruction side's requests beyond the L1I (ERRATA MMC21, MMC25, MMC28): demand
//! fetches that missed it, and the prefetches that ask for the lines ahead, each from
//! the L2I on, through the request buffers the L2I shares with the L2D.

use super::levels::Level;
use super::Montecito;
use super::Signals;
use crate::stream::Signal;

/// The bits of `Signal::L2iL3Rejects`: a demand fetch's request, a prefetch's.
const DEMAND: u8 = 0b01;
const PREFETCH: u8 = 0b10;

impl Montecito {
    /// A demand fetch that missed the L1I, from the L2I on, at cycle `now`: returns
    /// the cycles until its line is there. A line whose L2I miss is still pending
    /// recirculates until the fill and then hits; a hit while another line's fill
    /// returns its data waits for that fill (MMC25).
    pub(super) fn demand_instruction(&mut self, addr: u64, now: u64, s: &mut Signals) -> u64 {
        let l2_line = self.cfg.l2i.line_of(addr);
        if let Some(ready) = self.inflight.pending(l2_line) {
            s.bump(Signal::L2iRecirculatesDemand);
            s.bump(Signal::L2InstructionHits);
            return ready - now;
        }
        let level = self.outer_access(0, addr, false, now, s);
        if level == Level::L2 {
            return match self.inflight.returning(now, self.cfg.l2i.line / 32) {
                Some(done) => {
                    s.bump(Signal::L2iHitConflictsDemand);
                    done - now + self.cfg.l2i_cycles
                }
                None => self.cfg.l2i_cycles,
            };
        }
        let sent = self.l3_request(now, DEMAND, s);
        let (cycles, fill) = match level {
            // A miss the thread switched away from (no wait) still fills in the
            // background, where the other thread's fetches of the line find it pending.
            Level::Memory => {
                let ready = self.bus_read(sent, self.cfg.line_clocks);
                (self.memory_latency(s, Signal::L3InstructionMisses, now, ready), ready - now)
            }
            _ => (sent - now + self.cfg.l3_cycles, sent - now + self.cfg.l3_cycles),
        };
        self.inflight.add_fill(l2_line, now + fill);
        cycles
    }

    /// The cycle an L2I miss at `now` is accepted by the L3 and the bus controller: at
    /// once, or when the first of the 16 request buffers frees (§2.3.3.4: "All L2I and
    /// L2D requests are allocated to one of 16 request buffers"). A request that finds
    /// them all taken is rejected (L2I_L3_REJECTS: `kind`, a demand fetch's or a
    /// prefetch's bit of `Signal::L2iL3Rejects`) and sent again until it is accepted
    /// (MMC28).
    fn l3_request(&mut self, now: u64, kind: u8, s: &mut Signals) -> u64 {
        let free = self.inflight.buffer_free(now);
        if free > now {
            s.set(Signal::L2iL3Rejects, s.get(Signal::L2iL3Rejects) as u8 | kind);
        }
        free
    }

    /// The next-line instruction prefetcher (ERRATA MMC21): a fetch from a new L1I line
    /// at cycle `now` asks for the next line; one the L1I, the streaming buffer and the
    /// RAB lack is read from the L2I, the L3 or memory, and arrives after that level's
    /// latency (MMC25): the L1I holds it from the request on, and a fetch before it
    /// arrives waits in the RAB.
    pub(super) fn prefetch_instruction(&mut self, line: u64, now: u64, s: &mut Signals) {
        // The address space's last line has none after it (a trace may run code there).
        let Some(next) = line.checked_add(self.cfg.l1i.line) else { return };
        s.bump(Signal::L1iPrefetches);
        let l2_line = self.cfg.l2i.line_of(next);
        if self.l1i.contains(next) || self.isb == Some(l2_line) {
            return;
        }
        self.l1i.fill(next, false);
        let looked_up = now + self.cfg.l2i_cycles;
        if let Some(ready) = self.inflight.pending(l2_line) {
            // Its L2I line is on its way for another request: the prefetch
            // recirculates until the fill, then hits.
            s.bump(Signal::L2iRecirculatesPrefetch);
            s.bump(Signal::L2iPrefetchHits);
            self.inflight.add_prefetch(next, looked_up, ready);
            return;
        }
        let level = self.lookup(0, next, false, [Signal::L2iPrefetchHits, Signal::L3InstructionPrefetchHits], now, s);
        let ready = match level {
            Level::L2 => match self.inflight.returning(now, self.cfg.l2i.line / 32) {
                Some(done) => {
                    s.bump(Signal::L2iHitConflictsPrefetch);
                    done + self.cfg.l2i_cycles
                }
                None => looked_up,
            },
            Level::L3 => {
                s.bump(Signal::L2iPrefetchMisses);
                self.l3_request(now, PREFETCH, s) + self.cfg.l3_cycles
            }
            Level::Memory => {
                s.bump(Signal::L2iPrefetchMisses);
                s.bump(Signal::L3InstructionPrefetchMisses);
                s.bump(Signal::MemoryReads);
                let sent = self.l3_request(now, PREFETCH, s);
                self.bus_read(sent, self.cfg.line_clocks)
            }
        };
        if level != Level::L2 {
            self.inflight.add_fill(l2_line, ready);
        }
        self.inflight.add_prefetch(next, looked_up, ready);
    }
}
