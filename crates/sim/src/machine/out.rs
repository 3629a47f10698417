//! The spans of one iteration, built cycle by cycle by a core model.

use crate::stream::{Signal, Signals, Span};

/// The cycles of one iteration, as spans: consecutive cycles that count the same are
/// one span. Spans are built where they lie in the vector (a span is a few hundred
/// bytes, and every copy of one showed in profiles), and never merge with spans that
/// were there before this iteration's, so each iteration's spans are its own.
pub struct Out<'a, const F: usize> {
    spans: &'a mut Vec<Span<F>>,
    /// Privilege, thread and the signals that hold in every cycle of the phase (ARM's
    /// interrupt masks, which no instruction sets itself).
    template: Span<F>,
    /// Where this iteration's spans start in `spans`.
    from: usize,
    /// Whether later cycles may join the last span (an instruction's own cycle, with
    /// its data reference or branch outcome, may not).
    open: bool,
    /// Cycles emitted so far.
    cycles: u64,
    /// Where the last cycle that issued instructions ended, if one has.
    retired_end: Option<u64>,
}

impl<const F: usize> Out<'_, F> {
    /// Spans appended to `spans`, each a copy of `template` (its signals hold in every
    /// cycle) with its own cycles, address and signals.
    pub fn new(spans: &mut Vec<Span<F>>, template: Span<F>) -> Out<'_, F> {
        let from = spans.len();
        Out { spans, template, from, open: false, cycles: 0, retired_end: None }
    }

    /// Appends a new span and returns it.
    #[inline]
    fn start(&mut self, ip: u64, cycles: u64, signals: Signals<F>, open: bool) -> &mut Span<F> {
        self.open = open;
        self.cycles += cycles;
        self.spans.push(Span { ip, cycles, signals, ..self.template });
        let last = self.spans.len() - 1;
        &mut self.spans[last]
    }

    /// `cycles` cycles at `ip` counting `signals`, merged with the span before when
    /// every cycle counts the same. Always inlined: the caller builds `signals` a word
    /// at a time, and a call read them back in wider loads that waited for those
    /// stores to reach memory (an eighth of SPARC's machine thread).
    #[inline(always)]
    pub fn emit(&mut self, ip: u64, cycles: u64, signals: Signals<F>) {
        let signals = signals.union(self.template.signals);
        let retires = signals.get(Signal::Instructions) > 0;
        let joins = self.open && self.spans.len() > self.from;
        match self.spans.last_mut().filter(|last| joins && last.signals == signals) {
            Some(last) => {
                last.cycles += cycles;
                self.cycles += cycles;
            }
            None => {
                self.start(ip, cycles, signals, true);
            }
        }
        if retires {
            self.retired_end = Some(self.cycles);
        }
    }

    /// An instruction's own cycle (`Instructions` set to `issued`), a span of its own
    /// so that its data reference or branch outcome can be attached.
    #[inline]
    pub fn issue(&mut self, ip: u64, signals: Signals<F>, issued: u8) -> &mut Span<F> {
        let signals = signals.with(Signal::Instructions, issued).union(self.template.signals);
        self.retired_end = Some(self.cycles + 1);
        self.start(ip, 1, signals, false)
    }

    /// Cycles in which nothing issues, counting `stall` if any.
    #[inline]
    pub fn stall(&mut self, ip: u64, cycles: u64, stall: Option<Signal>) {
        if cycles > 0 {
            let mut s = Signals::default();
            if let Some(sig) = stall {
                s.set(sig, 1);
            }
            self.emit(ip, cycles, s);
        }
    }

    /// Cycles of a core whose clocks are stopped (ARM11's standby, MARM12): a span of
    /// its own that counts `signal` and none of the template's, since the interrupt
    /// masks' cycles are counted by the clocks that stopped.
    pub fn stopped(&mut self, ip: u64, cycles: u64, signal: Signal) {
        if cycles > 0 {
            self.start(ip, cycles, Signals::default().with(signal, 1), false);
        }
    }

    /// Cycles emitted so far: where in its run the core is.
    pub fn elapsed(&self) -> u64 {
        self.cycles
    }

    /// An interruption's handler, whose instructions the machine does not simulate (its
    /// cycles are the trap's), retired its last instruction at this cycle: a stall
    /// after it counts from here.
    pub fn handled(&mut self) {
        self.retired_end = Some(self.cycles);
    }

    /// Cycles since the last cycle that issued instructions, if one has this iteration.
    pub fn since_retired(&self) -> Option<u64> {
        self.retired_end.map(|end| self.cycles - end)
    }
}

/// Adds `items`, each what one event outside the core counts (a device's transfer of
/// a line, another agent's snoop), to the cycles of the iteration `out[from..]`: the
/// latest cycle first, one item to a cycle, so that nothing is lost. An iteration too
/// short to hold them all ends with cycles that count only the items: the core waits
/// for the bus or the device.
pub fn spread<const F: usize>(out: &mut Vec<Span<F>>, from: usize, template: Span<F>, items: &[Signals<F>]) {
    if items.is_empty() {
        return;
    }
    let total: u64 = out[from..].iter().map(|s| s.cycles).sum();
    let wanted = (items.len() as u64).min(total);
    // The last `wanted` cycles, one span each, latest first (a span's branch outcome
    // stays with its last cycle).
    let mut singles: Vec<Span<F>> = Vec::with_capacity(items.len());
    let mut taken = 0;
    while taken < wanted {
        let Some(mut span) = out.pop() else { break };
        if span.cycles == 0 {
            // Nothing counts in it; it keeps its place.
            singles.push(span);
            continue;
        }
        let take = span.cycles.min(wanted - taken);
        taken += take;
        singles.push(Span { cycles: 1, ..span });
        singles.extend(std::iter::repeat_n(Span { cycles: 1, branch: None, ..span }, take as usize - 1));
        if span.cycles > take {
            span.cycles -= take;
            span.branch = None;
            out.push(span);
        }
    }
    singles.reverse();
    // One item to a cycle: two transactions of the bus never share a core cycle (the
    // bus takes several for one), and an event that counts one of several kinds a
    // cycle (BUS_HITM's max increment is 1) would lose the second.
    let n = singles.len();
    let mut used = vec![false; n];
    for (i, item) in items.iter().enumerate() {
        // Item i starts looking i cycles from the end, then earlier, wrapping round.
        let slot =
            (0..n).map(|j| (2 * n - 1 - i % n - j) % n).find(|&j| singles[j].cycles == 1 && !used[j] && singles[j].signals.fits(item));
        match slot {
            Some(j) => {
                used[j] = true;
                singles[j].signals = singles[j].signals.plus(item);
            }
            None => singles.push(Span { cycles: 1, mem: None, branch: None, signals: *item, ..template }),
        }
    }
    for span in singles {
        let merge = span.cycles == 1
            && out.len() > from
            && out.last().is_some_and(|l| l.branch.is_none() && Span { cycles: l.cycles, ..span } == *l);
        match out.last_mut() {
            Some(last) if merge => last.cycles += 1,
            _ => out.push(span),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::{Branch, EVERY, MAX_PER_CYCLE};

    fn total<const F: usize>(out: &[Span<F>], s: Signal) -> u64 {
        out.iter().map(|x| x.total(s)).sum()
    }

    #[test]
    fn spread_items_keep_every_count_and_the_branch_on_the_last_cycle() {
        let branch = Some(Branch { target: 0x100, taken: true, mispredicted: false });
        let before = Span { branch, ..Span::new(5, 0x40).with(Signal::Instructions, 1) };
        let earlier = Span::new(3, 0x10);
        let mut out: Vec<Span<EVERY>> = vec![earlier, before];
        let item = Signals::default().with(Signal::IoBrl, 1);
        spread(&mut out, 1, Span::new(1, 0), &[item; 3]);
        assert_eq!(out[0], earlier, "the iteration's spans start at 1");
        assert_eq!(total(&out, Signal::IoBrl), 3);
        assert_eq!(total(&out, Signal::Instructions), 5);
        assert_eq!(out.iter().map(|s| s.cycles).sum::<u64>(), 8);
        assert_eq!(out.last().unwrap().branch, branch);
        assert_eq!(out.iter().filter(|s| s.branch.is_some()).count(), 1);
        // More items than cycles: one in each, the rest in cycles of their own at
        // the end, none sharing a cycle with another (an event with a maximum
        // increment of 1 would lose the second).
        let mut out: Vec<Span<EVERY>> = vec![Span::new(2, 0x40)];
        let big = Signals::default().with(Signal::IoBwl, MAX_PER_CYCLE);
        spread(&mut out, 0, Span::new(1, 0x80), &[big; 5]);
        assert_eq!(total(&out, Signal::IoBwl), 5 * u64::from(MAX_PER_CYCLE));
        assert_eq!(out.iter().map(|s| s.cycles).sum::<u64>(), 5);
        assert_eq!(out.last().unwrap().ip, 0x80);
        let mut out: Vec<Span<EVERY>> = vec![Span::new(2, 0x40)];
        spread(&mut out, 0, Span::new(1, 0x80), &[item; 3]);
        assert_eq!(out.iter().map(|s| s.cycles).sum::<u64>(), 3);
        assert!(out.iter().all(|s| s.signals.get(Signal::IoBrl) <= 1));
    }
}
