//! The L2D's side of a data request (ERRATA MMC28, MMC29, MMC36-MMC38): back pressure
//! from its OzQ and request buffers, secondary misses and forced recirculates,
//! bypasses and bank conflicts, store matches in its pipeline, ordered requests, and
//! the latency of what served the request.

use super::group::Group;
use super::inflight::Starved;
use super::levels::{l3_signal, Level};
use super::ozq::{bank, Bypass, Recirculate, Secondary, Stage, StoreMatch};
use super::Montecito;
use super::{Out, Signals};
use crate::stream::Signal;

/// What the L2D made of a data request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum L2d {
    /// The level that held the line (`Level::L2`: an L2D hit).
    Found(Level),
    /// A secondary miss, suspended for the cycles until its line's fill.
    Secondary(u64),
    /// An L2D hit cancelled in the pipeline that issues again from the OzQ this many
    /// cycles later: a bypass that lost its bank (a cycle, MMC36), a read that met a
    /// store to its bytes (until the store has left, MMC37).
    Reissued(u64),
}

impl L2d {
    /// Where the line came from: a secondary miss finds it in the L2D once filled.
    pub(super) fn level(self) -> Level {
        match self {
            L2d::Found(level) => level,
            L2d::Secondary(_) | L2d::Reissued(_) => Level::L2,
        }
    }
}

/// What a data request asks of the L2D: whether it writes, whether it returns data
/// (a load's, a semaphore's), and the ordering it carries (MMC38, MMC48).
#[derive(Debug, Clone, Copy)]
pub(super) struct Request {
    pub(super) write: bool,
    pub(super) reads: bool,
    pub(super) order: Option<Order>,
}

/// A request with an ordering attribute: one the L2D performs only after the
/// thread's older requests (MMC38), or an acquire, before which none of the thread's
/// younger requests is performed (MMC48).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Order {
    /// A semaphore (`xchg`, `cmpxchg`, `fetchadd`), performed in the L2D.
    Semaphore,
    /// A release store (`st.rel`).
    Release,
    /// An acquire load (`ld.acq`).
    Acquire,
}

/// Requests the L2D issues in one clock: its tag array is "true four-ported-four
/// fully independent accesses in the same cycle" (§2.3.3.2).
const L2D_PORTS: u64 = 4;

/// §2.3.3.3: the L3 "delivers this data in four cycles": a 128-byte line, 32 bytes a
/// cycle.
pub(super) const L3_BYTES_PER_CYCLE: u64 = 32;

/// A cycle the thread waits for a semaphore's value (MMC29).
pub(super) fn semaphore_wait() -> Signals {
    Signals::default().with(Signal::DataDepStallCycles, 1)
}

/// A cycle the L1D holds the core back because the L2D takes no request: its OzQ or
/// its request buffers are full (BE_L1D_FPU_BUBBLE.L1D_L2BPRESS).
pub(super) fn back_pressure() -> Signals {
    Signals::default().with(Signal::LsuFullStallCycles, 1).with(Signal::L2dBackPressureCycles, 1)
}

/// A thread's latest acquire that the L1D did not serve: the cycle it issued, the
/// cycle its data is back, and whether it missed the L2D.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Acquire {
    pub(super) issued: u64,
    pub(super) done: u64,
    pub(super) missed: bool,
}

impl Montecito {
    /// A data request to the L2D at the current cycle (ozq.rs): it takes an OzQ entry,
    /// waiting when all 32 are taken, then finds its line's miss outstanding (a
    /// secondary miss, suspended until that fill), the line, or misses to the L3 and
    /// beyond through a request buffer. A hit or a miss that finds the OzQ empty
    /// bypasses it (MMC36): a hit takes no entry, unless it lost its bank to the
    /// cycle's first bypass.
    ///
    /// A request that reaches the L2D while an acquire of its thread is there is
    /// cancelled and issues again once the acquire has its data (MMC48), and one that
    /// comes while an `mf.a` of its thread waits for the platform to accept the
    /// thread's device writes issues once it has (MMC72): the second value is the
    /// cycles it was held. A plain request that would miss behind an acquire that
    /// missed is transformed into a prefetch of its line, which goes out at once
    /// (MMC74), unless the BRQ's forward-progress logic runs (MMC75).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn l2d(&mut self, addr: u64, req: Request, ip: u64, g: &mut Group, out: &mut Out, s: &mut Signals) -> (L2d, u64) {
        let now = self.now(out);
        if req.order == Some(Order::Release) {
            self.release_io();
        }
        let Acquire { issued, done, missed } = self.acquires[self.thread];
        let acquired = done.saturating_sub(now);
        if acquired > 0 {
            // A request of the acquire's own issue group is a late cancel.
            s.bump(if issued == now { Signal::L2dSiblingAcquireCancels } else { Signal::L2dAcquireCancels });
        }
        let fenced = self.fences[self.thread].saturating_sub(now);
        if fenced > 0 {
            // The L2D cancels it for the `mf.a` (L2D_OZQ_CANCELS0.MISC_ORDER: "a sync.i
            // or mf.a").
            s.bump(Signal::L2dMiscOrderCancels);
        }
        let held = acquired.max(fenced);
        let transforms = missed && acquired > 0 && fenced == 0 && req.order.is_none();
        if transforms && self.l2d_misses(addr) && !self.inflight.throttled(now) {
            return self.transformed(now, held, req, addr, ip, g, out, s);
        }
        let found = self.l2d_at(now + held, req, addr, ip, g, out, s);
        if fenced > 0 && matches!(found, L2d::Found(Level::L2) | L2d::Reissued(_)) {
            // A hit behind the pending `mf.a` is forced to recirculate
            // (L2D_FORCE_RECIRC.TAG_NOTOK: "L2D hits caused by ... a pending mf.a").
            s.bump(Signal::L2dTagNotOk);
            self.recirculate(now, s);
        }
        (found, held)
    }

    /// Whether a request for `addr` would miss the L2D: neither the line nor a miss of
    /// it is there.
    fn l2d_misses(&self, addr: u64) -> bool {
        !self.outer[1].contains(addr) && self.inflight.data_pending(self.cfg.l2d.line_of(addr)).is_none()
    }

    /// A request at `now` that would miss the L2D behind its thread's acquire that
    /// missed, which holds it `held` cycles. Intel's patent 6,381,678 ("Processing
    /// ordered data requests to a memory") has the port convert "a later one of the
    /// ordered data requests to a prefetch in response to the earlier one ...
    /// corresponding to a miss": its miss goes to the L3 or memory now, through the
    /// OzQ and a request buffer (L2D_FORCE_RECIRC.TRAN_PREF, "L2D miss requests that
    /// transformed to prefetches"), and the request issues again once the acquire has
    /// its data, when it finds its line's fill on its way or done. Its data comes at
    /// its own miss's time, or the L2D's latency after the acquire's data when that is
    /// later (MMC74).
    #[allow(clippy::too_many_arguments)]
    fn transformed(
        &mut self,
        now: u64,
        held: u64,
        req: Request,
        addr: u64,
        ip: u64,
        g: &mut Group,
        out: &mut Out,
        s: &mut Signals,
    ) -> (L2d, u64) {
        s.bump(Signal::L2dTransformedPrefetches);
        let found = self.l2d_at(now, req, addr, ip, g, out, s);
        // The caller found the line beyond the L2D: the L3 or memory serves it.
        let own = match found {
            L2d::Found(Level::L3) => self.cfg.l3_cycles,
            L2d::Found(Level::Memory) => self.data_ready.saturating_sub(now),
            _ => 0,
        };
        (found, (held + self.cfg.l2d_cycles).saturating_sub(own))
    }

    /// A lock's release (`st.rel`) by the thread: when it wrote device memory since
    /// the lock's acquire, Linux's `spin_unlock` first issues `mmiowb()`, which on
    /// Itanium is `mf.a` (`asm-generic/mmiowb.h`; arch/ia64's `mmiowb()`, "For most
    /// ia64 platforms, this is a simple 'mf.a' instruction"): the thread's accesses
    /// from the release on wait until the platform has accepted those writes (MMC72).
    fn release_io(&mut self) {
        let accepted = std::mem::take(&mut self.device_writes[self.thread]);
        let fence = &mut self.fences[self.thread];
        *fence = (*fence).max(accepted);
    }

    /// A device write of the thread the platform accepts at `accepted` (its bus
    /// transaction's end): the thread's next lock release waits for it (MMC72).
    pub(super) fn device_written(&mut self, accepted: u64) {
        let pending = &mut self.device_writes[self.thread];
        *pending = (*pending).max(accepted);
    }

    /// A semaphore of the thread, a lock's acquire: the device writes before it are
    /// no release's to wait for (MMC72).
    pub(super) fn locked(&mut self) {
        self.device_writes[self.thread] = 0;
    }

    /// Until when an `mf.a` of the thread holds its uncacheable accesses back (MMC72).
    pub(super) fn fence(&self) -> u64 {
        self.fences[self.thread]
    }

    /// A data request that issues to the L2D at `now`.
    #[allow(clippy::too_many_arguments)]
    fn l2d_at(&mut self, now: u64, req: Request, addr: u64, ip: u64, g: &mut Group, out: &mut Out, s: &mut Signals) -> L2d {
        let Request { write, reads, order } = req;
        self.ozq.expire(now);
        let entry = self.ozq.free(now);
        self.back_pressure(now, entry, Some(Signal::L2dOzqFull), ip, g, out, s);
        // A write's data waits for a data buffer entry too (MMC69): with one per OzQ
        // entry, as by default, never longer than for the entry.
        let free = if write { self.ozq.data_free(entry, self.cfg.ozq_data_entries) } else { entry };
        self.back_pressure(entry, free, None, ip, g, out, s);
        let empty = free == now && self.ozq.is_empty();
        let ordered = order.filter(|&o| o != Order::Acquire);
        let now = match ordered.zip(self.ozq.older(self.thread).filter(|&last| last > free)) {
            // An ordered request that finds older requests of its thread in the queue is
            // cancelled and issues again once the last has left (MMC38); the thread
            // waits for a semaphore's value, not for a release store.
            Some((order, last)) => {
                s.bump(if order == Order::Semaphore { Signal::L2dSemaphoreCancels } else { Signal::L2dReleaseCancels });
                if order == Order::Semaphore {
                    // Its acquire is in the OzQ meanwhile (L2D_OZQ_ACQUIRE, MMC48).
                    self.si.hold(Signal::L2dOzqAcquireLive, free, last);
                    self.close(g, out);
                    self.be_stall(out, ip, 0, last - free, semaphore_wait());
                } else {
                    // Its release attribute is in the OzQ until it has issued again
                    // and written (L2D_OZQ_RELEASE).
                    self.si.hold(Signal::L2dOzqReleaseLive, free, last + self.cfg.l2d_cycles);
                }
                last
            }
            None => free,
        };
        self.inflight.expire(now);
        let line = self.cfg.l2d.line_of(addr);
        if let Some(miss) = self.inflight.data_pending(line) {
            // The line was allocated by the first miss; this request waits for its data.
            self.outer[1].access(addr, write);
            let found = Secondary::of(&miss, now);
            s.bump(match found {
                Secondary::L1w => Signal::L2dSecondaryL1w,
                Secondary::Ozq => Signal::L2dSecondaryOzq,
                Secondary::Fill => Signal::L2dSecondaryFill,
            });
            if reads {
                s.bump(Signal::L2dSecondaryReads);
            }
            if write {
                s.bump(Signal::L2dSecondaryWrites);
            }
            let later = u64::from(self.inflight.suspend(line).saturating_sub(1)) / L2D_PORTS;
            if write && !reads {
                self.inflight.merge(line);
            }
            if found == Secondary::L1w {
                self.recirculate(now, s);
            }
            // The fill wakes every request suspended on it, and the L2D's four tag
            // ports issue four a clock (§2.3.3.2: "true four-ported"): the fifth and
            // later are cancelled for oversubscription and issue a clock later for
            // each four before them (L2D_OZQ_CANCELS0.OVER_SUB, MMC29).
            if later > 0 {
                s.bump(Signal::L2dOversubscribed);
            }
            self.enqueue(now, line, miss.ready + later, write);
            return L2d::Secondary(miss.ready + later - now);
        }
        let level = self.outer_access(1, addr, write, now, s);
        if let Some(StoreMatch { stage, cancelled, same_word }) = self.ozq.store_match(now, addr).filter(|_| reads && level == Level::L2) {
            // A store to its bytes is ahead in the pipeline: the read is cancelled,
            // waits in the OzQ for the store to leave, and hits (MMC37); a store the
            // L2D cancelled past its first stage cancels it too (MMC49).
            s.bump(match stage {
                Stage::L2a => Signal::L2dStoreMatchL2a,
                _ if cancelled => Signal::L2dCancelledStoreMatches,
                Stage::L2m => Signal::L2dStoreMatchL2m,
                Stage::L2d => Signal::L2dStoreMatchL2d,
                Stage::L2c => Signal::L2dStoreMatchL2c,
            });
            if stage == Stage::L2a && same_word && empty {
                // A store of its issue group to its word, both bypassing the empty
                // queue: an effective release, found after the bypass was granted
                // (L2D_OZQ_CANCELS1.LATE_BYP_EFFRELEASE, MMC1).
                s.bump(Signal::L2dLateBypassReleases);
            }
            self.enqueue(now, line, now + stage.remaining() + self.cfg.l2d_cycles, write);
            return L2d::Reissued(stage.remaining());
        }
        let store = write && !reads;
        let l2d = self.cfg.l2d;
        let set = |l: u64| (l % l2d.set_span()) / l2d.line;
        if store && level == Level::L2 && self.inflight.same_index(line, now, |other| set(other) == set(line)) {
            // A store hit beside a miss of its issue group to its set, whose fill may
            // take the store's way: its tags are not to be trusted, and it is forced
            // to recirculate (L2D_FORCE_RECIRC.TAG_NOTOK, MMC1).
            s.bump(Signal::L2dTagNotOk);
            self.recirculate(now, s);
        }
        if level == Level::L2 {
            if let Some((done, why)) = self.array_busy(now, store) {
                // The data array is writing a fill or reading a victim out: the hit
                // is cancelled and issues again once it is done (MMC49).
                s.bump(why);
                if store {
                    self.ozq.store(now, addr, true);
                }
                self.enqueue(now, line, done + self.cfg.l2d_cycles, write);
                return L2d::Reissued(done - now);
            }
        }
        let bypass = empty.then(|| self.ozq.bypass(now, bank(addr)));
        if store && bypass != Some(Bypass::BankConflict) {
            self.ozq.store(now, addr, false);
        }
        if level == Level::L2 {
            // A hit that bypassed takes no OzQ entry (L2D_BYPASS; MMC36).
            match bypass {
                Some(Bypass::First) => s.bump(Signal::L2dBypassL1d),
                Some(Bypass::Second) => s.bump(Signal::L2dBypassL1w),
                Some(Bypass::BankConflict) => {
                    s.bump(Signal::L2dBankConflicts);
                    self.enqueue(now, line, now + 1 + self.cfg.l2d_cycles, write);
                    return L2d::Reissued(1);
                }
                None => self.enqueue(now, line, now + self.cfg.l2d_cycles, write),
            }
            return L2d::Found(level);
        }
        if level == Level::L3 && bypass == Some(Bypass::First) {
            // The miss's L3 access, begun as it bypassed, stands (L2D_BYPASS.L3_DATA1).
            s.bump(Signal::L3DataBypasses);
        }
        if self.ozq.forcing(now) {
            s.bump(Signal::L2dMissWhileForced);
        }
        if self.inflight.same_index(line, now, |other| set(other) == set(line)) {
            s.bump(Signal::L2dSameIndex);
            self.recirculate(now, s);
        }
        let sent = self.request_buffer(level, line, ip, g, out, s);
        self.enqueue(now, line, sent, write);
        L2d::Found(level)
    }

    /// Whether the L2D's data array is busy at `now` for a hit (a `store`'s or a
    /// read's): writing a fill, which takes the array for the cycles the L3 delivers
    /// the line in (§2.3.3.3: "in four cycles"), or reading a dirty victim out, which
    /// takes it as long (MMC49). Returns when it is free, and the cancel: a store
    /// meeting a fill (FILL_ST_CONF; OZDATA_CONF when the fill merges stores' data from
    /// the OzQ's data buffer, which the store needs too), a read meeting a fill
    /// (OZQ_PREEMPT), either meeting a victim's read (WB_CONF).
    fn array_busy(&self, now: u64, store: bool) -> Option<(u64, Signal)> {
        let transfer = self.cfg.l2d.line / L3_BYTES_PER_CYCLE;
        let fill = self.inflight.data_returning(now, transfer).map(|(done, merges)| {
            let why = match (store, merges) {
                (true, true) => Signal::L2dOzDataConflicts,
                (true, false) => Signal::L2dFillStoreConflicts,
                (false, _) => Signal::L2dFillPreempts,
            };
            (done, why)
        });
        fill.or_else(|| self.inflight.victim_reading(now, transfer).map(|done| (done, Signal::L2dWritebackConflicts)))
    }

    /// A request forced to recirculate at `now`: one recirculate issues per clock, a
    /// second is cancelled and waits in limbo.
    fn recirculate(&mut self, now: u64, s: &mut Signals) {
        s.bump(match self.ozq.force(now) {
            Recirculate::Issued => Signal::L2dRecirculates,
            Recirculate::Cancelled => Signal::L2dRecirculateCancels,
        });
    }

    /// A request at `now` that the L2D takes only at `free` (its OzQ, the OzQ's data
    /// buffer or its request buffers being full, an uncacheable access behind an
    /// `mf.a`; `full` counts the times, where an event does): the core waits, the L1D
    /// holding it back.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn back_pressure(
        &mut self,
        now: u64,
        free: u64,
        full: Option<Signal>,
        ip: u64,
        g: &mut Group,
        out: &mut Out,
        s: &mut Signals,
    ) {
        if free > now {
            self.close(g, out);
            if let Some(full) = full {
                s.bump(full);
            }
            self.be_stall(out, ip, 0, free - now, back_pressure());
        }
    }

    /// The request at `now` for `line` takes an OzQ entry until `leaves`, and a write's data one
    /// of the data buffer's with it: a buffer that is then full stays full until the
    /// first of its entries leaves (L2D_OZDB_FULL, MMC69).
    fn enqueue(&mut self, now: u64, line: u64, leaves: u64, write: bool) {
        self.ozq.insert(self.thread, Some(line), now, leaves, write);
        // Only a write can fill the buffer: a read asks nothing of it.
        if let Some(until) = write.then(|| self.ozq.data_full(now, self.cfg.ozq_data_entries)).flatten() {
            self.si.hold(Signal::L2dOzdbFull, now, until);
        }
    }

    /// An L2D miss of line `line`, its lookup done `l2d_cycles` after its insertion,
    /// takes one of the 16 request buffers until its data is back from the L3 or
    /// memory; when all are taken the access, and the core behind it, waits for the
    /// first to free: L2D back pressure (§2.3.3.4, MMC28). Returns the cycle the miss
    /// is passed to the L3 and leaves the OzQ.
    fn request_buffer(&mut self, level: Level, line: u64, ip: u64, g: &mut Group, out: &mut Out, s: &mut Signals) -> u64 {
        let now = self.now(out);
        self.inflight.expire(now);
        let free = self.buffer_free(Starved::Data, now);
        self.back_pressure(now, free, Some(Signal::L2dFillBufferFull), ip, g, out, s);
        let sent = free.max(now + self.cfg.l2d_cycles);
        let ready = match level {
            Level::Memory => self.bus_read(free, self.cfg.line_clocks),
            _ => free + self.cfg.l3_cycles,
        };
        self.data_sent = free;
        self.data_ready = ready.max(sent);
        self.inflight.add_data(line, now, sent, self.data_ready);
        sent
    }

    /// The cycle an L1I or L1D request (`who`) at `now` gets one of the 16 request
    /// buffers. One that finds them all taken waits for the first to free, and gets
    /// it: to keep its L1 from starving, the BRQ rejects every request of the other
    /// meanwhile (ER_REJECT_ALL_L1D_REQ, ER_REJECT_ALL_L1I_REQ), and the requests that
    /// wait get their buffers in the order they came (MMC73).
    pub(super) fn buffer_free(&mut self, who: Starved, now: u64) -> u64 {
        let free = self.inflight.buffer_free(now);
        self.starving(who, now, free);
        free
    }

    /// The BRQ rejects L1 requests for `who`, which waits from `from` to `to`
    /// (`Signal::BrqRejecting`, MMC73).
    pub(super) fn starving(&mut self, who: Starved, from: u64, to: u64) {
        if let Some((from, to)) = self.inflight.starve(who, from, to) {
            self.si.flag(Signal::BrqRejecting, who.rejects(), from, to);
        }
    }

    /// An acquire that issued at `now` and has its data `latency` cycles later, and
    /// whether it `missed` the L2D: until then the L2D performs none of the thread's
    /// younger requests (behind a miss, those that miss go out as prefetches, MMC74),
    /// and the acquire is in its OzQ (L2D_OZQ_ACQUIRE; MMC29, MMC48).
    pub(super) fn acquire(&mut self, now: u64, latency: u64, missed: bool) {
        self.acquires[self.thread] = Acquire { issued: now, done: now + latency, missed };
        self.si.hold(Signal::L2dOzqAcquireLive, now, now + latency);
    }

    /// Cycles until a load's data is there from the L2D on, after the `held` cycles
    /// an acquire held its request: an L2D hit, a secondary miss's wait for its fill
    /// (at least a hit's), the L3, or memory (which may switch threads, and then
    /// costs this thread nothing).
    pub(super) fn data_latency(&mut self, (found, held): (L2d, u64), write: bool, s: &mut Signals) -> u64 {
        held + match found {
            L2d::Found(Level::L2) => self.cfg.l2d_cycles,
            L2d::Reissued(cycles) => self.cfg.l2d_cycles + cycles,
            L2d::Secondary(wait) => wait.max(self.cfg.l2d_cycles),
            L2d::Found(Level::L3) => self.cfg.l3_cycles,
            L2d::Found(Level::Memory) => self.memory_latency(s, l3_signal(1, write).1, self.data_sent, self.data_ready),
        }
    }

    /// After an `fc`, the rest of the architecture's sequence for code a program wrote
    /// (MMC38): `sync.i`, which the L2D performs once the flush (an L2D request of the
    /// thread for the L2D's lookup) and the thread's other older requests have left its
    /// queue, so that it is cancelled
    /// (L2D_OZQ_CANCELS0.MISC_ORDER); then `srlz.i`, whose microtrap flushes the
    /// pipeline (SERIALIZATION_EVENTS) while the core waits for the `sync.i`.
    pub(super) fn sync_code(&mut self, ip: u64, g: &mut Group, out: &mut Out) {
        let now = self.now(out);
        self.ozq.expire(now);
        let flushed = self.ozq.free(now) + self.cfg.l2d_cycles;
        self.ozq.insert(self.thread, None, now, flushed, false);
        // Like every ordered request, after all of the thread's older ones.
        let done = self.ozq.older(self.thread).unwrap_or(flushed);
        g.signals.bump(Signal::L2dMiscOrderCancels);
        g.signals.bump(Signal::InstructionSerializations);
        self.close(g, out);
        out.stall(ip, done - now, Some(Signal::ExceptionFlushCycles));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::montecito::{MontecitoConfig, Span};

    /// MMC74, MMC75: a load that would miss behind an acquire that missed is
    /// transformed into a prefetch and goes out at once, but not while the BRQ rejects
    /// L1 requests for a write waiting for a write buffer: then it waits for the
    /// acquire's data, and misses after it.
    #[test]
    fn forward_progress_throttles_the_transform_to_prefetches() {
        let load = |throttled: bool| {
            let mut m = Montecito::new(MontecitoConfig::new(1));
            m.acquire(0, 500, true);
            if throttled {
                m.starving(Starved::Writes, 0, 300);
            }
            let (mut spans, mut s, mut g) = (Vec::new(), Signals::default(), Group::default());
            let mut out = Out::new(&mut spans, Span::new(0, 0));
            let read = Request { write: false, reads: true, order: None };
            let found = m.l2d(0x4000_0000, read, 0x1_0000, &mut g, &mut out, &mut s);
            (s.get(Signal::L2dTransformedPrefetches), found.1, m.data_latency(found, false, &mut s))
        };
        let ((sent, sent_held, sent_at), (held, held_for, held_at)) = (load(false), load(true));
        assert_eq!((sent, held), (1, 0));
        assert_eq!(held_for, 500, "held for the acquire's data");
        assert!(sent_held < held_for && sent_at < held_at, "{sent_at} against {held_at}");
        assert!(held_at > 500 + 200, "a memory latency after the acquire's data: {held_at}");
    }
}
