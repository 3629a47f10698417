//! Text people type: event strings (parse, resolve, encode, decode), metric expressions
//! and sets of events to schedule.

use std::collections::HashSet;
use std::sync::LazyLock;

use pmukit_arch::encoder::Encoder;
use pmukit_arch::Catalog;
use pmukit_core::event_string::EventSel;
use pmukit_core::metric::{MetricContext, MetricExpr};
use pmukit_core::pmu::Pmu;
use pmukit_core::schedule::has_own_counter;
use pmukit_sim::stat::assumed;

/// The built-in catalog, built once per process.
pub(crate) static CATALOG: LazyLock<Catalog> = LazyLock::new(Catalog::builtin);

/// An encoder for each PMU of the catalog, in its order.
static ENCODERS: LazyLock<Vec<Encoder<'static>>> =
    LazyLock::new(|| CATALOG.pmus.iter().map(|p| Encoder::new(&CATALOG, p.name()).expect("a catalog PMU has an encoder")).collect());

/// The PMU a byte picks.
pub(crate) fn pick_pmu(catalog: &Catalog, byte: u8) -> &Pmu {
    &catalog.pmus[usize::from(byte) % catalog.pmus.len()]
}

/// A resolved selection's canonical name must resolve to the same selection (issue 10:
/// a bare event once took its default unit masks unchecked, so `E` was programmed
/// while `E.A.B` was refused).
pub(crate) fn check_canonical(catalog: &Catalog, pmu: &Pmu, sel: &EventSel) {
    let canonical = format!("{}::{}", pmu.name(), sel.name());
    match catalog.resolve(&canonical, pmu.name()) {
        Ok(again) => assert_eq!(
            (again.code, again.umask, again.name(), &again.modifiers),
            (sel.code, sel.umask, sel.name(), &sel.modifiers),
            "{:?} resolves as {canonical}, which resolves differently",
            sel.input
        ),
        Err(e) => panic!("{:?} resolves as {canonical}, which is refused: {e}", sel.input),
    }
}

/// The first byte picks the default PMU; the rest is lines of event strings (the first
/// six). Each is
/// resolved (and its canonical name checked), the resolved ones of that PMU are
/// encoded together and each alone, and a value from the input is decoded in one
/// register of the PMU, which a hash of the input picks.
pub fn event_strings(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else { return };
    let catalog = &*CATALOG;
    let pmu = pick_pmu(catalog, first);
    let text = String::from_utf8_lossy(rest);
    let mut sels = Vec::new();
    // A few lines an input: an unknown name costs a similarity against every name of
    // the table (the suggestions), and more lines only slowed the fuzzer down.
    let encoder = ENCODERS.iter().find(|e| e.pmu().name() == pmu.name()).expect("every PMU has an encoder");
    for line in text.lines().take(6) {
        // Resolved once: a refusal of an unknown name, the commonest input, costs its
        // suggestions (a similarity against every name), which were most of the time.
        let resolved = catalog.resolve(line, pmu.name());
        // The encoder's selections encoded in advance answer as resolving and encoding do.
        let reference = match &resolved {
            Ok(sel) => pmukit_arch::encode_set(pmu, std::slice::from_ref(sel)).map(|s| s.registers).map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        assert_eq!(encoder.encode(line).map(|r| r.into_owned()).map_err(|e| e.to_string()), reference, "{line:?} on {}", pmu.name());
        if let Ok(sel) = resolved {
            let home = catalog.pmu(sel.pmu).expect("a resolved event's PMU exists");
            check_canonical(catalog, home, &sel);
            let _ = pmukit_arch::encode_set(home, std::slice::from_ref(&sel));
            if sel.pmu == pmu.name() {
                sels.push(sel);
            }
        }
    }
    let _ = pmukit_arch::encode_set(pmu, &sels);
    let value = rest.iter().take(8).fold(0u64, |v, &b| v << 8 | u64::from(b));
    // One register an input: decoding in every register (with a lookup by name each)
    // was two fifths of the target's time; a hash (not a byte, which would be a
    // line's newline in most inputs) spreads the inputs over the registers.
    let registers = pmukit_arch::registers(pmu);
    let pick = rest.iter().fold(0usize, |h, &b| h.wrapping_mul(31).wrapping_add(usize::from(b)));
    if let Some(register) = registers.get(pick % registers.len().max(1)) {
        // Any value that fits the register decodes; a wider one is refused.
        let fits = value & u64::MAX.checked_shr(64 - u32::from(register.width)).unwrap_or(u64::MAX);
        let decoded = pmukit_arch::decode(pmu, register.name, fits);
        assert!(decoded.is_ok(), "{} {} {fits:#x}: {:?}", pmu.name(), register.name, decoded.err());
        if fits != value {
            assert!(pmukit_arch::decode(pmu, register.name, value).is_err(), "{} {} {value:#x} is too wide", pmu.name(), register.name);
        }
    }
}

/// Counts for a metric: every name has a value derived from its text, except names
/// whose hash says "not counted", so both paths are taken.
struct Counts;

impl MetricContext for Counts {
    fn value(&self, name: &str) -> Option<f64> {
        let h = name.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
        (h % 5 != 0).then_some((h % 1000) as f64)
    }

    fn literal(&self, name: &str) -> Option<f64> {
        match name {
            "smt_on" => Some(1.0),
            "num_cpus_online" => Some(8.0),
            _ => None,
        }
    }
}

/// A metric expression: parsed, evaluated, and its printed form parsed again to the
/// same value.
pub fn metric_expressions(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(expr) = MetricExpr::parse(&text) else { return };
    let value = expr.eval(&Counts);
    let again = MetricExpr::parse(&expr.to_string()).expect("a parsed expression's text parses");
    let same = match (&value, again.eval(&Counts)) {
        (Ok(a), Ok(b)) => a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
        (Err(_), Err(_)) => true,
        _ => false,
    };
    assert!(same, "{text:?}: {value:?} differs when printed and parsed again");
    let _ = expr.identifiers();
}

/// The first byte picks a PMU; the rest, two bytes an event, picks events (and one of
/// their unit masks) from its table; an odd-length input also asks for every other
/// event to be counted together, as `-M` asks for a metric's events, and one of length
/// 3 mod 4 for every third too, a set overlapping the first. The set is scheduled:
/// every group of a schedule must encode on its own, every event must be in a group,
/// never twice in one, in several only with a counter of its own or as an event two
/// sets share, and a together set not reported apart must share a group.
pub fn schedule(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else { return };
    let catalog = &*CATALOG;
    let pmu = pick_pmu(catalog, first);
    let events: Vec<_> = pmu.events().collect();
    if events.is_empty() {
        return;
    }
    let sels: Vec<EventSel> = rest
        .chunks_exact(2)
        .take(16)
        .filter_map(|pair| {
            let e = events[usize::from(pair[0]) % events.len()];
            let input = match e.umasks.len() {
                0 => e.name.to_string(),
                n => format!("{}.{}", e.name, e.umasks[usize::from(pair[1]) % n].name),
            };
            catalog.resolve(&input, pmu.name()).ok()
        })
        .collect();
    // An odd length asks for the even events together; one of 3 mod 4 also for every
    // third, a set overlapping the first at 0, 6, …, as two metrics sharing events.
    let together: Vec<Vec<usize>> = match rest.len() % 4 {
        1 => vec![(0..sels.len()).step_by(2).collect()],
        3 => vec![(0..sels.len()).step_by(2).collect(), (0..sels.len()).step_by(3).collect()],
        _ => Vec::new(),
    };
    let Ok(schedule) = pmukit_arch::schedule(pmu, &sels, &together, &Default::default()) else { return };
    let allowed = pmukit_arch::allowed_counters(pmu, &sels);
    // An event in two sets placed on their own is counted in each set's group.
    let shared = |i: usize| together.iter().filter(|s| s.contains(&i)).count() > 1;
    let mut seen = HashSet::new();
    for group in &schedule.groups {
        let members: Vec<EventSel> = group.events.iter().map(|&i| sels[i].clone()).collect();
        assert!(
            pmukit_arch::encode_set(pmu, &members).is_ok(),
            "a scheduled group does not encode: {:?}",
            members.iter().map(EventSel::name).collect::<Vec<_>>()
        );
        let mut in_group = HashSet::new();
        for &i in &group.events {
            assert!(in_group.insert(i), "event {i} is twice in one group");
            assert!(seen.insert(i) || has_own_counter(&allowed, i) || shared(i), "event {i} is in two groups without a reason");
        }
    }
    assert_eq!(seen.len(), sels.len(), "every event is scheduled");
    assert_eq!(schedule.why.is_none(), schedule.groups.len() <= 1);
    for (k, set) in together.iter().enumerate() {
        if schedule.why.is_some() && !schedule.apart.contains(&k) && set.len() > 1 {
            assert!(schedule.groups.iter().any(|g| set.iter().all(|e| g.events.contains(e))), "together set {set:?} is split");
        }
    }
}

/// Montecito's qualification options as the command line takes them, one per line:
/// events (comma-separated, the first twelve), `--irange`, `--drange`, `--opc-match32`,
/// `--opc-match34` (an empty line gives none), then flags (`inverse`, `nocheck`), then
/// `--irange2`. A programmed request must never hold §3.3.5.2's illegal setting, and
/// channel 0's tag at the first range's edges, and channel 1's at the second's, must
/// be what the ranges ask.
pub fn qualify(data: &[u8]) {
    use pmukit_arch::montecito::qualify::{Opcode, Range, Request};
    use pmukit_arch::montecito::tags::{Instruction, Qualification, SlotType};
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut lines = text.split('\n');
    let mut line = || lines.next().unwrap_or("").trim();
    let catalog = &*CATALOG;
    let Ok(pmu) = catalog.pmu("montecito") else { return };
    // The first twelve tokens, resolved or not: a refused unknown name computes its
    // suggestions against every Montecito name, and resolving every token of a long
    // line until twelve resolved was most of the target's time.
    let sels: Vec<EventSel> = line().split(',').take(12).filter_map(|e| catalog.resolve(e.trim(), "montecito").ok()).collect();
    let optional = |text: &str| (!text.is_empty()).then_some(text.to_string());
    let (irange, drange, opc32, opc34, flags) = (optional(line()), optional(line()), optional(line()), optional(line()), line());
    let irange2 = optional(line());
    let Ok(irange) = irange.as_deref().map(Range::parse).transpose() else { return };
    let Ok(irange2) = irange2.as_deref().map(Range::parse).transpose() else { return };
    let Ok(drange) = drange.as_deref().map(Range::parse).transpose() else { return };
    let Ok(opc32) = opc32.as_deref().map(Opcode::parse).transpose() else { return };
    let Ok(opc34) = opc34.as_deref().map(Opcode::parse).transpose() else { return };
    let request = Request {
        irange,
        irange2,
        inverse: flags.contains("inverse"),
        drange,
        opcode: [opc32, opc34],
        no_check: flags.contains("nocheck"),
    };
    let options = pmukit_arch::SetOptions { qualification: request.clone(), ..pmukit_arch::SetOptions::default() };
    let Ok(set) = pmukit_arch::encode_set_with(pmu, &sels, &options) else { return };
    let q = Qualification::after(&set.registers);
    let ig_ad = q.pmc32 >> 57 & 1;
    let illegal = q.pmc41 >> 45 & 0xf == 0 && ig_ad == 0 && (q.pmc38 >> 1 & 1 == 0 || q.pmc38 >> 4 & 1 == 0);
    assert!(!illegal, "§3.3.5.2's illegal setting programmed for {request:?}");
    // Channel 0 carries the first range when it is constrained and no opcode pattern
    // joins it; channel 1 the second (or the first, alone), never inverted.
    let second = request.irange2.or(request.irange);
    let checks = [
        (0, request.irange, ig_ad == 0 && q.pmc38 >> 1 & 1 == 0 && request.opcode[0].is_none(), request.inverse),
        (1, second, q.pmc38 >> 4 & 1 == 0 && request.opcode[1].is_none(), request.inverse && request.irange2.is_none()),
    ];
    for (channel, range, constrained, inverse) in checks {
        let (Some(range), true) = (range, constrained) else { continue };
        let cpl = if q.ibr[2 * channel + 1] >> 59 & 1 == 1 { 3 } else { 0 };
        for ip in [range.start, range.end - 16, range.end, range.start.wrapping_sub(16)] {
            let insn = Instruction { ip, slot: SlotType::M, encoding: 0, cpl };
            let allowed = q.ibr[2 * channel + 1] >> (56 + u32::from(cpl)) & 1 == 1;
            let expect = allowed && (range.contains(ip) != inverse);
            assert_eq!(q.channel_tag(channel, &insn), expect, "{request:?}: channel {channel}, ip {ip:#x}");
        }
    }
}

/// `pmu describe`'s question of an event string: which labelled assumptions its count
/// depends on (`stat::assumed`). The first byte picks the default PMU; the rest's first
/// line is the event string. A selection it resolves to is probed, which must not
/// panic and must name only its machine's assumptions, in the machine's order. One
/// selection an input: a Montecito selection's probe takes about 50 ms.
pub fn describe(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else { return };
    let catalog = &*CATALOG;
    let pmu = pick_pmu(catalog, first);
    let text = String::from_utf8_lossy(rest);
    let Some(line) = text.lines().next() else { return };
    let Ok(sel) = catalog.resolve(line, pmu.name()) else { return };
    let owner = catalog.pmus.iter().find(|p| p.name() == sel.pmu).expect("a selection's PMU is in the catalog");
    let Some(machine) = assumed::assumptions(owner) else {
        assert!(assumed::depends_on(owner, std::slice::from_ref(&sel)).is_none(), "{line:?}: no machine, yet assumptions");
        return;
    };
    let found = assumed::depends_on(owner, std::slice::from_ref(&sel)).expect("a PMU with a machine answers");
    let mut order = machine.iter().map(|a| a.name());
    for a in &found {
        let name = a.name();
        assert!(order.any(|m| m == name), "{line:?}: {name} is not the machine's, or out of its order");
    }
}
