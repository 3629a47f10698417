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

mod capture_conditions {
    use pmukit_arch::montecito::etb::{captures, BranchKind, FlowChange, PsrView};

    const KINDS: [BranchKind; 3] = [BranchKind::IpRelative, BranchKind::Return, BranchKind::Indirect];

    fn branch(kind: BranchKind, taken: bool, path: bool, target: bool) -> FlowChange {
        FlowChange::Branch { kind, taken, path_predicted: path, target_predicted: target }
    }

    fn pmc39(plm: u64, pm: u64, ds: u64, tm: u64, ptm: u64, ppm: u64, brt: u64) -> u64 {
        plm | pm << 6 | ds << 7 | tm << 8 | ptm << 10 | ppm << 12 | brt << 14
    }

    /// §3.3.10.1.1's equation as printed, bit by bit, with Table 3-26's brt and the
    /// plm/pm filter of Table 3-5. Kept in the spec's form, not simplified.
    #[allow(clippy::nonminimal_bool)]
    fn as_printed(v: u64, change: FlowChange, psr: PsrView) -> bool {
        let bit = |pos: u64| v >> pos & 1 == 1;
        let plm_ok = bit(u64::from(psr.cpl));
        let enabled = if bit(6) { psr.pp } else { psr.up };
        if !(plm_ok && enabled) {
            return false;
        }
        let FlowChange::Branch { kind, taken, path_predicted, target_predicted } = change else { return true };
        // "If a branch's path is mispredicted, no target prediction is recorded."
        let target_ok = target_predicted || !path_predicted;
        let (tm1, tm0, ptm1, ptm0, ppm1, ppm0, ds) = (bit(9), bit(8), bit(11), bit(10), bit(13), bit(12), bit(7));
        let brt = v >> 14 & 3;
        let kind_ok = match brt {
            0 => true,
            1 => kind == BranchKind::IpRelative,
            2 => kind == BranchKind::Return,
            _ => kind == BranchKind::Indirect,
        };
        !psr.ia32
            && ((tm1 && taken) || (tm0 && !taken))
            && ((ptm1 && target_ok) || (ptm0 && !target_ok))
            && ((ppm1 && path_predicted) || (ppm0 && !path_predicted))
            && !(!ptm1 && ptm0 && !ppm1 && ppm0)
            && !ds
            && kind_ok
    }

    #[test]
    fn s3_3_10_1_1_every_combination_of_pmc39_and_the_branch_follows_the_equation() {
        let mut changes: Vec<FlowChange> = vec![FlowChange::Rfi, FlowChange::Exception, FlowChange::FailedChk];
        for kind in KINDS {
            for bits in 0..8 {
                changes.push(branch(kind, bits & 1 == 1, bits & 2 == 2, bits & 4 == 4));
            }
        }
        let mut captured = 0u64;
        for v in 0..1u64 << 16 {
            // Bits 5:4 are ignored (Table 3-26).
            if v >> 4 & 3 != 0 {
                continue;
            }
            for &change in &changes {
                for psr_bits in 0..32u8 {
                    let psr = PsrView { ia32: psr_bits & 1 == 1, cpl: psr_bits >> 1 & 3, up: psr_bits & 8 == 8, pp: psr_bits & 16 == 16 };
                    let got = captures(v, change, psr);
                    assert_eq!(got, as_printed(v, change, psr), "PMC39 {v:#06x} {change:?} {psr:?}");
                    captured += u64::from(got);
                }
            }
        }
        assert!(captured > 0);
    }

    #[test]
    fn s3_3_10_1_1_the_settings_the_text_recommends() {
        let psr = PsrView { cpl: 0, pp: true, up: true, ia32: false };
        let all = |v: u64| -> Vec<(bool, bool, bool)> {
            let mut out = Vec::new();
            for bits in 0..8 {
                let (taken, path, target) = (bits & 1 == 1, bits & 2 == 2, bits & 4 == 4);
                if captures(v, branch(BranchKind::Indirect, taken, path, target), psr) {
                    out.push((taken, path, target));
                }
            }
            out
        };
        // "To capture all correctly predicted ... branches: ds=0, tm=11, ptm=10, ppm=10, brt=00."
        assert_eq!(all(pmc39(1, 0, 0, 0b11, 0b10, 0b10, 0)), [(false, true, true), (true, true, true)]);
        // Path mispredictions (ptm=11, ppm=01), or target mispredictions (ptm=01,
        // ppm=11), "but not both".
        assert!(all(pmc39(1, 0, 0, 0b11, 0b11, 0b01, 0)).iter().all(|&(_, path, _)| !path));
        assert!(all(pmc39(1, 0, 0, 0b11, 0b01, 0b11, 0)).iter().all(|&(_, path, target)| path && !target));
        // "ds=0, tm=11, ptm=01, ppm=01, brt=00 will result in an empty buffer."
        assert!(all(pmc39(1, 0, 0, 0b11, 0b01, 0b01, 0)).is_empty());
        // rfi, exceptions and failed chk pass every filter but plm and pm.
        assert!(captures(pmc39(1, 0, 1, 0, 0, 0, 0), FlowChange::Rfi, psr));
        assert!(!captures(pmc39(0b1000, 0, 0, 0b11, 0b11, 0b11, 0), FlowChange::Exception, psr), "plm excludes CPL 0");
    }
}
