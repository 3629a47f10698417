//! The simulated Montecito's capture hardware, end to end (§3.3.8-§3.3.10): encode a
//! capture event, run the machine, freeze on the sampling counter's overflow, read the
//! capture registers and decode them (`record::record`), and compare every sample with
//! the capture the machine's own stream says it must hold: the period-th qualifying
//! miss or branch since the last sample. Then the IP-EAR and the bulk path of the model.

use pmukit_arch::montecito::ear::{self, DearSample, IearSample, Miss, Served};
use pmukit_arch::montecito::etb::{self, BranchKind, Snapshot, Traced};
use pmukit_arch::{Catalog, SetOptions};
use pmukit_sim::engine::{self, Counters, Counting, Exit};
use pmukit_sim::models::montecito::{itanium_ip, Montecito};
use pmukit_sim::record::{record, Recording, Sample, FORMAT, VERSION};
use pmukit_sim::stat::{self, StatOptions};
use pmukit_sim::stream::{Block, Branch, Cursor, Detail, FetchMiss, MemRef, Privilege, Signal, Span};
use proptest::prelude::*;

const CYCLES: u64 = 3_000_000;

fn options(workload: &str) -> StatOptions {
    StatOptions { workload: workload.into(), seed: 3, cycles: CYCLES, threads: Some(1), ..StatOptions::default() }
}

fn recorded(workload: &str, event: &str, period: u64) -> Recording {
    let cat = Catalog::builtin();
    let sel = cat.resolve(event, "montecito").unwrap();
    let r = record(&cat, &[sel], period, &options(workload), &mut |_| {}).unwrap();
    assert_eq!((r.format.as_str(), r.version), (FORMAT, VERSION));
    r
}

fn register(r: &Recording, name: &str) -> u64 {
    r.registers.iter().find(|(n, _)| n == name).map_or(0, |&(_, v)| v)
}

/// The default privilege mask: levels 0 and 3 (hyperprivileged spans are CPL 0).
fn counted(s: &Span) -> bool {
    !matches!(s.privilege, Privilege::Cpl1 | Privilege::Cpl2)
}

/// Calls `f` with every span of the first `cycles` cycles, in the order they run, and
/// the iteration of its block (its data address strides by it).
fn walk(workload: &str, cycles: u64, mut f: impl FnMut(&Span, u64)) {
    let cat = Catalog::builtin();
    let (blocks, _) = stat::blocks(&[cat.pmu("montecito").unwrap()], &options(workload), stat::Reads::ALL).unwrap();
    let blocks = blocks.every();
    let mut left = cycles;
    for block in blocks {
        for it in 0..block.repeat {
            for s in &block.body {
                if left == 0 {
                    return;
                }
                f(s, it);
                left = left.saturating_sub(s.cycles);
            }
        }
    }
}

/// The captures the stream makes, in order, by `capture`; every `period`-th is a
/// sample's. Returns those and the total.
fn expected<T>(workload: &str, cycles: u64, period: u64, mut capture: impl FnMut(&Span, u64) -> Option<T>) -> (Vec<T>, u64) {
    let (mut samples, mut n) = (Vec::new(), 0u64);
    walk(workload, cycles, |s, it| {
        if let Some(c) = capture(s, it).filter(|_| counted(s)) {
            n += 1;
            if n.is_multiple_of(period) {
                samples.push(c);
            }
        }
    });
    (samples, n)
}

/// The first sample that differs, for a readable failure.
fn same<T: PartialEq + std::fmt::Debug>(got: &[T], truth: &[T]) {
    if let Some(k) = got.iter().zip(truth).position(|(g, t)| g != t) {
        panic!("sample {k} of {}: got {:?}, the stream says {:?}", got.len(), got[k], truth[k]);
    }
    assert_eq!(got.len(), truth.len(), "samples");
}

/// Every sample's I-EAR capture, decoded in the recording's PMC37 mode.
fn iear_samples(r: &Recording) -> Vec<IearSample> {
    r.samples.iter().map(|s| s.iear.and_then(|[a, b]| ear::iear_sample(register(r, "PMC37"), a, b)).expect("a capture")).collect()
}

/// Every sample's D-EAR capture, decoded in the recording's PMC40 mode.
fn dear_samples(r: &Recording) -> Vec<DearSample> {
    r.samples.iter().map(|s| s.dear.and_then(|[a, b, c]| ear::dear_sample(register(r, "PMC40"), a, b, c)).expect("a capture")).collect()
}

fn bundle(ip: u64) -> u64 {
    itanium_ip(ip) & !0xf
}

#[test]
fn s3_3_9_1_the_data_ear_holds_each_samples_load_miss() {
    let period = 101;
    let r = recorded("stream", "DATA_EAR_CACHE_LAT16", period);
    let (truth, total) = expected("stream", r.cycles, period, |s, it| {
        let m = s.mem?;
        (s.detail.data_latency >= 16).then(|| DearSample {
            data: Some(m.addr.wrapping_add(it.wrapping_mul(m.stride as u64))),
            instruction: Some((bundle(s.detail.data_ip), (itanium_ip(s.detail.data_ip) & 3) as u8)),
            miss: Miss::Cache { latency: u64::from(s.detail.data_latency), overflow: false },
        })
    });
    let got = dear_samples(&r);
    assert!(got.len() > 100, "{} samples", got.len());
    same(&got, &truth);
    assert_eq!(r.events[0].count, total, "DATA_EAR_EVENTS counts every capture");
    assert!(got.iter().any(|s| matches!(s.miss, Miss::Cache { latency, .. } if latency > 100)), "memory latencies");
}

#[test]
fn s3_3_9_2_the_data_ear_in_tlb_mode_says_where_each_miss_was_served() {
    let period = 101;
    let r = recorded("stream", "DATA_EAR_TLB_ALL", period);
    let (truth, total) = expected("stream", r.cycles, period, |s, it| {
        let m = s.mem?;
        Some((m.addr.wrapping_add(it.wrapping_mul(m.stride as u64)), s.detail.data_tlb?))
    });
    let got: Vec<(u64, Served)> = dear_samples(&r)
        .into_iter()
        .map(|d| {
            let Miss::Tlb { served } = d.miss else { panic!("{d:?}") };
            (d.data.unwrap(), served)
        })
        .collect();
    assert!(!got.is_empty());
    same(&got, &truth);
    assert_eq!(r.events[0].count, total);
}

#[test]
fn s3_3_8_1_the_instruction_ear_holds_each_samples_fetch_miss() {
    let period = 2;
    let r = recorded("mixed", "L1I_EAR_CACHE_LAT0", period);
    let (truth, total) = expected("mixed", r.cycles, period, |s, _| {
        let f = s.detail.fetch.filter(|f| f.latency > 0)?;
        Some(IearSample { line: f.addr & !0x1f, miss: Miss::Cache { latency: u64::from(f.latency), overflow: false } })
    });
    let got = iear_samples(&r);
    assert!(got.len() > 5, "{} samples", got.len());
    same(&got, &truth);
    assert_eq!(r.events[0].count, total);
}

#[test]
fn s3_3_10_1_the_trace_buffer_holds_the_last_eight_branches_of_each_sample() {
    let period = 500;
    let r = recorded("branchy", "ETB_EVENT", period);
    // Every branch of the default privilege levels is captured (tm = ptm = ppm = 11,
    // brt = 00): its bundle, the slot of a taken one, and its target.
    let mut captured: Vec<Traced> = Vec::new();
    let mut truth: Vec<Vec<Traced>> = Vec::new();
    walk("branchy", r.cycles, |s, _| {
        let Some(b) = s.branch.filter(|_| counted(s)) else { return };
        let ip = s.detail.branch_ip;
        let target = if b.taken { bundle(b.target) } else { bundle(ip + 4) };
        let slot = b.taken.then_some((itanium_ip(ip) & 3) as u8);
        captured.push(Traced::Source {
            bundle: bundle(ip),
            slot,
            mispredicted: b.mispredicted,
            flushed: b.mispredicted,
            target: Some(target),
        });
        if (captured.len() as u64).is_multiple_of(period) {
            truth.push(captured[captured.len() - 8..].to_vec());
        }
    });
    let got: Vec<Vec<Traced>> = r
        .samples
        .iter()
        .map(|s| {
            let t = s.trace.unwrap();
            etb::branch_trace(&Snapshot { pmd38: t.pmd38, pmd39: t.pmd39, entries: t.entries })
        })
        .collect();
    assert!(got.len() > 100, "{} samples", got.len());
    same(&got, &truth);
    assert_eq!(r.events[0].count, captured.len() as u64, "BRANCH_EVENT counts the branches captured");
    assert!(got.iter().flatten().any(|t| matches!(t, Traced::Source { mispredicted: true, .. })));
    assert!(got.iter().flatten().any(|t| matches!(t, Traced::Source { slot: None, .. })), "not-taken branches");
}

#[test]
fn s3_3_8_2_the_instruction_ear_in_tlb_mode_says_where_each_fetch_miss_was_served() {
    let period = 3;
    let r = recorded("mixed", "L1I_EAR_TLB_ALL", period);
    let (truth, total) = expected("mixed", r.cycles, period, |s, _| {
        let f = s.detail.fetch?;
        Some(IearSample { line: f.addr & !0x1f, miss: Miss::Tlb { served: f.tlb? } })
    });
    let got = iear_samples(&r);
    assert!(got.len() > 5, "{} samples", got.len());
    same(&got, &truth);
    assert_eq!(r.events[0].count, total);
}

#[test]
fn s3_3_9_3_the_data_ear_in_alat_mode_holds_each_failed_checks_instruction() {
    let period = 13;
    let r = recorded("fp", "DATA_EAR_ALAT", period);
    let (truth, total) = expected("fp", r.cycles, period, |s, _| {
        s.mem?;
        let failed = s.signals.get(Signal::AlatFailedInt) + s.signals.get(Signal::AlatFailedFp) > 0;
        failed.then(|| (bundle(s.detail.data_ip), (itanium_ip(s.detail.data_ip) & 3) as u8))
    });
    let got: Vec<(u64, u8)> = dear_samples(&r)
        .into_iter()
        .map(|d| {
            assert_eq!((d.data, d.miss), (None, Miss::Alat), "PMD32 is undefined in ALAT mode");
            d.instruction.unwrap()
        })
        .collect();
    assert!(got.len() > 5, "{} samples", got.len());
    same(&got, &truth);
    assert_eq!(r.events[0].count, total);
}

#[test]
fn s3_3_10_2_each_ip_ear_sample_is_a_run_of_the_threads_retirements() {
    // CPU_OP_CYCLES samples every 20,011 cycles; the IP-EAR freezes 7 cycles later.
    let cat = Catalog::builtin();
    let sel = cat.resolve("CPU_OP_CYCLES", "montecito").unwrap();
    let opts = StatOptions { set_options: SetOptions { ip_ear: Some(7), ..SetOptions::default() }, ..options("compute") };
    let r = record(&cat, &[sel], 20_011, &opts, &mut |_| {}).unwrap();
    // Every retiring cycle of the stream, as the IP-EAR writes it: the bundle and the
    // cycles since the one before (six bits, saturating).
    let mut retirements: Vec<(u64, u8)> = Vec::new();
    let mut since = 0u64;
    walk("compute", r.cycles, |s, _| {
        if s.signals.get(Signal::Instructions) > 0 {
            for k in 0..s.cycles {
                let gap = if k == 0 { since + 1 } else { 1 };
                retirements.push((bundle(s.ip), gap.min(63) as u8));
            }
            since = 0;
        } else {
            since += s.cycles;
        }
    });
    assert!(r.samples.len() > 50, "{} samples", r.samples.len());
    let mut from = 0;
    for (k, sample) in r.samples.iter().enumerate() {
        let t = sample.trace.unwrap();
        let history = etb::ip_history(&Snapshot { pmd38: t.pmd38, pmd39: t.pmd39, entries: t.entries });
        assert_eq!(history.len(), 16, "sample {k}");
        let last = history.last().unwrap();
        assert!(!last.early_freeze, "one thread: no switch freezes it early");
        // All but the freeze entry: sixteen... fifteen retirements in a row, after the
        // previous sample's.
        let run: Vec<(u64, u8)> = history[..15].iter().map(|e| (e.ip, e.cycles)).collect();
        let at = (from..retirements.len().saturating_sub(14))
            .find(|&i| retirements[i..i + 15] == run[..])
            .unwrap_or_else(|| panic!("sample {k}: {run:x?} is no run of the stream's retirements after #{from}"));
        from = at + 1;
    }
}

#[test]
fn a_recording_round_trips_through_its_json_form() {
    let r = recorded("fp", "DATA_EAR_ALAT", 50);
    assert!(r.samples.iter().all(|s| s.dear.is_some() && s.iear.is_none() && s.trace.is_none()));
    let text = serde_json::to_string(&r).unwrap();
    assert_eq!(serde_json::from_str::<Recording>(&text).unwrap(), r);
    // The ALAT mode captures the failing check's instruction, not a data address.
    let d = dear_samples(&r)[0];
    assert_eq!((d.data, d.miss), (None, Miss::Alat));
}

// ----------------------------------------------------------- the model on its own

/// Thread 0 at CPL 0 with monitors enabled, PMC4 counting `es` with oi from −`period`.
fn sampling(es: u64, period: u64, capture: &[(usize, u64)]) -> Montecito {
    let mut m = Montecito::new();
    m.set_psr(0, 1 << 2 | 1 << 21).unwrap();
    m.write_pmc(0, 0, 1).unwrap();
    for &(n, v) in capture {
        m.write_pmc(0, n, v).unwrap();
    }
    m.write_pmc(0, 4, es << 8 | 1 << 5 | 0b10 << 24 | 0b1001).unwrap();
    m.write_pmd(0, 4, (1 << 47) - period).unwrap();
    m.write_pmv(0, 0xd2).unwrap();
    m.write_pmc(0, 0, 0).unwrap();
    m
}

fn retiring(ip: u64, cycles: u64) -> Span {
    Span::new(cycles, ip).with(Signal::Instructions, 1)
}

fn snapshot(m: &Montecito) -> Snapshot {
    let mut entries = [0; 16];
    for (k, e) in entries.iter_mut().enumerate() {
        *e = m.read_pmd(0, 48 + k).unwrap();
    }
    Snapshot { pmd38: m.read_pmd(0, 38).unwrap(), pmd39: m.read_pmd(0, 39).unwrap(), entries }
}

/// PMC42 in IP-EAR mode (Table 3-30): plm 1001, mode 100, `delay`.
fn ip_ear(delay: u64) -> u64 {
    0b1001 | 0b100 << 8 | delay << 11
}

#[test]
fn s3_3_10_2_the_ip_ear_records_retired_ips_and_freezes_delay_cycles_after_the_pmu() {
    // CPU_OP_CYCLES (0x12) overflows after 20 cycles; the IP-EAR goes on 6 more.
    let mut m = sampling(0x12, 20, &[(42, ip_ear(6))]);
    let spans: Vec<Span> = (0..10).flat_map(|k| [retiring(0x1000 + 0x30 * k, 2), Span::new(1, 0)]).collect();
    let mut cursor = Cursor::new(Box::new(spans.into_iter().map(|s| Block { body: vec![s], repeat: 1 })));
    let (ran, exit) = engine::run(&mut m, &mut cursor, 100);
    assert_eq!((ran, exit), (20, Exit::Overflow));
    engine::run(&mut m, &mut cursor, 10);
    let history = etb::ip_history(&snapshot(&m));
    // 20 cycles: 13 retiring (the 2nd cycle of each pair 1 cycle after the 1st, the
    // 1st 2 after the last of the pair before), then the delay's 4 retiring of 6, and
    // the last entry at the freeze.
    let ips: Vec<u64> = history.iter().map(|r| r.ip).collect();
    let cycles: Vec<u8> = history.iter().map(|r| r.cycles).collect();
    assert_eq!(history.len(), 16, "the buffer wrapped: {history:?}");
    assert!(history.iter().all(|r| !r.early_freeze));
    let last = history.last().unwrap();
    assert_eq!(last.ip, bundle(0x1000 + 0x30 * 8), "the freeze entry: {history:?}");
    assert_eq!(*ips.get(14).unwrap(), bundle(0x1000 + 0x30 * 8));
    assert_eq!(&cycles[..4], &[1, 2, 1, 2], "{history:?}");
    // Frozen: nothing more is recorded.
    let before = snapshot(&m);
    engine::run(&mut m, &mut cursor, 10);
    assert_eq!(snapshot(&m), before);
}

#[test]
fn s3_3_10_2_a_thread_switch_during_the_delay_freezes_the_ip_ear_early() {
    let mut m = sampling(0x12, 4, &[(42, ip_ear(40))]);
    let other = Span { thread: 1, ..retiring(0x9000, 5) };
    let spans = vec![retiring(0x1000, 4), retiring(0x1030, 3), other];
    let mut cursor = Cursor::new(Box::new(spans.into_iter().map(|s| Block { body: vec![s], repeat: 1 })));
    assert_eq!(engine::run(&mut m, &mut cursor, 4), (4, Exit::Overflow));
    engine::run(&mut m, &mut cursor, 8);
    let history = etb::ip_history(&snapshot(&m));
    let last = history.last().unwrap();
    assert!(last.early_freeze, "{history:?}");
    // Three of the delay's 40 cycles ran on this thread: 37 to go.
    assert_eq!(last.delay, Some(37));
    assert_eq!(history.len(), 8);
    // Table 3-31: the entry's IP is this thread's last retired one, not the IP of the
    // other thread whose cycle froze it (its bits 11:4 hold the delay's rest).
    assert_eq!(last.ip >> 12, bundle(0x1030) >> 12, "{history:?}");
}

#[test]
fn s3_3_8_the_ears_capture_nothing_while_frozen() {
    // DATA_EAR_EVENTS overflows at the first capture; the next miss is not captured.
    let miss = |addr: u64| Span {
        mem: Some(MemRef { addr, stride: 0, size: 8, write: false }),
        detail: Detail { data_ip: 0x2000, data_latency: 30, ..Detail::default() },
        ..retiring(0x2000, 1)
    };
    let mut m = sampling(0xc8, 1, &[(40, 0b10 << 24 | 0b1001)]);
    let mut cursor = Cursor::new(Box::new([miss(0x100), miss(0x200)].into_iter().map(|s| Block { body: vec![s], repeat: 1 })));
    assert_eq!(engine::run(&mut m, &mut cursor, 1), (1, Exit::Overflow));
    engine::run(&mut m, &mut cursor, 1);
    assert_eq!(m.read_pmd(0, 32), Ok(0x100));
    let d = ear::dear_sample(m.read_pmc(0, 40).unwrap(), 0x100, m.read_pmd(0, 33).unwrap(), m.read_pmd(0, 36).unwrap()).unwrap();
    assert_eq!(d.miss, Miss::Cache { latency: 30, overflow: false });
    assert_eq!(d.instruction, Some((bundle(0x2000), (itanium_ip(0x2000) & 3) as u8)));
}

/// A random span that may carry anything the capture units look at.
fn any_span() -> impl Strategy<Value = Span> {
    (
        (1u64..4, 0u64..64, any::<bool>(), any::<bool>(), 0u16..300),
        (
            proptest::option::of((any::<bool>(), any::<bool>(), any::<bool>(), 0u8..3)),
            proptest::option::of((0u16..200, any::<bool>(), 0u8..3)),
        ),
        0i64..3,
    )
        .prop_map(|((cycles, ipk, retires, reads, latency), (branch, fetch), stride)| {
            let ip = 0x4000 + 4 * ipk;
            let translated = |k: u8| [None, Some(Served::L2Tlb), Some(Served::Vhpt)][usize::from(k)];
            let mut s = Span::new(cycles, ip);
            if retires {
                s = s.with(Signal::Instructions, 2);
            }
            if reads {
                s.mem = Some(MemRef { addr: 0x10_0000 + 64 * ipk, stride: 64 * stride, size: 8, write: false });
                s.detail.data_ip = ip;
                s.detail.data_latency = latency;
                s.detail.data_tlb = translated((latency % 3) as u8);
            }
            if let Some((taken, mispredicted, path, kind)) = branch {
                s.branch = Some(Branch { target: 0x8000 + 16 * ipk, taken, mispredicted });
                s.detail.branch_ip = ip + 4;
                s.detail.branch_kind = [BranchKind::IpRelative, BranchKind::Return, BranchKind::Indirect][usize::from(kind)];
                s.detail.path_mispredicted = mispredicted && path;
            }
            if let Some((latency, rab, tlb)) = fetch {
                s.detail.fetch = Some(FetchMiss { addr: ip & !0xf, latency, rab, tlb: translated(tlb) });
            }
            s
        })
}

/// The capture registers PMD32-39 and PMD48-63 of both threads.
fn capture_state(m: &Montecito) -> Vec<u64> {
    (0..2).flat_map(|t| (32..40).chain(48..64).map(move |n| m.read_pmd(t, n).unwrap())).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// The model's bulk path (whole iterations at once: only the last run span by span)
    /// leaves the capture registers exactly as running every iteration does.
    #[test]
    fn skipped_iterations_capture_what_stepped_ones_do(
        body in proptest::collection::vec(any_span(), 1..12),
        repeat in 1u64..40,
        mode in 0usize..4,
        pmc39 in 0u64..0x10000,
    ) {
        let setup = [
            vec![(40, 0b10 << 24 | 0b1001), (37, 0x2809)],
            vec![(40, 0b10 << 24 | 0b01 << 7 | 0b1110 << 16 | 0b1001), (37, 0xe9)],
            vec![(39, pmc39 & 0xfff0 | 0b1001), (42, 0)],
            vec![(42, ip_ear(0))],
        ][mode].clone();
        let mut whole = sampling(0x12, 1 << 40, &setup);
        let mut stepped = whole.clone();
        let cycles = body.iter().map(|s| s.cycles).sum::<u64>() * repeat;
        let mut c = Cursor::new(Box::new(std::iter::once(Block { body: body.clone(), repeat })));
        prop_assert_eq!(engine::run(&mut whole, &mut c, cycles).0, cycles);
        // Iteration k's data addresses are k strides on.
        let iteration = move |k: u64| {
            let mut b = body.clone();
            for s in &mut b {
                if let Some(m) = s.mem.as_mut() {
                    m.addr = m.addr.wrapping_add(k.wrapping_mul(m.stride as u64));
                }
            }
            Block { body: b, repeat: 1 }
        };
        let mut c = Cursor::new(Box::new((0..repeat).map(iteration)));
        engine::run(&mut stepped, &mut c, cycles);
        prop_assert_eq!(capture_state(&whole), capture_state(&stepped));
        prop_assert_eq!(whole.headroom(0), stepped.headroom(0));
    }
}

#[test]
fn sample_fields_name_the_events_that_wrapped() {
    let r = recorded("stream", "DATA_EAR_CACHE_LAT4", 5_000);
    let s: &Sample = &r.samples[0];
    assert_eq!((s.thread, s.events.as_slice()), (0, &[0usize][..]));
    assert!(r.samples.windows(2).all(|w| w[0].cycle < w[1].cycle));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Issue 14: the model works out a span's tags and captures once for all its
    /// counters (`each_rate`); every counter's rate is still exactly `rate`'s, with
    /// capture events (L1I_EAR_EVENTS, DATA_EAR_EVENTS, BRANCH_EVENT), cycles and
    /// retirements on the first counters of both threads and the capture units armed.
    #[test]
    fn each_rate_answers_as_rate_does(spans in proptest::collection::vec(any_span(), 1..24), mode in 0usize..3, thread in 0u8..2) {
        let setup = [vec![(40, 0b10 << 24 | 0b1001), (37, 0x2809)], vec![(37, 0xe9)], vec![(39, 0b1001), (42, 0)]][mode].clone();
        let mut m = sampling(0x43, 1 << 40, &setup);
        for (n, es) in [(5, 0xc8), (6, 0x11), (7, 0x12), (8, 0x08)] {
            m.write_pmc(0, n, es << 8 | 0b1001).unwrap();
            m.write_pmc(1, n, es << 8 | 0b1001).unwrap();
        }
        for mut s in spans {
            s.thread = thread;
            let mut each = Vec::new();
            m.each_rate(&s, m.address_class(&s), &mut |i, r| each.push((i, r)));
            let one: Vec<(usize, u64)> = (0..m.counters()).map(|i| (i, m.rate(i, &s))).filter(|&(_, r)| r > 0).collect();
            prop_assert_eq!(each, one);
        }
    }
}
