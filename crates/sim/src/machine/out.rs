//! The spans of one iteration, built cycle by cycle by a core model.

use crate::stream::{Signal, Signals, Span};

/// The cycles of one iteration, as spans: consecutive cycles that count the same are
/// one span. The span being built is kept here, not read back from the vector, and
/// spans never merge across iterations, so each iteration's spans are its own.
pub struct Out<'a> {
    spans: &'a mut Vec<Span>,
    /// Privilege, thread and the signals that hold in every cycle of the phase (ARM's
    /// interrupt masks, which no instruction sets itself).
    template: Span,
    /// The span being built, if any; `open` says whether later cycles may join it.
    current: Option<Span>,
    open: bool,
    /// Cycles of the spans already handed to the vector.
    done: u64,
    /// Where the last cycle that issued instructions ended, if one has.
    retired_end: Option<u64>,
}

impl Out<'_> {
    /// Spans appended to `spans`, each a copy of `template` (its signals hold in every
    /// cycle) with its own cycles, address and signals.
    pub fn new(spans: &mut Vec<Span>, template: Span) -> Out<'_> {
        Out { spans, template, current: None, open: false, done: 0, retired_end: None }
    }

    /// Starts a new span, handing the one before to the vector.
    fn start(&mut self, span: Span, open: bool) -> &mut Span {
        if let Some(done) = self.current.replace(span) {
            self.done += done.cycles;
            self.spans.push(done);
        }
        self.open = open;
        self.current.get_or_insert(span)
    }

    /// `cycles` cycles at `ip` counting `signals`, merged with the span before when
    /// every cycle counts the same.
    pub fn emit(&mut self, ip: u64, cycles: u64, signals: Signals) {
        let signals = signals.union(self.template.signals);
        match self.current.as_mut().filter(|c| self.open && c.signals == signals) {
            Some(cur) => cur.cycles += cycles,
            None => {
                self.start(Span { ip, cycles, signals, ..self.template }, true);
            }
        }
        if signals.get(Signal::Instructions) > 0 {
            self.retired_end = Some(self.elapsed());
        }
    }

    /// An instruction's own cycle (`Instructions` set to `issued`), a span of its own
    /// so that its data reference or branch outcome can be attached.
    pub fn issue(&mut self, ip: u64, signals: Signals, issued: u8) -> &mut Span {
        let signals = signals.with(Signal::Instructions, issued).union(self.template.signals);
        self.retired_end = Some(self.elapsed() + 1);
        self.start(Span { ip, cycles: 1, signals, ..self.template }, false)
    }

    /// Cycles in which nothing issues, counting `stall` if any.
    pub fn stall(&mut self, ip: u64, cycles: u64, stall: Option<Signal>) {
        if cycles > 0 {
            let mut s = Signals::default();
            if let Some(sig) = stall {
                s.set(sig, 1);
            }
            self.emit(ip, cycles, s);
        }
    }

    /// Cycles emitted so far: where in its run the core is.
    pub fn elapsed(&self) -> u64 {
        self.done + self.current.map_or(0, |c| c.cycles)
    }

    /// Cycles since the last cycle that issued instructions, if one has this iteration.
    pub fn since_retired(&self) -> Option<u64> {
        self.retired_end.map(|end| self.elapsed() - end)
    }

    /// Hands the last span to the vector: the iteration is over.
    pub fn finish(mut self) {
        if let Some(done) = self.current.take() {
            self.spans.push(done);
        }
    }
}

/// The last cycle of the spans from `from` on, made a span of its own (split off the
/// last span), for what happens at the end of an iteration; `None` when there are none.
pub fn last_cycle(out: &mut Vec<Span>, from: usize) -> Option<&mut Span> {
    let last = out.get_mut(from..)?.last_mut()?;
    if last.cycles > 1 {
        let mut end = *last;
        last.cycles -= 1;
        last.branch = None;
        end.cycles = 1;
        out.push(end);
    }
    out.last_mut()
}
