//! The system's I/O bridge, the bus's non-CPU priority agent (§4.11: the IO unit
//! masks count "transactions initiated by non-CPU priority agents"; ERRATA MMC34),
//! where devices' DMA (`program::Dma`) meets this core: the bridge's transactions for
//! each line of a transfer, and this core's snoop answers to them.
//!
//! The bridge turns a device's PCI reads and writes into bus transactions as the PCI
//! commands ask: a read of more than one line (Memory Read Multiple) prefetches whole
//! lines (BRL) and keeps them until the device has them, so a modified copy here is
//! written back and stays clean; a read of one whole line (Memory Read Line) takes the
//! current data (BRC) and a read of part of a line (Memory Read) the bytes (BRP),
//! keeping nothing, so no copy here changes. A write of a whole line claims it without
//! its data (BIL), a write of part of one reads it for ownership to merge the bytes
//! (BRIL); either takes every copy here, and is then written (BWL).

use super::coherence::Effect;
use super::Montecito;
use super::Signals;
use crate::machine::peer::Answer;
use crate::program::Phase;
use crate::stream::Signal;

impl Montecito {
    /// The devices' transfers at the end of an iteration, which ends at `end`: each
    /// line's transactions and answers, an item in `items` (`out::spread` gives each a
    /// cycle of its own, the i-th the i-th from the end), and the requests for the
    /// line its snoop finds in the OzQ (MMC71).
    pub(super) fn io_turn(&mut self, phase: &Phase, k: u64, end: u64, items: &mut Vec<Signals>) {
        let line = self.cfg.l3.line;
        for d in &phase.dma {
            let stream = &phase.streams[usize::from(d.stream)];
            let multiple = u64::from(d.bytes) > line;
            for (l, whole) in d.lines(stream, k, line) {
                let mut s = Signals::default();
                let at = self.turn_cycle(end, items.len());
                self.snoop_queue(l, at, &mut s);
                if d.write {
                    let txn = if whole { Signal::IoBil } else { Signal::IoBril };
                    s.bump(txn);
                    match (self.answer(l, Effect::Take, &mut s), whole) {
                        (Answer::Miss, _) => {}
                        (Answer::Hit, _) => s.bump(Signal::IoOtherHit),
                        (Answer::Hitm, true) => s.bump(Signal::IoBilHitm),
                        (Answer::Hitm, false) => s.bump(Signal::IoBrilHitm),
                    }
                    s.bump(Signal::IoBwl);
                } else {
                    let (txn, effect) = match (whole, multiple) {
                        (false, _) => (Signal::IoBrp, Effect::Keep),
                        (true, true) => (Signal::IoBrl, Effect::Clean),
                        (true, false) => (Signal::IoBrc, Effect::Keep),
                    };
                    s.bump(txn);
                    let brl = txn == Signal::IoBrl;
                    match self.answer(l, effect, &mut s) {
                        Answer::Miss => {}
                        Answer::Hit => s.bump(if brl { Signal::IoBrlHit } else { Signal::IoOtherHit }),
                        Answer::Hitm => s.bump(if brl { Signal::IoBrlHitm } else { Signal::IoReadHitm }),
                    }
                }
                items.push(s);
            }
        }
    }
}
