//! Qualification requests turned into registers (§3.2.3.1 Table 3-3, §3.3.5-§3.3.7):
//! every mode of Table 3-3, round trips through the hardware's own tag computation
//! (`tags`), the illegal setting of §3.3.5.2, and a refusal for every impossible or
//! contradictory request.

use pmukit_arch::montecito::qualification::{CFGDTAG_FIELDS, CH_IG_OPC, EN_DBRP_FIELDS, FINE, IG_IBRP_FIELDS, OPC_IG_AD, OPC_INV, PMC38};
use pmukit_arch::montecito::qualify::{Opcode, Range, Request};
use pmukit_arch::montecito::tags::{Instruction, Qualification, SlotType};
use pmukit_arch::{encode_set_with, Catalog, EncodeError, EncodedSet, SetOptions};
use pmukit_core::event_string::EventSel;
use proptest::prelude::*;

/// A page-aligned code region, high enough that bits 63:56 are not all zero.
const CODE: u64 = 0x4000_0000_0010_0000;
const DATA: u64 = 0x6000_0000_0020_0000;
const ALL_OPCODES: u64 = (1 << 41) - 1;

fn sels(names: &[&str]) -> Vec<EventSel> {
    let catalog = Catalog::builtin();
    names.iter().map(|n| catalog.resolve(&format!("montecito::{n}"), "montecito").expect(n)).collect()
}

fn encode(names: &[&str], request: Request) -> Result<EncodedSet, EncodeError> {
    let catalog = Catalog::builtin();
    let pmu = catalog.pmu("montecito").unwrap();
    encode_set_with(pmu, &sels(names), &SetOptions { qualification: request, ..SetOptions::default() })
}

fn refusal(names: &[&str], request: Request) -> String {
    match encode(names, request) {
        Ok(set) => panic!("{names:?} was programmed: {:?}", set.registers),
        Err(e) => e.to_string(),
    }
}

/// The qualification state the set's writes leave, from reset.
fn state(set: &EncodedSet) -> Qualification {
    Qualification::after(&set.registers)
}

fn irange(start: u64, end: u64) -> Request {
    Request { irange: Some(Range { start, end }), ..Request::default() }
}

fn drange(start: u64, end: u64) -> Request {
    Request { drange: Some(Range { start, end }), ..Request::default() }
}

fn every_opcode() -> Opcode {
    Opcode { m: true, i: true, f: true, b: true, pattern: 0, mask: ALL_OPCODES }
}

fn insn(ip: u64, cpl: u8) -> Instruction {
    Instruction { ip, slot: SlotType::M, encoding: 0, cpl }
}

/// Table 3-3's columns for channel 0: ig_ad, ig_ibrp0, Ch0_ig_OPC, [en_dbrp0, cfgdtag0].
type Columns = (u64, u64, u64, (u64, u64));

/// Table 3-3's columns for channel 0: PMC32.ig_ad, PMC38.ig_ibrp0, PMC36.Ch0_ig_OPC,
/// and PMC41 [en_dbrp0, cfgdtag0].
fn columns(q: &Qualification) -> Columns {
    (
        OPC_IG_AD.get(q.pmc32),
        IG_IBRP_FIELDS[0].get(q.pmc38),
        CH_IG_OPC[0].get(q.pmc36),
        (EN_DBRP_FIELDS[0].get(q.pmc41), CFGDTAG_FIELDS[0].get(q.pmc41)),
    )
}

#[test]
fn table_3_3_each_qualification_mode_programs_its_row() {
    let range = Some(Range { start: CODE, end: CODE + 0x1000 });
    let data = Some(Range { start: DATA, end: DATA + 0x100 });
    let opcode = [Some(every_opcode()), None];
    let mem = &["L1D_READS_SET0"][..];
    // (events, request, ig_ad, ig_ibrp0, Ch0_ig_OPC, [en_dbrp0, cfgdtag0]).
    let rows: [(&[&str], Request, Columns); 6] = [
        // "Instruction Address Range Check only; channel 0": [1,00] in the table; we
        // program [1,01] (ERRATA MA17).
        (mem, Request { irange: range, ..Request::default() }, (0, 0, 1, (1, 0b01))),
        // "Opcode Matching only Channel i".
        (mem, Request { opcode, ..Request::default() }, (0, 1, 0, (1, 0b01))),
        // "Data Address Range Check only": ig_ad 1, [1,10].
        (mem, Request { drange: data, ..Request::default() }, (1, 1, 1, (1, 0b10))),
        // "Instruction Address Range Check and Opcode Matching, channel0".
        (mem, Request { irange: range, opcode, ..Request::default() }, (0, 0, 0, (1, 0b01))),
        // "Instruction and Data Address Range Check".
        (mem, Request { irange: range, drange: data, ..Request::default() }, (0, 0, 1, (1, 0b00))),
        // "Opcode Matching and Data Address Range Check".
        (mem, Request { drange: data, opcode, ..Request::default() }, (0, 1, 0, (1, 0b00))),
    ];
    for (i, (names, request, row)) in rows.into_iter().enumerate() {
        let set = encode(names, request).unwrap_or_else(|e| panic!("row {i}: {e}"));
        let q = state(&set);
        assert_eq!(columns(&q), row, "row {i}");
        // Note 1: "PMC32.inv must be set to 0 if address range inversion is not needed".
        if row.0 == 0 {
            assert_eq!(OPC_INV.get(q.pmc32), 0, "row {i}");
        }
    }
    // No request: no qualification register is written.
    let set = encode(mem, Request::default()).unwrap();
    assert!(set.registers.iter().all(|(r, _)| r.starts_with("PMC") && r[3..].parse::<usize>().unwrap() < 16));
}

#[test]
fn s3_3_5_2_the_predetermined_bits_of_pmc38_and_pmc41_are_kept() {
    for request in [irange(CODE, CODE + 0x40), irange(CODE + 0x10, CODE + 0x50), drange(DATA, DATA + 0x30)] {
        let q = state(&encode(&["L1D_READS_SET0"], request.clone()).unwrap());
        let decoded = PMC38.decode(q.pmc38, &|_, _| None).unwrap();
        assert!(decoded.warnings.is_empty(), "{request:?}: {:?}", decoded.warnings);
        // Only the switches of Table 3-10 and 3-14 move.
        let switches = IG_IBRP_FIELDS.iter().fold(FINE.mask(), |m, f| m | f.mask());
        assert_eq!(q.pmc38 & !switches, PMC38.reset & !switches);
    }
}

#[test]
fn s3_3_5_2_prefetch_events_are_qualified_through_ibrp1_and_tagged_retired_through_its_unit_mask() {
    let q = state(&encode(&["L1I_PREFETCHES"], irange(CODE, CODE + 0x100)).unwrap());
    assert_eq!(IG_IBRP_FIELDS.map(|f| f.get(q.pmc38)), [1, 0, 1, 1]);
    assert_eq!(OPC_IG_AD.get(q.pmc32), 1, "channel 0 stays unconstrained");
    assert_eq!((q.ibr[2], q.ibr[0]), (CODE, 0));
    // The demand-or-prefetch events take both pairs.
    let q = state(&encode(&["L1I_FILLS"], irange(CODE, CODE + 0x100)).unwrap());
    assert_eq!(IG_IBRP_FIELDS.map(|f| f.get(q.pmc38)), [0, 0, 1, 1]);
    for (umask, pairs) in [("IBRP0_PMC32_33", [0, 1, 1, 1]), ("IBRP2_PMC32_33", [1, 1, 0, 1]), ("IBRP3_PMC34_35", [1, 1, 1, 0])] {
        let q = state(&encode(&[&format!("IA64_TAGGED_INST_RETIRED.{umask}")], irange(CODE, CODE + 0x100)).unwrap());
        assert_eq!(IG_IBRP_FIELDS.map(|f| f.get(q.pmc38)), pairs, "{umask}");
    }
}

/// §3.3.5.2: "It is illegal to have PMC41[48:45]=0000 and PMC32.ig_ad=0 and
/// ((PMC38[2:1]=10 or 00) or (PMC38[5:4]=10 or 00))".
fn illegal(q: &Qualification) -> bool {
    let pmc38 = |hi: u32, lo: u32| q.pmc38 >> lo & ((1 << (hi - lo + 1)) - 1);
    q.pmc41 >> 45 & 0xf == 0 && OPC_IG_AD.get(q.pmc32) == 0 && (matches!(pmc38(2, 1), 0b10 | 0b00) || matches!(pmc38(5, 4), 0b10 | 0b00))
}

fn aligned(start: u64, len: u64) -> (u64, u64) {
    let start = CODE + (start & 0xfff_fff0);
    (start, start + (len & 0xffff).max(1) * 0x10)
}

proptest! {
    /// Encode a range, then let the hardware's tag computation judge every IP: inside
    /// (or, inverted, outside) the range counts, at the events' privilege levels only.
    #[test]
    fn an_instruction_range_tags_exactly_its_addresses(
        start in 0u64..0x4_0000, len in 1u64..0x2000, inverse: bool, user_only: bool,
        probes in proptest::collection::vec((0u64..0x6_0000, 0u8..4), 64),
    ) {
        let (start, end) = aligned(start << 4, len);
        let event = if user_only { "IA64_INST_RETIRED:u" } else { "IA64_INST_RETIRED" };
        let request = Request { inverse, ..irange(start, end) };
        match encode(&[event], request) {
            Ok(set) => {
                let q = state(&set);
                prop_assert!(!illegal(&q));
                for (offset, cpl) in probes {
                    let ip = CODE + (offset << 4);
                    let inside = (start..end).contains(&ip);
                    let level_ok = if user_only { cpl == 3 } else { cpl == 3 || cpl == 0 };
                    prop_assert_eq!(q.channel_tag(0, &insn(ip, cpl)), inside != inverse && level_ok, "ip {:#x} cpl {}", ip, cpl);
                }
            }
            Err(e) => {
                // Refused only when neither mode can express it.
                let block = (end - start).is_power_of_two() && start % (end - start) == 0;
                let fine = start >> 16 == (end - 1) >> 16 && start & 0xffff != 0;
                prop_assert!(!block && !fine, "{:#x}-{:#x} refused: {}", start, end, e);
            }
        }
    }

    /// A data range alone takes up to four aligned blocks; the model's DBR matching
    /// then counts exactly the addresses inside it.
    #[test]
    fn a_data_range_constrains_exactly_its_addresses(start in 0u64..0x1_0000, len in 1u64..0x4000, probes in proptest::collection::vec(0u64..0x2_0000, 64)) {
        let (start, end) = (DATA + start, DATA + start + len);
        match encode(&["L1D_READS_SET0"], drange(start, end)) {
            Ok(set) => {
                let q = state(&set);
                prop_assert!(!illegal(&q));
                for p in probes {
                    let data = DATA + p;
                    prop_assert_eq!(q.memory_event_counts(&insn(CODE, 3), data), (start..end).contains(&data), "{:#x}", data);
                }
            }
            Err(e) => prop_assert!(e.to_string().contains("at most four aligned blocks"), "{}", e),
        }
    }

    /// An opcode pattern on OpCM0 tags channel 0 exactly where §3.3.6.2's imatch and
    /// ematch say.
    #[test]
    fn an_opcode_pattern_tags_exactly_the_matching_instructions(
        m: bool, i: bool, f: bool, b: bool, pattern in 0u64..(1 << 41), mask in 0u64..(1 << 41),
        probes in proptest::collection::vec((0u64..(1 << 41), 0usize..4), 32),
    ) {
        prop_assume!(m || i || f || b);
        let op = Opcode { m, i, f, b, pattern, mask };
        let set = encode(&["IA64_INST_RETIRED"], Request { opcode: [Some(op), None], ..Request::default() }).unwrap();
        let q = state(&set);
        prop_assert!(!illegal(&q));
        for (encoding, slot) in probes {
            let (slot, on) = [(SlotType::M, m), (SlotType::I, i), (SlotType::F, f), (SlotType::B, b)][slot];
            let matches = on && (encoding ^ pattern) & !mask == 0;
            prop_assert_eq!(q.channel_tag(0, &Instruction { ip: CODE, slot, encoding, cpl: 3 }), matches);
        }
        // A pattern that fixes the bits of the probe matches it.
        let exact = Instruction { ip: CODE, slot: SlotType::M, encoding: pattern, cpl: 0 };
        prop_assert_eq!(q.channel_tag(0, &exact), m);
    }
}

#[test]
fn table_3_10_fine_mode_bounds_a_range_inside_one_page() {
    let (start, end) = (CODE + 0x1230, CODE + 0x4560);
    let set = encode(&["IA64_INST_RETIRED"], irange(start, end)).unwrap();
    let q = state(&set);
    assert_eq!((FINE.get(q.pmc38), IG_IBRP_FIELDS[0].get(q.pmc38), IG_IBRP_FIELDS[2].get(q.pmc38)), (1, 0, 0));
    assert_eq!((q.ibr[0], q.ibr[4]), (start - 0x10, end), "exclusive bounds");
    assert!(set.notes.iter().any(|n| n.contains("fine mode")));
    // Running to the end of the page keeps the upper bound in the page.
    let q = state(&encode(&["IA64_INST_RETIRED"], irange(CODE + 0x10, CODE + 0x1_0000)).unwrap());
    assert_eq!(q.ibr[4], CODE + 0xffff);
    assert!(q.channel_tag(0, &insn(CODE + 0xfff0, 0)) && !q.channel_tag(0, &insn(CODE, 0)));
}

fn two_ranges(first: (u64, u64), second: (u64, u64)) -> Request {
    Request { irange2: Some(Range { start: second.0, end: second.1 }), ..irange(first.0, first.1) }
}

const CHANNELS_0_1: [&str; 2] = ["IA64_TAGGED_INST_RETIRED.IBRP0_PMC32_33", "IA64_TAGGED_INST_RETIRED.IBRP1_PMC34_35"];

/// §3.3.5: "Using these IBR pairs it is possible to define up to 4 different address
/// ranges (only 2 address ranges in fine mode)"; the second range goes to channels 1
/// and 3 (Table 3-10's range 1), the first keeps 0 and 2.
#[test]
fn s3_3_5_a_second_range_qualifies_channels_1_and_3() {
    let (a, b) = ((CODE, CODE + 0x100), (CODE + 0x8000, CODE + 0x8400));
    let q = state(&encode(&CHANNELS_0_1, two_ranges(a, b)).unwrap());
    assert_eq!(IG_IBRP_FIELDS.map(|f| f.get(q.pmc38)), [0, 0, 1, 1]);
    assert_eq!((FINE.get(q.pmc38), q.ibr[0], q.ibr[2]), (0, a.0, b.0));
    for (channel, (start, end)) in [(0, a), (1, b)] {
        for (ip, inside) in [(start, true), (end - 0x10, true), (end, false), (start - 0x10, false)] {
            assert_eq!(q.channel_tag(channel, &insn(ip, 0)), inside, "channel {channel}, ip {ip:#x}");
        }
    }
    // A demand-or-prefetch event: its demand side in the first, its prefetch side in
    // the second; channel 3 follows the second range.
    let names = ["L1I_FILLS", "IA64_TAGGED_INST_RETIRED.IBRP3_PMC34_35"];
    let q = state(&encode(&names, two_ranges(a, b)).unwrap());
    assert_eq!(IG_IBRP_FIELDS.map(|f| f.get(q.pmc38)), [0, 0, 1, 0]);
    assert_eq!((q.ibr[0], q.ibr[2], q.ibr[6]), (a.0, b.0, b.0));
    // Inversion stays channel 0's: the second range's channel is not inverted.
    let q = state(&encode(&CHANNELS_0_1, Request { inverse: true, ..two_ranges(a, b) }).unwrap());
    assert!(!q.channel_tag(0, &insn(a.0, 0)) && q.channel_tag(0, &insn(b.0, 0)));
    assert!(q.channel_tag(1, &insn(b.0, 0)) && !q.channel_tag(1, &insn(a.0, 0)));
}

/// Table 3-10: PMC38.fine is one bit; when one range needs it, both are bounded in
/// fine mode (range 0 by IBRP0/2, range 1 by IBRP1/3).
#[test]
fn table_3_10_fine_mode_takes_both_ranges() {
    let (a, b) = ((CODE + 0x1230, CODE + 0x4560), (CODE + 0x8000, CODE + 0x8400));
    let set = encode(&CHANNELS_0_1, two_ranges(a, b)).unwrap();
    let q = state(&set);
    assert_eq!((FINE.get(q.pmc38), IG_IBRP_FIELDS.map(|f| f.get(q.pmc38))), (1, [0, 0, 0, 0]));
    assert_eq!((q.ibr[0], q.ibr[4], q.ibr[2], q.ibr[6]), (a.0 - 0x10, a.1, b.0 - 0x10, b.1));
    assert!(q.channel_tag(1, &insn(b.0, 0)) && !q.channel_tag(1, &insn(b.1, 0)) && !q.channel_tag(1, &insn(a.0, 0)));
    // A block that fine mode cannot bound (it starts on a 64 KB boundary) is refused
    // because of the other range, and the message says so.
    let e = refusal(&CHANNELS_0_1, two_ranges(a, (CODE + 0x1_0000, CODE + 0x1_0400)));
    assert!(e.starts_with("second instruction range") && e.contains("because instruction range") && e.contains("PMC38.fine"), "{e}");
    // The same range twice: each refusal names the range by its place.
    let same = (CODE + 0x10, CODE + 0x2_0000);
    let e = refusal(&CHANNELS_0_1, two_ranges(same, same));
    assert!(e.starts_with("instruction range") && !e.contains("because"), "{e}");
}

#[test]
fn a_second_range_that_constrains_nothing_or_stands_alone_is_refused() {
    let (a, b) = ((CODE, CODE + 0x100), (CODE + 0x8000, CODE + 0x8400));
    let e = refusal(&["IA64_INST_RETIRED"], two_ranges(a, b));
    assert!(e.starts_with("second instruction range") && e.contains("constrains no event") && e.contains("IBRP1_PMC34_35"), "{e}");
    let e = refusal(&["L1I_PREFETCHES"], two_ranges(a, b));
    assert!(e.starts_with("instruction range") && e.contains("channel 1 or 3"), "{e}");
    let e = refusal(&["L1I_FILLS"], Request { irange2: Some(Range { start: b.0, end: b.1 }), ..Request::default() });
    assert!(e.contains("give --irange too"), "{e}");
}

#[test]
fn impossible_instruction_ranges_are_refused_with_the_rule() {
    let e = refusal(&["IA64_INST_RETIRED"], irange(CODE + 8, CODE + 0x40));
    assert!(e.contains("16-byte bundles"), "{e}");
    let e = refusal(&["IA64_INST_RETIRED"], irange(CODE + 0x10, CODE + 0x2_0000));
    assert!(
        e.contains("nor inside one 64 KB page") && e.contains("smallest block holding it is 0x4000000000100000-0x4000000000120000"),
        "{e}"
    );
    let e = refusal(&["IA64_INST_RETIRED"], irange(CODE, CODE + 0x30));
    assert!(e.contains("starting on a 64 KB boundary"), "{e}");
    let e = refusal(&["IA64_TAGGED_INST_RETIRED.IBRP2_PMC32_33"], irange(CODE + 0x10, CODE + 0x30));
    assert!(e.contains("tag channel 2 is not defined"), "{e}");
}

#[test]
fn impossible_data_ranges_are_refused_with_the_rule() {
    // 1 + 2 + 4 + 8 + 16 bytes: five blocks.
    let e = refusal(&["L1D_READS_SET0"], drange(DATA + 1, DATA + 32));
    assert!(e.starts_with("data range 0x6000000000200001-0x6000000000200020") && e.contains("at most four aligned blocks"), "{e}");
    let request = Request { irange: Some(Range { start: CODE, end: CODE + 0x100 }), ..drange(DATA, DATA + 0x300) };
    let e = refusal(&["L1D_READS_SET0"], request);
    assert!(e.contains("only DBRP0 combines with tag channel 0"), "{e}");
}

#[test]
fn events_a_request_cannot_reach_are_refused_or_noted() {
    // CPU_CPL_CHANGES: IAR N.
    let e = refusal(&["IA64_INST_RETIRED", "CPU_CPL_CHANGES"], irange(CODE, CODE + 0x100));
    assert!(
        e.contains("'CPU_CPL_CHANGES.ALL' cannot be constrained by an instruction address range") && e.contains("--no-qual-check"),
        "{e}"
    );
    // IA64_INST_RETIRED: DAR N.
    let e = refusal(&["L1D_READS_SET0", "IA64_INST_RETIRED"], drange(DATA, DATA + 0x100));
    assert!(e.contains("'IA64_INST_RETIRED.THIS' cannot be constrained by a data address range"), "{e}");
    // L1I_READS: OPC N.
    let opcode = Request { opcode: [Some(every_opcode()), None], ..Request::default() };
    let e = refusal(&["IA64_INST_RETIRED", "L1I_READS"], opcode.clone());
    assert!(e.starts_with("opcode matcher 0 (PMC32/PMC33)") && e.contains("OPC N"), "{e}");
    // With --no-qual-check the set is programmed and the event named.
    let set = encode(&["IA64_INST_RETIRED", "L1I_READS"], Request { no_check: true, ..opcode }).unwrap();
    assert!(set.notes.iter().any(|n| n.contains("'L1I_READS'")), "{:?}", set.notes);
}

#[test]
fn requests_that_constrain_nothing_are_refused() {
    let e = refusal(&["CPU_CPL_CHANGES"], Request { no_check: true, ..irange(CODE, CODE + 0x100) });
    assert!(e.contains("constrains no event of the set"), "{e}");
    let e = refusal(&["IA64_INST_RETIRED"], Request { no_check: true, ..drange(DATA, DATA + 0x100) });
    assert!(e.contains("constrains no event of the set"), "{e}");
    let e = refusal(&["IA64_INST_RETIRED"], Request { opcode: [None, Some(every_opcode())], ..Request::default() });
    assert!(
        e.starts_with("opcode matcher 1 (PMC34/PMC35) mifb:0x0:0x1ffffffffff: constrains no event") && e.contains("IBRP1_PMC34_35"),
        "{e}"
    );
}

#[test]
fn table_3_11_inversion_is_channel_0_s_alone() {
    let e = refusal(&["IA64_INST_RETIRED"], Request { inverse: true, ..Request::default() });
    assert!(e.contains("none is given"), "{e}");
    let e = refusal(&["IA64_INST_RETIRED", "L1I_PREFETCHES"], Request { inverse: true, ..irange(CODE, CODE + 0x100) });
    assert!(e.contains("'L1I_PREFETCHES' is qualified through IBRP1") && e.contains("PMC32.inv inverts tag channel 0 only"), "{e}");
}

#[test]
fn other_pmus_have_no_qualification_registers() {
    let catalog = Catalog::builtin();
    let pmu = catalog.pmu("arm1176").unwrap();
    let sel = catalog.resolve("arm1176::INSTR_EXEC", "arm1176").unwrap();
    let e = encode_set_with(pmu, &[sel], &SetOptions { qualification: irange(0x1000, 0x2000), ..SetOptions::default() })
        .unwrap_err()
        .to_string();
    assert!(e.contains("arm1176 has no qualification registers"), "{e}");
}

#[test]
fn malformed_ranges_and_opcode_patterns_are_refused_naming_the_text() {
    assert_eq!(Range::parse("0x10-0x20"), Ok(Range { start: 0x10, end: 0x20 }));
    for (text, says) in [
        ("0x10", "expected START-END"),
        ("0x20-0x10", "must lie above the start"),
        ("0x10-0x10", "must lie above the start"),
        ("x-0x10", "start 'x' is not a number"),
        ("0x10-", "end '' is not a number"),
        ("-5-10", "start '' is not a number"),
        ("0x10-+0x20", "is not a number"),
    ] {
        let e = Range::parse(text).unwrap_err();
        assert!(e.starts_with(&format!("'{text}'")) && e.contains(says), "{text}: {e}");
    }
    assert_eq!(Opcode::parse(":0:0x1ffffffffff"), Ok(Opcode { mask: ALL_OPCODES, ..every_opcode() }));
    assert_eq!(Opcode::parse("MI:0x5:0").map(|o| (o.m, o.i, o.f, o.b, o.pattern)), Ok((true, true, false, false, 5)));
    for (text, says) in [
        ("m:0", "expected [mifb]:MATCH:MASK"),
        ("m:0:0:0", "expected [mifb]:MATCH:MASK"),
        ("q:0:0", "unknown slot type 'q'"),
        ("mm:0:0", "given twice"),
        ("m:0x20000000000:0", "wider than an instruction's 41 bits"),
        ("m:0:zz", "MASK 'zz' is not a number"),
    ] {
        let e = Opcode::parse(text).unwrap_err();
        assert!(e.starts_with(&format!("'{text}'")) && e.contains(says), "{text}: {e}");
    }
}
