//! Montecito data accesses and the memory hierarchy: the TLBs and the page walker,
//! the L1D, L2D, L2I and L3 with their write-backs and castouts, the instruction
//! prefetcher, the write-coalescing buffers, memory with its thread switches, and the
//! other core's snoops of shared lines.

use super::alat::Check;
use super::group::{address_space, Group, Port};
use super::l2d::{back_pressure, semaphore_wait, L2d, Order, Request, L3_BYTES_PER_CYCLE};
use super::levels::{l3_signal, translated, Level, Side};
use super::wcb::Piece;
use super::{Montecito, Return, NOMINAL_URGENCY, OUTER};
use super::{Out, Signals};
use crate::machine::peer::Answer;
use crate::machine::ALIAS;
use crate::program::{Access, Memory, Op, Phase};
use crate::stream::{L1dConflict, MemRef, Signal};

/// The L2D's cancels of a request that it issues again (L2D_OZQ_CANCELS0: a cancelled
/// recirculate, a bank conflict, a store match, oversubscription, an older acquire, a
/// fill or a victim in the data array, a cancelled store).
const LOAD_CANCELS: [Signal; 12] = [
    Signal::L2dRecirculateCancels,
    Signal::L2dBankConflicts,
    Signal::L2dStoreMatchL2a,
    Signal::L2dStoreMatchL2m,
    Signal::L2dStoreMatchL2d,
    Signal::L2dStoreMatchL2c,
    Signal::L2dOversubscribed,
    Signal::L2dAcquireCancels,
    Signal::L2dSiblingAcquireCancels,
    Signal::L2dFillPreempts,
    Signal::L2dWritebackConflicts,
    Signal::L2dCancelledStoreMatches,
];

impl Montecito {
    /// What the write-coalescing buffers `sent` to memory: one write per line or piece,
    /// each counted in a cycle of its own at the iteration's end (a drain sends up to
    /// 64, which one cycle cannot count). Returns the cycle the last has a write buffer
    /// (`now` if none waited).
    pub(super) fn bus_writes(&mut self, sent: &[Piece], now: u64) -> u64 {
        let mut buffered = now;
        for piece in sent {
            let clocks = if *piece == Piece::Line { self.cfg.line_clocks } else { 1 };
            buffered = buffered.max(self.bus_write(now, clocks).0);
            let kind = match piece {
                Piece::Line => Signal::WcLines,
                Piece::Bytes32 => Signal::Wc32,
                Piece::Bytes16 => Signal::Wc16,
                Piece::Bytes8Low => Signal::Wc8Low,
                Piece::Bytes8High => Signal::Wc8High,
            };
            let mut s = Signals::default().with(Signal::MemoryWrites, 1).with(kind, 1);
            self.write_data(&mut s);
            self.flushed.push(s);
        }
        buffered
    }

    /// A write the core made at `now` that had its write buffer only at `buffered`: the
    /// core waits for it, the L2D holding the store back.
    pub(super) fn write_wait(&mut self, now: u64, buffered: u64, ip: u64, g: &mut Group, out: &mut Out) {
        if buffered > now {
            self.close(g, out);
            self.be_stall(out, ip, 0, buffered - now, back_pressure());
        }
    }

    /// One write's data enters the system interface's write data queue: under fault
    /// injection, every `fault_every`-th has an ECC error, single- and double-bit in
    /// turn (MMC26).
    pub(super) fn write_data(&mut self, s: &mut Signals) {
        if let Some(error) = self.faults.as_mut().and_then(|f| f.access(&[Signal::WdqEccSingle, Signal::WdqEccDouble])) {
            s.bump(error);
        }
    }

    /// Looks `addr` up in the first-level TLB of `side`, then the second; a miss in
    /// both is walked. Returns the cycles it costs.
    pub(super) fn translate(&mut self, side: Side, addr: u64, page: u64, context: u32, now: u64, s: &mut Signals) -> u64 {
        let (l1, l2, miss) = match side {
            Side::Instruction => (&mut self.l1_itlb, &mut self.l2_itlb, Signal::ITlbMisses),
            Side::Data => (&mut self.l1_dtlb, &mut self.l2_dtlb, Signal::DTlbMisses),
        };
        if l1.access(addr, page, context) {
            return 0;
        }
        s.set(miss, 1);
        if l2.access(addr, page, context) {
            return self.cfg.l2_tlb_cycles;
        }
        s.set(Signal::MainTlbMisses, 1);
        self.cfg.l2_tlb_cycles + self.walk(addr, page, context, now, s)
    }

    /// The hardware page walker reads the VHPT entry of the page through the L2D and
    /// the L3; returns its cycles. The entry is cached as a line of its own at an alias
    /// of its page (as on SPARC, ERRATA MSP3).
    pub(super) fn walk(&mut self, addr: u64, page: u64, context: u32, now: u64, s: &mut Signals) -> u64 {
        let entry = ALIAS | (addr & !(page - 1)) | (u64::from(context % 8) * 128);
        // An entry the L2D lacks fills its line, Exclusive (the VHPT is no shared
        // data), in the cycle it is back.
        match self.outer_access(1, entry, false, now, s) {
            Level::L2 => self.cfg.l2d_cycles,
            Level::L3 => {
                self.si.hold(Signal::L2dFillsExclusive, now + self.cfg.l3_cycles, now + self.cfg.l3_cycles + 1);
                self.cfg.l3_cycles
            }
            Level::Memory => {
                let ready = self.bus_read(now, self.cfg.line_clocks);
                self.si.hold(Signal::L2dFillsExclusive, ready, ready + 1);
                self.memory_latency(s, Signal::L3DataReadMisses, now, ready)
            }
        }
    }

    /// Cycles of a demand read from memory: an L3 miss (§2.4.1.1), counted as `miss`,
    /// sent at cycle `now`, whose data is back at cycle `ready`. It lowers the
    /// thread's urgency; when the other thread is now more urgent (its own misses back by now raise it) the core
    /// switches to it, and the read completes in the background at `ready` (the miss
    /// and the read count there, ERRATA MD12): the thread does not wait for it now,
    /// but when it comes back before `ready` (`Montecito::switch_from`).
    pub(super) fn memory_latency(&mut self, s: &mut Signals, miss: Signal, now: u64, ready: u64) -> u64 {
        self.switch_event(s, Some(miss), now, ready)
    }

    /// Cycles of an uncacheable read (data from write-coalescing or device memory, or
    /// uncacheable code) sent at cycle `now`, its data back at cycle `ready`: as an
    /// L3 miss's (§2.4.1.1: the L3 miss and data return events occur for "cacheable or
    /// uncacheable" accesses), it may switch threads, and then completes in the
    /// background; its bus transaction is counted as it is sent (ERRATA MMC62).
    pub(super) fn uncached_latency(&mut self, s: &mut Signals, now: u64, ready: u64) -> u64 {
        self.switch_event(s, None, now, ready)
    }

    /// An L3 miss event (`memory_latency`) of a cacheable read, counted as `miss`, or
    /// of an uncacheable one (`None`).
    fn switch_event(&mut self, s: &mut Signals, miss: Option<Signal>, now: u64, ready: u64) -> u64 {
        let t = self.thread;
        self.urgency[t] = self.urgency[t].saturating_sub(1);
        let other = (0..self.urgency.len()).filter(|&o| o != t).map(|o| self.urgency_at(o, now)).max();
        let wins = self.may_switch && other.is_some_and(|u| u > self.urgency[t]);
        if wins && !self.other_awake() {
            // The other thread is halted in low power: the switch is gated
            // (THREAD_SWITCH_GATED.LP), a missed opportunity too.
            s.bump(Signal::ThreadSwitchesGatedLowPower);
        } else if wins && !self.progressed {
            // The thread switched in has retired nothing yet: the switch is gated for
            // forward progress (MMC46), a missed opportunity too.
            s.bump(Signal::ThreadSwitchesGated);
        } else if wins {
            self.switch = true;
            self.returns[t].push(Return { ready, line: miss.is_some() });
            return 0;
        }
        if self.may_switch && other.is_some() {
            // A switch event the urgencies turned down, or gated (THREAD_SWITCH_EVENTS.MISSED).
            s.bump(Signal::ThreadSwitchesMissed);
        }
        // The thread waits for its data, whose return raises its urgency again, as far
        // as nominal (§2.4.1.3: "every L3 return event increments the urgency by 1 as
        // long as the urgency is below 5").
        if self.urgency[t] < NOMINAL_URGENCY {
            self.urgency[t] += 1;
        }
        if let Some(miss) = miss {
            s.bump(Signal::MemoryReads);
            s.bump(miss);
        }
        ready.saturating_sub(now)
    }

    /// Looks `addr` up in outer cache `which` (0 L2I, 1 L2D; `write` for a store's or
    /// semaphore's read for ownership), then the L3, allocating on a miss; dirty L2D
    /// victims are written back into the L3, L3 ones to memory. An L3 hit is counted
    /// here; a miss is the caller's to count (`memory_latency`).
    pub(super) fn outer_access(&mut self, which: usize, addr: u64, write: bool, now: u64, s: &mut Signals) -> Level {
        let (l2_hit, l3_hit) =
            if which == 0 { (Signal::L2InstructionHits, l3_signal(0, false).0) } else { (Signal::L2DataHits, l3_signal(1, write).0) };
        self.lookup(which, addr, write, [l2_hit, l3_hit], now, s)
    }

    /// Data speculation (alat.rs, MMC33): a cacheable store enters the iteration's
    /// stores; a load the compiler advanced above one of them is checked.
    fn speculate(&mut self, op: &Op, stream: u8, addr: u64, size: u64, s: &mut Signals) {
        let fp = matches!(op, Op::FpLoad(_));
        if op.writes() {
            self.alat.store(stream, addr, size);
        } else if matches!(op, Op::Load(_) | Op::FpLoad(_) | Op::BlockLoad(_)) {
            let [checks, failed, displaced] = if fp {
                [Signal::AlatChecksFp, Signal::AlatFailedFp, Signal::AlatDisplacedFp]
            } else {
                [Signal::AlatChecksInt, Signal::AlatFailedInt, Signal::AlatDisplacedInt]
            };
            let Some(check) = self.alat.load(stream, addr, size) else { return };
            s.bump(checks);
            if check != Check::Passed {
                s.bump(failed);
            }
            if check == Check::Displaced {
                s.bump(displaced);
            }
        }
    }

    /// The lookup of `outer_access`, counting `hits` (the outer cache's, the L3's).
    pub(super) fn lookup(&mut self, which: usize, addr: u64, write: bool, hits: [Signal; 2], now: u64, s: &mut Signals) -> Level {
        let lookup = self.outer[which].access(addr, write);
        if which == 0 && lookup.victim.is_some() {
            s.bump(Signal::L2iVictims);
        }
        if lookup.victim.is_some_and(|v| v.passed_invalid) {
            s.bump(Signal::L2dBadLinesSelected);
        }
        if let Some(v) = lookup.victim.filter(|v| v.dirty) {
            if which == 1 {
                // The L2D reads the victim out after the miss's lookup (MMC49).
                let read = now + self.cfg.l2d_cycles + self.cfg.victim_read_delay + self.cfg.l2d.line / L3_BYTES_PER_CYCLE;
                self.inflight.add_victim_read(read);
            }
            let l3 = &mut self.outer[OUTER - 1];
            s.bump(if l3.contains(v.line) { Signal::L3WritebackHits } else { Signal::L3WritebackMisses });
            let evicted = l3.fill(v.line, true);
            self.l3_victim(evicted, now, s);
        }
        if lookup.hit {
            s.bump(hits[0]);
            return Level::L2;
        }
        if which == 1 {
            s.bump(Signal::L2DataMisses);
        }
        let l3 = self.outer[OUTER - 1].access(addr, false);
        self.l3_victim(l3.victim, now, s);
        if l3.hit {
            s.bump(hits[1]);
            Level::L3
        } else {
            Level::Memory
        }
    }

    /// A line the L3 evicted at `now`: a dirty one is written back to memory, and the
    /// L3's next fill waits until it has a write buffer; a clean one is announced with
    /// a clean castout when the chipset wants them (MMC22).
    fn l3_victim(&mut self, victim: Option<crate::machine::cache::Victim>, now: u64, s: &mut Signals) {
        match victim {
            Some(v) if v.dirty => {
                self.write_back(now);
                s.bump(Signal::MemoryWrites);
                self.write_data(s);
            }
            Some(_) if self.cfg.clean_castouts => s.bump(Signal::CleanCastouts),
            _ => {}
        }
    }

    /// What the other core has to say about a cacheable access that found its line at
    /// `level` (MMC23), for a line of shared data: a line read from the bus is snooped
    /// (HIT, HITM); a store to a line it shares takes its copy away (BIL). Then the
    /// state the L2D fills the line in, when it missed: Modified for a store, Shared
    /// when the other core kept a copy, else Exclusive.
    fn coherence(&mut self, shared: bool, addr: u64, write: bool, level: Option<Level>, now: u64, s: &mut Signals) {
        let line = self.cfg.l3.line_of(addr);
        if shared && self.cfg.cores > 1 {
            let answer = self.peer.snoop(line, write);
            if level == Some(Level::Memory) {
                let signal = match (write, answer) {
                    (_, Answer::Miss) => None,
                    (false, Answer::Hit) => Some(Signal::BrlHit),
                    (false, Answer::Hitm) => Some(Signal::BrlHitm),
                    (true, Answer::Hit) => Some(Signal::BrilHit),
                    (true, Answer::Hitm) => Some(Signal::BrilHitm),
                };
                if let Some(signal) = signal {
                    s.bump(signal);
                }
            } else if write && answer != Answer::Miss {
                // A store to a line this core holds and the other shares.
                s.bump(Signal::BusInvalidates);
                self.bus_invalidate(now);
                s.bump(Signal::StoresHitShared);
            }
        }
        if matches!(level, Some(Level::L3 | Level::Memory)) {
            let state = if write {
                Signal::L2dFillsModified
            } else if shared && self.peer.holds(line) {
                Signal::L2dFillsShared
            } else {
                Signal::L2dFillsExclusive
            };
            // The fill is laid in the cycle its data is back; the other core's snoop
            // may yet meet one of a shared line on its way (MMC51).
            let ready = self.inflight.data_pending(line).map_or(now, |d| d.ready);
            if shared && self.cfg.cores > 1 {
                self.fills.add(line, ready, state);
            } else {
                self.si.hold(state, ready, ready + 1);
            }
        }
    }

    /// A load, store, semaphore, lfetch or line transfer.
    #[allow(clippy::too_many_arguments)]
    /// One data access of `op`; returns the cycles until a read's data is back (0 when
    /// the L1D served it).
    pub(super) fn memory(&mut self, phase: &Phase, k: u64, op: &Op, a: Access, ip: u64, g: &mut Group, out: &mut Out) -> u64 {
        let stream = &phase.streams[usize::from(a.stream)];
        let addr = stream.position(k) + u64::from(a.offset);
        if stream.fresh && !phase.present(a.stream, k) {
            self.page_fault(phase, addr, a.stream, ip, g, out);
        }
        let write = op.writes();
        let reads = !write || matches!(op, Op::Atomic(_) | Op::Modify(_));
        let port = if reads { Port::Load } else { Port::Store };
        // A full group issues first, so that the access is timed from the cycle it
        // issues in.
        self.make_room(g, out, ip, port);
        let mut s = Signals::default();
        let now = self.now(out);
        let cycles = self.translate(Side::Data, addr, self.cfg.page(stream.page), address_space(phase), now, &mut s);
        let data_tlb = (cycles > 0).then(|| translated(&s));
        if cycles > 0 {
            // The translation holds the access back: an L1D pipeline bubble, for the
            // L2DTLB's transfer or for the page walker (BE_L1D_FPU_BUBBLE.L1D_TLB, HPW).
            self.close(g, out);
            let cause = if s.get(Signal::MainTlbMisses) > 0 { Signal::HpwStallCycles } else { Signal::DTlbMissWaitCycles };
            let stall = Signals::default().with(Signal::LsuFullStallCycles, 1).with(cause, 1);
            out.emit(ip, 1, s.union(stall));
            self.be_stall(out, ip, 1, cycles - 1, stall);
            s = Signals::default();
        }
        // A walk's L3 miss may have decided a switch.
        self.note_decision(g, out);
        let misaligned = op.misaligned(addr);

        let performed = misaligned && performs_misaligned(addr, a.size, reads, write, stream.memory);
        if misaligned && !performed {
            // The Unaligned Data Reference fault, after the translation's (MMC56): the
            // kernel's handler performs the access and goes on after it.
            self.fault(phase, ip, self.cfg.unaligned_cycles, g, out);
        }
        let prefetch = matches!(op, Op::Prefetch(_));
        let order = match op {
            Op::Atomic(_) => Some(Order::Semaphore),
            Op::Store(_) if std::mem::take(&mut self.release) => Some(Order::Release),
            Op::Load(_) if std::mem::take(&mut self.acquiring) => Some(Order::Acquire),
            _ => None,
        };
        let fp_load = matches!(op, Op::FpLoad(_));
        if matches!(op, Op::Atomic(_)) {
            s.set(Signal::Atomics, 1);
            self.locked();
        }
        if fp_load {
            s.set(Signal::FpLoads, 1);
        }
        let mut latency = 0;
        // An uncacheable read's latency, which the data EAR sees though the thread
        // switched away from it (`latency` 0).
        let mut uncached = 0;
        // The L1D did not serve the read (FP loads and semaphores are the L2D's).
        let mut l1d_missed = false;
        if !prefetch {
            if reads {
                s.set(Signal::Loads, 1);
            }
            if write {
                s.set(Signal::Stores, 1);
            }
            if stream.memory != Memory::Cacheable {
                for (signal, on) in [
                    (Signal::UncachedLoads, reads),
                    (Signal::UncachedStores, write),
                    (Signal::UncachedFpLoads, fp_load),
                    (Signal::UncachedAtomics, matches!(op, Op::Atomic(_))),
                ] {
                    if on {
                        s.set(signal, 1);
                    }
                }
            }
        }
        if performed && reads {
            s.set(Signal::MisalignedReads, 1);
        }
        if performed && write {
            s.set(Signal::MisalignedWrites, 1);
        }
        if stream.memory != Memory::Cacheable {
            // An `mf.a` of the thread holds it back until the platform has accepted
            // the thread's device writes (MMC72).
            let (now, fence) = (self.now(out), self.fence());
            if fence > now {
                s.bump(Signal::L2dMiscOrderCancels);
                self.back_pressure(now, fence, None, ip, g, out, &mut s);
            }
            // An uncacheable request reaches the L2D too: one that finds the OzQ empty
            // begins an L3 access as it bypasses, which the L2D cancels for its memory
            // attribute (L2D_L3ACCESS_CANCEL.SPEC_L3_BYP; MMC36).
            let now = self.now(out);
            self.ozq.expire(now);
            if self.ozq.is_empty() {
                s.bump(Signal::L3BypassAttributeCancels);
            }
        }
        match stream.memory {
            Memory::Cacheable => {
                // What the L2D made of the request (`None`: the L1D served a read).
                let mut found = None;
                if fp_load {
                    // The L1D holds no FP data: FP loads are served by the L2D and
                    // beyond, a cycle later for the format conversion (Table 2-8 note
                    // 4: M+1, M = 5 for the L2D). A read the thread switched away from
                    // completes unseen.
                    l1d_missed = true;
                    let l2d = self.l2d(addr, Request { write: false, reads: true, order: None }, ip, g, out, &mut s);
                    latency = match self.data_latency(l2d, false, &mut s) {
                        0 => 0,
                        cycles => cycles + 1,
                    };
                    found = Some(l2d.0);
                } else if reads || prefetch {
                    if !write && !prefetch {
                        // A load of bytes a store has not written yet (MMC44): an
                        // advanced load's check load (`ld.c`, MMC33) is ordered against
                        // the store by its check.
                        let why = if self.alat.advances(a.stream) { L1dConflict::Check } else { L1dConflict::Store };
                        self.l1d_conflict(self.l1d_pipe.storing(addr & !7, self.now(out)), why, ip, g, out);
                    }
                    // The L1D allocates on reads only (write-through, Table 2-9).
                    if !self.l1d.access(addr, false).hit {
                        l1d_missed = true;
                        if !prefetch {
                            s.set(Signal::DCacheMisses, 1);
                        }
                        // A load's miss needs one of the L1D's eight fills (MMC44); an
                        // lfetch is the L2D's (below).
                        if !prefetch {
                            let now = self.now(out);
                            let free = self.l1d_pipe.fill_buffer(now);
                            self.l1d_conflict((free > now).then_some(free), L1dConflict::Recirculate, ip, g, out);
                        }
                        let l2d = self.l2d(addr, Request { write, reads: !prefetch, order }, ip, g, out, &mut s);
                        if prefetch {
                            // An lfetch the L1D misses is an L2D operation (L2D_OPS_ISSUED).
                            let served = match l2d.0.level() {
                                Level::L2 => Signal::L2PrefetchHitsL2,
                                Level::L3 => Signal::L2PrefetchHitsL3,
                                Level::Memory => Signal::L2PrefetchLocalMemory,
                            };
                            s.set(served, 1);
                        }
                        latency = self.data_latency(l2d, write, &mut s);
                        if latency > 0 && !prefetch {
                            self.l1d_pipe.fill(self.cfg.l1d.line_of(addr), self.now(out) + latency);
                        }
                        found = Some(l2d.0);
                    } else if write {
                        // A semaphore is performed in the L2D (L2D_OPS_ISSUED.RMW), also
                        // when the L1D holds its line, and returns its value from there.
                        let l2d = self.l2d(addr, Request { write: true, reads: true, order }, ip, g, out, &mut s);
                        let cycles = self.data_latency(l2d, true, &mut s);
                        if matches!(op, Op::Atomic(_)) {
                            latency = cycles;
                            l1d_missed = true;
                        }
                        found = Some(l2d.0);
                    }
                } else {
                    // A store waits for a fill of its line under way (MMC44), then
                    // writes through to the L2D, which allocates it.
                    let line = self.cfg.l1d.line_of(addr);
                    self.l1d_conflict(self.l1d_pipe.filling(line, self.now(out)), L1dConflict::Fill, ip, g, out);
                    let written = self.now(out) + self.cfg.store_write_cycles;
                    self.l1d_pipe.store(addr & !7, written);
                    if self.l1d.contains(addr) {
                        self.l1d.access(addr, false);
                    }
                    let (l2d, _) = self.l2d(addr, Request { write: true, reads: false, order }, ip, g, out, &mut s);
                    if l2d == L2d::Found(Level::Memory) {
                        self.memory_latency(&mut s, l3_signal(1, true).1, self.data_sent, self.data_ready);
                    }
                    found = Some(l2d);
                }
                if l1d_missed && matches!(order, Some(Order::Acquire | Order::Semaphore)) {
                    let missed = !matches!(found, Some(L2d::Found(Level::L2) | L2d::Reissued(_)));
                    self.acquire(self.now(out), latency, missed);
                }
                if reads && matches!(found, Some(L2d::Found(Level::L2) | L2d::Reissued(_))) {
                    // The L2D returns the data `latency` cycles after the access issues;
                    // a thread switch waits for it (MD57).
                    let back = self.now(out) + latency;
                    let last = &mut self.l2d_returns[self.thread];
                    *last = (*last).max(back);
                }
                // The access's own L3 miss decides before it joins its group.
                self.note_decision(g, out);
                self.speculate(op, a.stream, addr, u64::from(a.size), &mut s);
                let level = found.map(L2d::level);
                let now = self.now(out);
                self.coherence(stream.shared, addr, write, level, now, &mut s);
            }
            Memory::NonCacheable => {
                // Non-cacheable memory is write-coalescing (MMC22): reads go to the
                // bus as partial reads, stores gather in the coalescing buffers.
                let now = self.now(out);
                if reads {
                    s.bump(Signal::MemoryReads);
                    s.bump(Signal::PartialMemoryReads);
                    let ready = self.bus_read(now, 1);
                    uncached = ready - now;
                    latency = self.uncached_latency(&mut s, now, ready);
                } else {
                    let mut sent = Vec::new();
                    self.wcb.store(addr, a.size, &mut sent);
                    let buffered = self.bus_writes(&sent, now);
                    self.write_wait(now, buffered, ip, g, out);
                }
            }
            Memory::Device => {
                // Uncacheable: each access is its own partial bus transaction.
                s.bump(if reads { Signal::DeviceReads } else { Signal::DeviceWrites });
                let now = self.now(out);
                if reads {
                    let ready = self.device_read(now);
                    uncached = ready - now;
                    latency = self.uncached_latency(&mut s, now, ready);
                } else {
                    self.write_data(&mut s);
                    let (buffered, on_bus) = self.bus_write(now, 1);
                    self.device_written(on_bus.done);
                    self.write_wait(now, buffered, ip, g, out);
                }
            }
        }
        self.join(g, out, ip, port);
        g.signals.add(&s);
        // The cycle's data reference is its first read's (what the data EAR and the
        // read-miss events see), else its first store's (MMC1).
        if g.mem.is_none_or(|m| m.write && reads) && !prefetch {
            g.mem = Some(MemRef { addr, stride: stream.stride, size: a.size, write });
            // What the data EAR sees of the miss (§3.3.9): a read the L1D did not serve
            // (an FP load never is; an uncacheable one never is), and its latency; a
            // read the thread switched away from took memory's all the same.
            let missed = reads && (l1d_missed || stream.memory != Memory::Cacheable);
            let latency = match (missed, latency) {
                (false, _) => 0,
                (true, 0) if uncached > 0 => uncached,
                (true, 0) => self.cfg.memory_cycles,
                (true, cycles) => cycles,
            };
            g.detail.data_ip = ip;
            g.detail.data_latency = u16::try_from(latency).unwrap_or(u16::MAX);
            g.detail.data_tlb = data_tlb;
        }
        let waits = a.use_next || matches!(op, Op::Atomic(_));
        if waits && reads && !prefetch {
            // The consumer of the value is in the next group: an architected stop.
            g.signals.bump(Signal::ExplicitStops);
            self.close(g, out);
        }
        if waits && reads && !prefetch && latency > 0 {
            let waiting = if matches!(op, Op::Atomic(_)) && stream.memory == Memory::Cacheable {
                semaphore_wait()
            } else {
                // A load the L2D cancelled and issued again: the wait for it is a
                // cancelled load's too (BE_EXE_BUBBLE.CANCEL, MMC47).
                let cancelled = LOAD_CANCELS.iter().any(|&c| s.get(c) > 0);
                Signals::default().with(Signal::DataDepStallCycles, 1).with(Signal::CancelledLoadCycles, u8::from(cancelled))
            };
            self.be_stall(out, ip, 0, latency, waiting);
        }
        if phase.watch.is_some_and(|w| !prefetch && w.hits(addr, a.size, write)) {
            // A data breakpoint register pair matches (DATA_DEBUG_REGISTER_MATCHES) and
            // the access takes its data debug fault (DATA_DEBUG_REGISTER_FAULT) to the
            // debugger, whose handling the program's next phases are (MD58).
            self.close(g, out);
            self.hypervisor(phase, ip, g, out);
            let fault = Signals::default().with(Signal::DataDebugMatches, 1).with(Signal::DataDebugFaults, 1);
            out.emit(ip, 1, fault.with(Signal::ExceptionFlushCycles, 1));
            out.stall(ip, self.cfg.trap_cycles.saturating_sub(1), Some(Signal::ExceptionFlushCycles));
            g.resteered = true;
        }
        latency
    }
}

/// Whether the hardware performs a misaligned access of `size` bytes at `addr` (a read
/// when `reads`, a write when `write`, to `memory`): §4.15 MISALIGNED_LOADS_RETIRED,
/// "PSR.ac = 0 and not crossing the 0-7 or 8-15 byte boundary is the only time it will
/// not trap", MISALIGNED_STORES_RETIRED, "not crossing the 0-15 byte boundary of a WB
/// page". Linux runs with PSR.ac 0; a semaphore is both (MMC56).
fn performs_misaligned(addr: u64, size: u8, reads: bool, write: bool, memory: Memory) -> bool {
    let within = |chunk: u64| addr / chunk == addr.saturating_add(u64::from(size.max(1)) - 1) / chunk;
    (!reads || within(8)) && (!write || (within(16) && memory == Memory::Cacheable))
}
