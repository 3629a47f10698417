//! Decoding a frozen execution trace buffer (§3.3.10): the branch trace of ETB mode
//! (Tables 3-27, 3-28, 3-29) and the retired-IP history of IP-EAR mode (Tables 3-31 to
//! 3-33), oldest first.

use pmukit_arch::montecito::etb::{branch_trace, extension_bit, ip_history, Retired, Snapshot, Traced};

/// An entry: bundle address, slot, mp, s (Table 3-27).
fn entry(bundle: u64, slot: u64, mp: bool, s: bool) -> u64 {
    bundle & !0xf | slot << 2 | u64::from(mp) << 1 | u64::from(s)
}

fn snapshot(pmd38: u64, entries: &[(usize, u64)], ext: &[(usize, u64)]) -> Snapshot {
    let mut snap = Snapshot { pmd38, ..Snapshot::default() };
    for &(index, v) in entries {
        snap.entries[index - 48] = v;
    }
    for &(index, bits) in ext {
        snap.pmd39 |= bits << extension_bit(index);
    }
    snap
}

#[test]
fn s3_3_10_1_2_an_empty_buffer_holds_no_trace() {
    // "If both the full bit and the ebi field of PMD38 are zero, no qualified branch
    // has been captured."
    let snap = snapshot(0, &[(48, entry(0x1000, 0, false, true))], &[]);
    assert!(snap.order().is_empty());
    assert!(branch_trace(&snap).is_empty());
}

#[test]
fn table_3_27_sources_pair_with_the_targets_after_them() {
    let snap = snapshot(
        4,
        &[
            (48, entry(0x4000_1000, 1, false, true)),    // predicted branch in slot 1
            (49, entry(0x4000_8000, 0, true, false)),    // its target
            (50, entry(0x4000_8040, 0b11, false, true)), // a not-taken branch
            (51, entry(0, 0, false, false)),             // invalid: s = mp = 0
        ],
        // Table 3-29: PMD50's b1, "add 0x1 to PMD48.bits[63:4]": the second bundle.
        &[(50, 0b01)],
    );
    assert_eq!(snap.order(), [48, 49, 50, 51], "not full: PMD48 up to the one before ebi");
    assert_eq!(
        branch_trace(&snap),
        [
            Traced::Source { bundle: 0x4000_1000, slot: Some(1), mispredicted: false, flushed: false, target: Some(0x4000_8000) },
            Traced::Source { bundle: 0x4000_8050, slot: None, mispredicted: false, flushed: false, target: None },
        ]
    );
}

#[test]
fn table_3_28_a_full_buffer_starts_at_ebi_and_brflush_needs_a_misprediction() {
    // full = 1, ebi = 2: PMD50 is the oldest; PMD49 the youngest. PMD50 is a target
    // whose source (PMD49's predecessor round the buffer) was overwritten.
    let mut entries: Vec<(usize, u64)> = (48..64).map(|i| (i, entry(0x1_0000 + 0x100 * i as u64, 0, true, false))).collect();
    entries[3] = (51, entry(0x2000, 2, true, true)); // a mispredicted branch, slot 2
    entries[5] = (53, entry(0x3000, 0, false, true)); // a predicted branch
    let snap = snapshot(0x22, &entries, &[(51, 0b10), (53, 0b10)]);
    assert_eq!(snap.order()[..3], [50, 51, 52]);
    assert_eq!(*snap.order().last().unwrap(), 49);
    let trace = branch_trace(&snap);
    assert_eq!(trace[0], Traced::Target { bundle: 0x1_0000 + 0x100 * 50 });
    assert_eq!(
        trace[1],
        Traced::Source { bundle: 0x2000, slot: Some(2), mispredicted: true, flushed: true, target: Some(0x1_0000 + 0x100 * 52) }
    );
    // Table 3-29: brflush counts only "If PMD48.bits[1:0] = 11".
    assert!(matches!(trace[2], Traced::Source { flushed: false, mispredicted: false, .. }));
}

#[test]
fn tables_3_31_and_3_33_retired_ips_with_their_cycles_and_early_freeze() {
    // IP 0x4000_0000_0012_3450: bits 63:12 in 59:8, bits 11:4 in 7:0; 6-bit cycles
    // 0b10_0111 = 39 split 4 low bits here, 2 high bits in PMD39.
    let ip = 0x4000_0000_0012_3450u64;
    let normal = 0b0111 << 60 | (ip >> 12) << 8 | (ip >> 4 & 0xff);
    // An early-freeze entry: 7:0 is the rest of the delay count, not IP bits.
    let early = (0x4000_0000_0099_9000u64 >> 12) << 8 | 0x2a;
    let snap = snapshot(2, &[(48, normal), (49, early)], &[(48, 0b10 << 2 | 0b10), (49, 0b01)]);
    assert_eq!(
        ip_history(&snap),
        [
            Retired { ip, cycles: 39, flush: true, early_freeze: false, delay: None },
            Retired { ip: 0x4000_0000_0099_9000, cycles: 0, flush: false, early_freeze: true, delay: Some(0x2a) },
        ]
    );
}
