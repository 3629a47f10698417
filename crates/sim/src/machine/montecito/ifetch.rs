//! The instruction side's requests beyond the L1I (ERRATA MMC21, MMC25, MMC28): demand
//! fetches that missed it, and the prefetches that ask for the lines ahead, each from
//! the L2I on, through the request buffers the L2I shares with the L2D.

use super::group::address_space;
use super::inflight::Starved;
use super::levels::Level;
use super::Montecito;
use super::Signals;
use crate::program::Phase;
use crate::stream::{Signal, UNCACHED_PREFETCH};

/// A `.many` branch's instruction stream (MMC50): the line after the demand fetch's,
/// the next line the stream asks for, and the cycle a stall for a RAB entry ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stream {
    pub(super) after: u64,
    pub(super) next: u64,
    pub(super) resume: u64,
}

/// The bits of `Signal::L2iL3Rejects` and `Signal::L2iHitConflicts`: a demand
/// fetch's request, a prefetch's.
const DEMAND: u8 = 0b01;
const PREFETCH: u8 = 0b10;

impl Montecito {
    /// Whether a walk for the code at `addr`, on `page`-byte pages, finds the page not
    /// present (MMC58): a process's text on base pages is mapped as it first runs
    /// (demand paging, as on SPARC, MSP21), so the first walk of each such page of an
    /// address space faults; the machine remembers the pages mapped for the whole run.
    /// The kernel's text, and text on large pages, are mapped with their mapping.
    pub(super) fn text_faults(&mut self, phase: &Phase, addr: u64, page: u64) -> bool {
        phase.privilege.is_user() && page == self.cfg.base_page && self.mapped_code.insert((address_space(phase), addr & !(page - 1)))
    }

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
                    s.flag(Signal::L2iHitConflicts, DEMAND);
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
        let free = self.buffer_free(Starved::Instruction, now);
        if free > now {
            s.flag(Signal::L2iL3Rejects, kind);
        }
        free
    }

    /// The IFR's prefetches after a fetch from a new L1I line `line`, issued at cycle
    /// `now`: while a `.many` branch's stream runs (MMC50) the stream may now run up
    /// to `stream_lines` past the line after it, and asks for them one an issue group
    /// ([`Montecito::stream_step`]); otherwise the next-line prefetcher asks for the
    /// line after (MMC21).
    pub(super) fn prefetch_instructions(&mut self, line: u64, now: u64, s: &mut Signals) {
        // The address space's last line has none after it (a trace may run code there).
        let Some(after) = line.checked_add(self.cfg.l1i.line) else {
            self.streaming = None;
            return;
        };
        match &mut self.streaming {
            Some(stream) => {
                stream.after = after;
                stream.next = stream.next.max(after);
            }
            None => self.prefetch_line(after, now, s),
        }
    }

    /// A taken branch to `target`: a call or a return, which the compiler gives the
    /// `.many` hint (`br.call.sptk.many`, `br.ret.sptk.many`), starts streaming from
    /// the line after the target's; any other ends the stream (MMC50).
    pub(super) fn redirect(&mut self, target: u64, many: bool) {
        let after = self.cfg.l1i.line_of(target).checked_add(self.cfg.l1i.line);
        self.streaming = after.filter(|_| many).map(|after| Stream { after, next: after, resume: 0 });
    }

    /// The stream's request in the cycle an issue group issues, `now`: the prefetch
    /// pipeline takes one address a cycle, and the machine gives each issue group's
    /// cycle one, so a stream's lines are asked for over the groups after its branch
    /// (a stall's cycles, in which the hardware could ask for more, ask for none).
    /// The stream runs up to `stream_lines` past the line after the demand fetch's.
    /// A line the L1I lacks needs one of the RAB's 7 prefetch entries (Table 2-9):
    /// with none free the pipeline stalls until one is (L1I_PREFETCH_STALL; FLOW when
    /// the stream is no further ahead than the line after the demand fetch's), while
    /// the PVAB holds the addresses the stream computes meanwhile, one a cycle; a stall
    /// longer than its `pvab_entries` overflows it, and the stream ends.
    pub(super) fn stream_step(&mut self, now: u64, s: &mut Signals) {
        let Some(stream) = self.streaming else { return };
        let bytes = self.cfg.l1i.line;
        let last = stream.after.saturating_add((self.cfg.stream_lines - 1) * bytes);
        if stream.next > last || now < stream.resume {
            return;
        }
        if self.prefetch_needs_entry(stream.next) {
            let free = self.inflight.rab_free(now);
            if free > now {
                // A FLOW stall's cycles are 2, the other stalls' 1.
                for (from, to) in self.inflight.stall(stream.next == stream.after, now, free).into_iter().flatten() {
                    self.si.flag(Signal::PrefetchStall, 1, from, to);
                }
                if free - now > self.cfg.pvab_entries {
                    s.bump(Signal::PvabOverflows);
                    self.streaming = None;
                } else {
                    self.streaming = Some(Stream { resume: free, ..stream });
                }
                return;
            }
        }
        s.bump(Signal::L1iStrmPrefetches);
        self.prefetch_line(stream.next, now, s);
        // A stream that reaches the address space's end stops there.
        self.streaming = stream.next.checked_add(bytes).map(|next| Stream { next, ..stream });
    }

    /// The next-line prefetcher's request for the bundle pair `next` of uncacheable
    /// code at cycle `now`, after a fetch from the pair before it (MMC76): the L2I
    /// reads it from the bus as a partial read, as a demand fetch's (L2I_UC_READS
    /// PFTCH), and it arrives in the streaming buffer, which holds it for the fetch
    /// that reaches it and caches nothing; a fetch before it arrives waits in the RAB,
    /// where it holds an entry until then.
    pub(super) fn prefetch_uncached(&mut self, next: u64, now: u64, s: &mut Signals) {
        s.bump(Signal::L1iPrefetches);
        if self.isb == Some(next) || self.inflight.prefetch(next).is_some() {
            return;
        }
        s.flag(Signal::UncachedFetches, UNCACHED_PREFETCH);
        s.bump(Signal::MemoryReads);
        s.bump(Signal::PartialMemoryReads);
        let ready = self.bus_read(now, 1);
        self.isb = Some(next);
        self.inflight.add_prefetch(next, now + self.cfg.l2i_cycles, ready);
        self.si.hold(Signal::RabLive, now, ready);
    }

    /// Whether a prefetch of L1I line `line` would take a RAB entry: the L1I and the
    /// streaming buffer lack it.
    fn prefetch_needs_entry(&self, line: u64) -> bool {
        !self.l1i.contains(line) && self.isb != Some(self.cfg.l2i.line_of(line))
    }

    /// A prefetch of L1I line `next` at cycle `now` (MMC21): one the L1I, the
    /// streaming buffer and the RAB lack is read from the L2I, the L3 or memory, and
    /// arrives after that level's latency (MMC25): the L1I holds it from the request
    /// on, a fetch before it arrives waits in the RAB, and it holds a RAB entry until
    /// then.
    fn prefetch_line(&mut self, next: u64, now: u64, s: &mut Signals) {
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
            self.si.hold(Signal::RabLive, now, ready);
            return;
        }
        let level = self.lookup(0, next, false, [Signal::L2iPrefetchHits, Signal::L3InstructionPrefetchHits], now, s);
        let ready = match level {
            Level::L2 => match self.inflight.returning(now, self.cfg.l2i.line / 32) {
                Some(done) => {
                    s.flag(Signal::L2iHitConflicts, PREFETCH);
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
        self.si.hold(Signal::RabLive, now, ready);
    }
}
