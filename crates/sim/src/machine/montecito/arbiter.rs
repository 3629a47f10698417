//! This core's requests to the system interface, with lifetimes (docs/engine.md, E3):
//! the arbiter's queues (§2.5), the write buffers before them (§2.3.3.4) and the data
//! bus are structures a request holds while it is in them, so a full one makes the
//! request, and through it the core, wait; transfers take the data bus one at a time.
//!
//! - A read from memory takes a request-queue entry (four per core) from the cycle it
//!   reaches the arbiter until its request phase (ADS): §2.5, "deallocated once the
//!   transaction is issued on the system interface". Its data comes over the bus no
//!   earlier than memory's latency after it left the queue, once the bus is free.
//! - A write (an L3 dirty victim, a coalesced or uncacheable store, an `fc`'s modified
//!   line) waits in one of the eight write buffers (§2.3.3.4: "the L3 dirty victim
//!   resources has grown by 2 entries to 8", "a modified L2D victim or partial write
//!   may be allocated to one of 8 write buffers") for one of the two write data
//!   buffers of explicit write-backs (§2.5), which it holds until its data has gone
//!   over the bus; its address is in the write address queue (two per core) until
//!   its ADS. A full set of write buffers holds back the request that made the write.
//!
//! The other core's and the I/O bridge's transactions are laid over the timeline from
//! what each iteration counted (`si.rs`) and take nothing from these structures: they
//! do not delay this core's, and this core's do not delay theirs (MMC24).

use crate::machine::mem::{Pool, Queue, Server};

use super::inflight::Starved;
use super::si::{BRQ, IOQ, READ_OUT, RQ_BOTH, WRITEQ_BOTH};
use super::Montecito;
use crate::stream::Signal;

/// §2.5: request-queue entries and write data buffers for explicit write-backs per core.
pub const REQUEST_QUEUE: usize = 4;
pub const WRITE_DATA: usize = 2;
/// §2.3.3.4: the write buffers before them.
pub const WRITE_BUFFERS: usize = 8;

/// The structures this core's requests hold, and the latest arrival each has seen:
/// a pool serves arrivals in order, so an arrival earlier than one before it (a
/// request timed in the past, such as an instruction prefetch behind a data miss
/// held back) is taken as arriving with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requests {
    queue: Pool,
    buffers: Pool,
    data_buffers: Pool,
    bus: Server,
    /// The data bus's stretches the chipset's deferred replies hold, ahead of the
    /// transfers in arrival order (MMC59, MMC62).
    replies: Vec<(u64, u64)>,
    /// The device reads the chipset has outstanding on the I/O bus, each from the
    /// request until the device's answer (MMC63).
    devices: Pool,
    latest: [u64; 4],
}

impl Requests {
    /// The structures, with `device_reads` reads outstanding on the I/O bus at most.
    pub fn new(device_reads: usize) -> Requests {
        Requests {
            queue: Pool::new(REQUEST_QUEUE),
            buffers: Pool::new(WRITE_BUFFERS),
            data_buffers: Pool::new(WRITE_DATA),
            bus: Server::default(),
            replies: Vec::new(),
            devices: Pool::new(device_reads),
            latest: [0; 4],
        }
    }

    /// What decides their future from cycle `now`, relative to it.
    pub fn canonical(&self, now: u64, out: &mut Vec<u64>) {
        self.queue.canonical(now, out);
        self.buffers.canonical(now, out);
        self.data_buffers.canonical(now, out);
        self.bus.canonical(now, out);
        let replies: Vec<_> = self.replies.iter().filter(|&&(_, end)| end > now).collect();
        out.push(u64::MAX - replies.len() as u64);
        out.extend(replies.iter().flat_map(|&&(start, end)| [start.saturating_sub(now), end - now]));
        self.devices.canonical(now, out);
        out.extend(self.latest.iter().map(|&t| t.saturating_sub(now)));
    }

    /// The first cycle at or after `start` that `service` cycles of the data bus
    /// from it meet no deferred reply's.
    fn around_replies(&self, mut start: u64, service: u64) -> u64 {
        while let Some(&(_, end)) = self.replies.iter().find(|&&(s, e)| s < start + service && start < e) {
            start = end;
        }
        start
    }

    /// A transfer of `service` cycles that may start at `at`: after the transfers
    /// before it, in arrival order, and in a gap the deferred replies leave.
    fn transfer(&mut self, at: u64, service: u64) -> (u64, u64) {
        let start = self.around_replies(self.bus.free_at(at), service);
        let (start, end) = self.bus.serve_from(at, start, service);
        // A reply the transfers in order have passed holds nothing ahead.
        self.replies.retain(|&(_, e)| e > end);
        (start, end)
    }

    /// A deferred reply's data, `service` cycles that may start at `at`: the first gap
    /// the bus has then. The transfers that arrive after it do not wait for it: the
    /// chipset's reply is a transaction of its own, in the bus's order when it comes
    /// (MMC59).
    fn reply(&mut self, at: u64, service: u64) -> (u64, u64) {
        let start = self.around_replies(self.bus.free_at(at), service);
        self.bus.serve_aside(at, start, service);
        self.replies.retain(|&(_, e)| e > at);
        self.replies.push((start, start + service));
        (start, start + service)
    }

    /// What the request queue, the write buffers, the write data buffers, the data
    /// bus and the device reads on the I/O bus have held.
    pub fn queues(&self) -> [Queue; 5] {
        let pool = |name, p: &Pool| Queue { name, unit: None, size: p.size(), occupancy: p.occupancy() };
        [
            pool("request queue", &self.queue),
            pool("write buffers", &self.buffers),
            pool("write data buffers", &self.data_buffers),
            Queue { name: "data bus", unit: None, size: 1, occupancy: self.bus.occupancy() },
            pool("device reads", &self.devices),
        ]
    }
}

/// A transaction's time in the bus's queues: its write address queue entry's (a
/// write's, from when it has a write data buffer; `queued` is `ads` for others), and
/// the in-order queue's, from its request phase (ADS) to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct OnBus {
    pub(super) queued: u64,
    pub(super) ads: u64,
    pub(super) done: u64,
}

impl OnBus {
    /// The cycle the later of two transactions' request phase meets the earlier one
    /// still in the in-order queue, if it does.
    pub(super) fn meets(self, other: OnBus) -> Option<u64> {
        let (first, second) = if self.ads <= other.ads { (self, other) } else { (other, self) };
        (second.ads < first.done).then_some(second.ads)
    }

    /// Whether `other`'s request phase comes while this write waits in the write
    /// address queue.
    pub(super) fn in_write_queue(self, other: OnBus) -> bool {
        (self.queued..self.ads).contains(&other.ads)
    }
}

/// `at`, or the latest arrival before it if that was later; `at` becomes the latest.
fn in_order(latest: &mut u64, at: u64) -> u64 {
    *latest = (*latest).max(at);
    *latest
}

impl Montecito {
    /// A request reaching the arbiter at `arrives` takes a request-queue entry until
    /// its request phase: returns when it arrived (`in_order`), when it got the entry,
    /// and its ADS.
    fn queue_entry(&mut self, arrives: u64) -> (u64, u64, u64) {
        let arrives = in_order(&mut self.requests.latest[0], arrives);
        let queued = self.requests.queue.free_at(arrives);
        let ads = self.si.edge(&self.cfg, queued + self.cfg.bus_ratio);
        self.requests.queue.take(arrives, |from| ads - from);
        self.si.add(RQ_BOTH, true, queued, ads);
        (arrives, queued, ads)
    }

    /// This core's read from memory of `clocks` data clocks (a line, or a partial
    /// read), whose request leaves the L2 at `t0`, once the L3's dirty victims have
    /// their write buffers: a line read reaches the arbiter after the L3's lookup, a
    /// partial read the cycle after. Returns the cycle its data is all back.
    pub(super) fn bus_read(&mut self, t0: u64, clocks: u64) -> u64 {
        let (cfg, r) = (&self.cfg, self.cfg.bus_ratio);
        let t0 = t0.max(self.written_back);
        let line = clocks == cfg.line_clocks;
        let arrives = if line { t0 + cfg.l3_cycles } else { t0 + 1 };
        let (memory, wait) = (cfg.memory_cycles, clocks * r);
        let (arrives, queued, ads) = self.queue_entry(arrives);
        let answered = self.si.snoop(&self.cfg, ads, true, false);
        // Memory's latency counts from the request on; a wait for the queue delays it.
        let ready = t0 + memory + (queued - arrives);
        let earliest = self.si.edge(&self.cfg, ready.saturating_sub(wait)).max(answered);
        let (data, done) = self.requests.transfer(earliest, wait);
        self.si.add(BRQ, false, t0, done);
        self.si.data(data, clocks, true, r);
        self.si.add(IOQ, false, ads, done);
        if line {
            // §4.11.2: Montecito counts "the core clock after a request is sent to the
            // arbiter" until the first data is through it, a bus clock after it is on
            // the bus, arbiter time included.
            self.si.add(READ_OUT, false, arrives + 1, data + r);
        }
        done
    }

    /// This core's read of a device register, a partial read whose request leaves the
    /// L2 at `t0` (MMC59): the chipset cannot answer before the device does, so it
    /// defers the response. The transaction leaves the in-order queue with its
    /// deferred response at the end of its snoop phase; once the device has answered,
    /// `device_cycles` after the request, the chipset's Deferred Reply transaction
    /// (§4.11.1's "other transactions") brings the data, in the in-order queue from its
    /// request phase to its data. The chipset has `device_reads` reads outstanding on
    /// the I/O bus at most: a read that finds them all taken (the other thread's) waits
    /// for the first device to answer (MMC63). Returns the cycle the data is back.
    pub(super) fn device_read(&mut self, t0: u64) -> u64 {
        let r = self.cfg.bus_ratio;
        let (arrives, queued, ads) = self.queue_entry(t0 + 1);
        let answered = self.si.snoop(&self.cfg, ads, true, false);
        self.si.add(IOQ, false, ads, answered);
        // The device's latency counts from the request on; a wait for the queue, or for
        // the I/O bus's outstanding reads, delays it. The reply's request phase is a bus
        // clock before its data.
        let asked = in_order(&mut self.requests.latest[3], t0 + (queued - arrives));
        let (_, ready) = self.requests.devices.take(asked, |_| self.cfg.device_cycles);
        let earliest = self.si.edge(&self.cfg, ready.saturating_sub(r)).max(answered + r);
        let (data, done) = self.requests.reply(earliest, r);
        self.si.add(IOQ, false, data - r, done);
        self.si.add(BRQ, false, t0, done);
        self.si.data(data, 1, true, r);
        done
    }

    /// This core's write of `clocks` data clocks (a line, or a partial write) made at
    /// `t0`. Returns the cycle it has a write buffer (a requester that cannot go on
    /// without one waits until then), and its time in the in-order queue.
    pub(super) fn bus_write(&mut self, t0: u64, clocks: u64) -> (u64, OnBus) {
        let r = self.cfg.bus_ratio;
        let made = in_order(&mut self.requests.latest[1], t0);
        let buffered = self.requests.buffers.free_at(made);
        if buffered > made {
            // All 8 taken: the L2D's victim buffer is full (L2D_VICTIMB_FULL, MMC52),
            // and the BRQ rejects every L1 request until the write has one (MMC73).
            self.si.hold(Signal::L2dVictimBufferFull, made, made + 1);
            self.starving(Starved::Writes, made, buffered);
        }
        // The write reaches the arbiter the cycle after, once a data buffer is free.
        let arrives = in_order(&mut self.requests.latest[2], buffered + 1);
        let queued = self.requests.data_buffers.free_at(arrives);
        let ads = self.si.edge(&self.cfg, queued + r);
        let answered = self.si.snoop(&self.cfg, ads, true, false);
        let (data, done) = self.requests.transfer(answered, clocks * r);
        self.requests.buffers.take(made, |from| queued - from);
        self.requests.data_buffers.take(arrives, |from| done - from);
        self.si.add(WRITEQ_BOTH, true, queued, ads);
        self.si.data(data, clocks, true, r);
        self.si.add(IOQ, false, ads, done);
        (buffered, OnBus { queued, ads, done })
    }

    /// A modified line this core writes back at `now` (an L3 victim, an `fc`'s): the
    /// L3's next fill from memory waits until it has a write buffer.
    pub(super) fn write_back(&mut self, now: u64) -> OnBus {
        let (buffered, on_bus) = self.bus_write(now, self.cfg.line_clocks);
        self.written_back = self.written_back.max(buffered);
        on_bus
    }

    /// This core's invalidation (BIL, 0 bytes) at `t0`: a request-queue entry, and the
    /// bus until the snoop's answer.
    pub(super) fn bus_invalidate(&mut self, t0: u64) -> OnBus {
        let (_, _, ads) = self.queue_entry(t0 + 1);
        let answered = self.si.snoop(&self.cfg, ads, true, false);
        self.si.add(IOQ, false, ads, answered);
        OnBus { queued: ads, ads, done: answered }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::montecito::{MontecitoConfig, Span};
    use proptest::prelude::*;

    fn core() -> Montecito {
        Montecito::new(MontecitoConfig::new(1))
    }

    /// Lays `cycles` cycles from 0 and sums each own-core occupancy over them, with the
    /// most held in a cycle.
    fn laid(m: &mut Montecito, cycles: u64) -> [(u64, u64); 2] {
        let mut out = Vec::new();
        m.si.lay(&mut out, &Span::new(cycles, 0), cycles);
        [Signal::SiRqLive, Signal::SiWriteqLive]
            .map(|s| (out.iter().map(|x| x.total(s)).sum(), out.iter().map(|x| x.signals.get(s)).max().unwrap_or(0)))
    }

    #[test]
    fn reads_take_the_bus_one_at_a_time_and_wait_for_a_request_queue_entry() {
        let mut m = core();
        let (line, memory, r) = (m.cfg.line_clocks, m.cfg.memory_cycles, m.cfg.bus_ratio);
        let done: Vec<u64> = (0..6).map(|_| m.bus_read(12, line)).collect();
        // Alone, a read is back after memory's latency, at a bus clock edge.
        let alone = core().bus_read(12, line);
        assert!((12 + memory..12 + memory + r).contains(&alone), "{alone}");
        assert_eq!(done[0], alone);
        assert!(done.windows(2).all(|w| w[1] == w[0] + line * r), "a line a transfer time apart: {done:?}");
        let [(rq, most), _] = laid(&mut m, 2000);
        assert_eq!(most, REQUEST_QUEUE as u64, "the fifth and sixth wait for entries");
        let [queue, ..] = m.requests.queues().map(|q| q.occupancy);
        assert_eq!((queue.requests, queue.residence, queue.most), (6, rq, REQUEST_QUEUE), "Little's law: what is laid is what was held");
        assert!(queue.waited > 0);
    }

    /// MMC59, MMC62: a device read's data comes in the chipset's deferred reply; a
    /// line read sent after the request, while the device works, takes the bus when its
    /// data is ready and is not held behind the reply; the reply takes the gap it finds.
    #[test]
    fn a_deferred_reply_holds_no_later_transfer_behind_it() {
        let mut m = core();
        let (line, memory, r) = (m.cfg.line_clocks, m.cfg.memory_cycles, m.cfg.bus_ratio);
        let device = m.device_read(0);
        assert!(device >= m.cfg.device_cycles, "{device}");
        let read = m.bus_read(100, line);
        assert!(read < 100 + memory + 2 * line * r, "{read} behind the reply at {device}");
        // A transfer whose data would overlap the reply's goes after it.
        let mut m = core();
        let device = m.device_read(0);
        let at = device - memory - m.cfg.l3_cycles;
        let late = m.bus_read(at, line);
        assert!(late >= device + line * r || late <= device - r, "{late} overlaps the reply ending at {device}");
    }

    #[test]
    fn the_later_request_phase_meets_the_earlier_transaction_in_the_in_order_queue() {
        let on = |ads, done| OnBus { queued: ads, ads, done };
        let write = OnBus { queued: 24, ..on(30, 80) };
        assert_eq!(write.meets(on(42, 66)), Some(42));
        assert_eq!(on(42, 66).meets(write), Some(42), "in either order");
        assert_eq!(write.meets(on(80, 90)), None, "the write has left it");
        assert_eq!(on(12, 30).meets(write), None);
        // Its write address queue entry lives from its data buffer to its ADS.
        assert!(write.in_write_queue(on(24, 50)) && write.in_write_queue(on(29, 50)));
        assert!(!write.in_write_queue(on(30, 50)) && !write.in_write_queue(on(23, 50)));
    }

    #[test]
    fn writes_wait_for_write_buffers_and_then_hold_back_their_requester() {
        let mut m = core();
        let line = m.cfg.line_clocks;
        let buffered: Vec<u64> = (0..12).map(|_| m.bus_write(5, line).0).collect();
        // Eight write buffers; the first two writes leave theirs for the two data
        // buffers the cycle after, and the next two take them; the eleventh waits until
        // the first write's data has gone over the bus and the third moves on.
        assert!(buffered[..WRITE_BUFFERS].iter().all(|&b| b == 5), "{buffered:?}");
        assert_eq!(buffered[WRITE_BUFFERS..WRITE_BUFFERS + WRITE_DATA], [6, 6]);
        assert!(buffered[10] > 6 + line * m.cfg.bus_ratio && buffered[11] > buffered[10], "{buffered:?}");
        let mut out = Vec::new();
        m.si.lay(&mut out, &Span::new(4000, 0), 4000);
        let total = |s| out.iter().map(|x| x.total(s)).sum::<u64>();
        let most = out.iter().map(|x| x.signals.get(Signal::SiWriteqLive)).max().unwrap_or(0);
        assert!(total(Signal::SiWriteqLive) > 0 && most <= WRITE_DATA as u64);
        // MMC52: the ninth to twelfth writes found the eight write buffers taken, and
        // MMC73: the BRQ rejects every L1 request from then until the last has one.
        assert_eq!(total(Signal::L2dVictimBufferFull), 4);
        let rejecting: u64 = out.iter().filter(|x| x.signals.get(Signal::BrqRejecting) == 0b100).map(|x| x.cycles).sum();
        assert_eq!(rejecting, buffered[11] - 5);
        let [_, buffers, data, bus, _] = m.requests.queues().map(|q| q.occupancy);
        assert_eq!((buffers.most, data.most, bus.requests), (WRITE_BUFFERS, WRITE_DATA, 12));
    }

    #[test]
    fn a_read_waits_for_the_write_buffer_of_the_dirty_line_it_evicted() {
        let mut m = core();
        let line = m.cfg.line_clocks;
        for _ in 0..=WRITE_BUFFERS {
            m.write_back(0);
        }
        let written_back = m.written_back;
        assert!(written_back > 0);
        assert!(m.bus_read(0, line) >= written_back + m.cfg.memory_cycles);
    }

    proptest! {
        /// Whatever the mix and timing of reads, writes and invalidations (in the order
        /// the core makes them), no structure holds more than its entries, the queues
        /// laid on the timeline are what the pools held (Little's law: Σ occupancy =
        /// Σ residence), and the data bus carries one transfer at a time.
        #[test]
        fn the_structures_hold_at_most_their_entries_and_keep_littles_law(
            requests in proptest::collection::vec((0u64..40, 0u8..3, any::<bool>()), 1..60)
        ) {
            let mut m = core();
            let (r, mut t) = (m.cfg.bus_ratio, 0);
            let mut transfers = Vec::new();
            for (gap, kind, line) in requests {
                t += gap;
                let clocks = if line { m.cfg.line_clocks } else { 1 };
                match kind {
                    0 => {
                        let done = m.bus_read(t, clocks);
                        transfers.push((done - clocks * r, done));
                    }
                    1 => {
                        m.bus_write(t, clocks);
                    }
                    _ => {
                        m.bus_invalidate(t);
                    }
                }
            }
            let [(rq, rq_most), (writeq, writeq_most)] = laid(&mut m, t + 20_000);
            let [queue, buffers, data, bus, _] = m.requests.queues().map(|q| q.occupancy);
            prop_assert!(rq_most <= REQUEST_QUEUE as u64 && writeq_most <= WRITE_DATA as u64);
            prop_assert!(queue.most <= REQUEST_QUEUE && buffers.most <= WRITE_BUFFERS && data.most <= WRITE_DATA);
            prop_assert_eq!(rq, queue.residence);
            prop_assert!(writeq <= data.residence);
            transfers.sort_unstable();
            prop_assert!(transfers.windows(2).all(|w| w[0].1 <= w[1].0), "{:?}", transfers);
            prop_assert!(bus.residence <= t + 20_000);
        }
    }
}
