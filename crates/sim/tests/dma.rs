//! Devices' DMA (`program::Dma`) on every machine: what each does to its caches and
//! what it counts (Montecito ERRATA MMC34, SPARC MSP20, ARM11 MARM10).

mod common;

use pmukit_sim::machine::arm11::{Arm11Config, Arm11Core};
use pmukit_sim::machine::montecito::MontecitoConfig;
use pmukit_sim::machine::run::Skipping;
use pmukit_sim::machine::sparc::{SparcChip, SparcConfig};
use pmukit_sim::machine::{self};
use pmukit_sim::program::{Access, DataStream, Dma, Memory, Op, Pattern, Phase, PhaseError};
use pmukit_sim::stream::{Signal, Totals};

const ITERATIONS: u64 = 64;
const BUFFER: u64 = 0x100_0000;

/// A loop that loads (or, `write`, stores) 4 bytes of a line-strided buffer, after
/// which a device moves `bytes` from the same place each iteration.
fn phase(write: bool, stride: i64, dma: Dma) -> Phase {
    let access = Access { stream: 0, offset: 0, size: 4, use_next: false };
    // A store hits a line a load brought in (ARM11 does not allocate on a write miss).
    let mut body = vec![Op::Load(access)];
    if write {
        body.push(Op::Store(access));
    }
    body.extend([Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Always }]);
    let stream = DataStream { stride, footprint: stride as u64 * ITERATIONS, ..DataStream::fixed(BUFFER, Memory::Cacheable) };
    Phase { dma: vec![dma], ..common::phase(body, ITERATIONS, vec![stream]) }
}

fn montecito(phase: Phase) -> Totals {
    let cfg = MontecitoConfig { threads: 1, ..MontecitoConfig::new(1) };
    Totals::of(machine::montecito(cfg, common::program_of(phase), Skipping::Off), u64::MAX, |_| true)
}

#[test]
fn mmc34_the_bridge_reads_one_line_current_several_by_brl_and_parts_by_brp() {
    // The core wrote each line just before: every read meets it modified.
    let one = montecito(phase(true, 128, Dma { stream: 0, bytes: 128, write: false }));
    assert_eq!((one.get(Signal::IoBrc), one.get(Signal::IoReadHitm), one.get(Signal::IoBrl)), (ITERATIONS, ITERATIONS, 0));
    let two = montecito(phase(true, 256, Dma { stream: 0, bytes: 256, write: false }));
    assert_eq!(two.get(Signal::IoBrl), 2 * ITERATIONS, "a read of two lines prefetches both");
    assert_eq!(two.get(Signal::IoBrlHitm), ITERATIONS, "the line written answers HITM");
    let part = montecito(phase(true, 128, Dma { stream: 0, bytes: 16, write: false }));
    assert_eq!((part.get(Signal::IoBrp), part.get(Signal::IoReadHitm)), (ITERATIONS, ITERATIONS));
    // Nothing else on the bus is the bridge's: its data clocks are its own.
    assert!(one.get(Signal::BusDataClocksIo) >= ITERATIONS);
}

#[test]
fn mmc34_the_bridge_claims_what_it_writes_and_takes_every_copy() {
    // The core read each line: a clean copy answers HIT and is invalidated.
    let whole = montecito(phase(false, 128, Dma { stream: 0, bytes: 128, write: true }));
    assert_eq!(whole.get(Signal::IoBil), ITERATIONS);
    assert_eq!(whole.get(Signal::IoBwl), ITERATIONS);
    assert_eq!(whole.get(Signal::IoOtherHit), ITERATIONS);
    let part = montecito(phase(true, 128, Dma { stream: 0, bytes: 16, write: true }));
    assert_eq!((part.get(Signal::IoBril), part.get(Signal::IoBrilHitm)), (ITERATIONS, ITERATIONS));
    let modified = montecito(phase(true, 128, Dma { stream: 0, bytes: 128, write: true }));
    assert_eq!(modified.get(Signal::IoBilHitm), ITERATIONS);
}

#[test]
fn mmc34_a_read_of_the_current_data_leaves_the_line_modified() {
    // After BRC the line is still modified here; after BRL it was written back.
    let twice = |bytes| {
        let mut p = phase(true, 128, Dma { stream: 0, bytes, write: false });
        p.dma.push(Dma { stream: 0, bytes, write: false });
        montecito(p)
    };
    assert_eq!(twice(128).get(Signal::IoReadHitm), 2 * ITERATIONS);
    let brl = twice(256);
    // The second line of each read was never here.
    assert_eq!((brl.get(Signal::IoBrlHitm), brl.get(Signal::IoBrlHit)), (ITERATIONS, ITERATIONS));
}

#[test]
fn marm10_the_driver_cleans_and_invalidates_by_hand() {
    let run = |p: Phase| {
        let cfg = Arm11Config::new(Arm11Core::Arm1176);
        Totals::of(machine::arm11(cfg, common::program_of(p), Skipping::Off), u64::MAX, |_| true)
    };
    let plain = run(Phase { dma: Vec::new(), ..phase(true, 32, Dma { stream: 0, bytes: 32, write: false }) });
    let read = run(phase(true, 32, Dma { stream: 0, bytes: 32, write: false }));
    // One clean per line, each writing back the half the store dirtied.
    assert_eq!(read.get(Signal::Instructions), plain.get(Signal::Instructions) + ITERATIONS);
    assert_eq!(read.get(Signal::DCacheWritebacks), ITERATIONS);
    // Cleaned and invalidated: the next pass over the buffer misses again.
    let mut again = phase(false, 32, Dma { stream: 0, bytes: 32, write: true });
    again.iterations = 2 * ITERATIONS;
    let written = run(again);
    assert_eq!(written.get(Signal::DCacheMisses), 2 * ITERATIONS);
}

#[test]
fn msp20_a_devices_write_invalidates_the_l1_copies() {
    for chip in [SparcChip::T4, SparcChip::Niagara] {
        let run = |p: Phase| {
            let t = Totals::of(machine::sparc(SparcConfig::new(chip), common::program_of(p), Skipping::Off), u64::MAX, |_| true);
            t.get(Signal::DCacheSnoopInvalidations)
        };
        let p = phase(false, 64, Dma { stream: 0, bytes: 64, write: true });
        assert_eq!(run(Phase { dma: Vec::new(), ..p.clone() }), 0);
        // Every line loaded (and on T4 the next, which its prefetcher brings) goes.
        let per = if chip == SparcChip::T4 { 2 } else { 1 };
        assert_eq!(run(p), per * ITERATIONS, "{chip:?}");
        // A device's read leaves them.
        assert_eq!(run(phase(false, 64, Dma { stream: 0, bytes: 64, write: false })), 0);
    }
}

#[test]
fn skipping_is_exact_with_devices_moving_data() {
    let p = || {
        let mut p = phase(true, 128, Dma { stream: 0, bytes: 1536, write: false });
        p.iterations = 4096;
        p.streams[0].footprint = 1 << 20;
        p
    };
    let cfg = || MontecitoConfig { threads: 1, ..MontecitoConfig::new(1) };
    let on = Totals::of(machine::montecito(cfg(), common::program_of(p()), Skipping::On), u64::MAX, |_| true);
    let off = Totals::of(machine::montecito(cfg(), common::program_of(p()), Skipping::Off), u64::MAX, |_| true);
    assert_eq!(on, off);
}

#[test]
fn a_transfer_from_a_missing_stream_or_of_no_bytes_is_refused() {
    let good = phase(false, 64, Dma { stream: 0, bytes: 64, write: true });
    assert_eq!(good.check(), Ok(()));
    let cases = [
        (Dma { stream: 1, bytes: 64, write: true }, PhaseError::DmaStream { index: 0, stream: 1, streams: 1 }),
        (Dma { stream: 0, bytes: 0, write: true }, PhaseError::DmaBytes { index: 0, bytes: 0, max: 65536 }),
        (Dma { stream: 0, bytes: 65537, write: false }, PhaseError::DmaBytes { index: 0, bytes: 65537, max: 65536 }),
    ];
    for (dma, error) in cases {
        let bad = Phase { dma: vec![dma], ..good.clone() };
        assert_eq!(bad.check(), Err(error.clone()));
        assert!(error.to_string().contains("device transfer 0"), "{error}");
    }
}

#[test]
fn msp20_a_device_write_still_queued_serves_the_cores_read() {
    // Each iteration a device writes 32 KB from the stream's position: two DRAM rows,
    // eight lines to each bank. The next iteration, 16 KB on (in the same 4 MB page:
    // no table walk comes first), reads the line whose write is its bank's last: a
    // write-back buffer hit.
    let hits = |dma: Vec<Dma>| {
        let load = Op::Load(Access { stream: 0, offset: 12 * 64, size: 4, use_next: true });
        let body = vec![load, Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Always }];
        let stream = DataStream { stride: 16 << 10, footprint: 1 << 20, page: 4 << 20, ..DataStream::fixed(BUFFER, Memory::Cacheable) };
        let p = Phase { dma, ..common::phase(body, ITERATIONS, vec![stream]) };
        let mut hits = 0;
        for block in machine::sparc(SparcConfig::new(SparcChip::T4), common::program_of(p), Skipping::Off) {
            hits += block.body.iter().map(|s| u64::from(s.queues.writeback_hits) * s.cycles).sum::<u64>() * block.repeat;
        }
        hits
    };
    assert_eq!(hits(Vec::new()), 0);
    assert_eq!(hits(vec![Dma { stream: 0, bytes: 32 << 10, write: true }]), ITERATIONS - 1);
}
