//! Event qualification as Montecito computes it: instruction address range tags
//! (§3.3.5), opcode matchers and tag channels (§3.3.6, §3.2.3.1) and data address
//! range constraints (§3.3.7), over the IBR/DBR fields of the Itanium architecture
//! (SDM volume 2, Table 7-1: mask 55:0 compares, bits 63:56 always compared, plm 59:56,
//! x 63).

use pmukit_arch::montecito::tags::{address_match, Instruction, Qualification, SlotType};

const CODE: u64 = 0x4000_0000_0001_0000;
/// A mask comparing every address bit from 12 up (a 4 KB range), at every privilege level.
const PAGE_4K: u64 = ((1 << 56) - 1) & !0xfff | 0xf << 56;

fn insn(ip: u64) -> Instruction {
    Instruction { ip, slot: SlotType::M, encoding: 0x123, cpl: 3 }
}

/// Channel 0 constrained by IBRP0 to [CODE, CODE + 4 KB): ig_ad = 0, inv = 0,
/// ig_ibrp0 = 0 (§3.3.5.4's steps, in normal mode).
fn range0() -> Qualification {
    let mut q = Qualification::default();
    q.pmc32 &= !(1 << 57 | 1 << 56);
    q.pmc38 &= !(1 << 1);
    q.ibr[0] = CODE;
    q.ibr[1] = PAGE_4K;
    q
}

#[test]
fn table_7_1_address_bits_above_55_are_always_compared() {
    assert!(address_match(0x4000_0000_0000_1234, 0x4000_0000_0000_1000, PAGE_4K, 4));
    assert!(!address_match(0x4000_0000_0000_2234, 0x4000_0000_0000_1000, PAGE_4K, 4));
    // A mask of zero still compares 63:56.
    assert!(address_match(0x40ff_ffff_ffff_ffff, 0x4000_0000_0000_0000, 0, 0));
    assert!(!address_match(0x4100_0000_0000_0000, 0x4000_0000_0000_0000, 0, 0));
}

#[test]
fn s3_3_12_the_reset_state_constrains_nothing() {
    let q = Qualification::default();
    for ip in [0, CODE, !0xf] {
        for ch in 0..4 {
            assert!(q.channel_tag(ch, &insn(ip)), "channel {ch} at {ip:#x}");
        }
        assert!(q.memory_event_counts(&insn(ip), 0x1234), "PMC41's reset: en_dbrp0 with cfgdtag0 = 11");
    }
}

#[test]
fn s3_3_5_1_ibrp0_tags_channel_0_inside_its_range_only() {
    let q = range0();
    assert!(q.channel_tag(0, &insn(CODE + 0x10)));
    assert!(!q.channel_tag(0, &insn(CODE + 0x1000)));
    assert!(!q.channel_tag(0, &insn(CODE - 0x10)));
    // Channels 1-3 stay unconstrained (ig_ibrp1-3 = 1).
    assert!(q.channel_tag(1, &insn(CODE + 0x1000)));
    // IBR1's plm: without bit 59, level 3 is not tagged.
    let mut kernel_only = range0();
    kernel_only.ibr[1] = PAGE_4K & !(1 << 59);
    assert!(!kernel_only.channel_tag(0, &insn(CODE + 0x10)));
    // Table 3-11 inv: the range inverted.
    let mut outside = range0();
    outside.pmc32 |= 1 << 56;
    assert!(!outside.channel_tag(0, &insn(CODE + 0x10)));
    assert!(outside.channel_tag(0, &insn(CODE + 0x1000)));
    // An IBR pair armed for debugging (x = 1) is not used for monitoring.
    let mut debug = range0();
    debug.ibr[1] |= 1 << 63;
    assert!(debug.channel_tag(0, &insn(CODE + 0x1000)));
}

#[test]
fn s3_3_5_4_fine_mode_bounds_range_0_with_ibrp0_and_ibrp2() {
    let mut q = range0();
    q.pmc38 |= 1 << 13;
    q.pmc38 &= !(1 << 7);
    q.ibr[0] = CODE + 0x1000;
    q.ibr[1] = ((1 << 56) - 1) | (0xf << 56);
    q.ibr[4] = CODE + 0x2000;
    // Bits 63:16 equal, 15:0 strictly between the bounds.
    assert!(!q.channel_tag(0, &insn(CODE + 0x1000)));
    assert!(q.channel_tag(0, &insn(CODE + 0x1010)));
    assert!(q.channel_tag(0, &insn(CODE + 0x1ff0)));
    assert!(!q.channel_tag(0, &insn(CODE + 0x2000)));
    assert!(!q.channel_tag(0, &insn(CODE + 0x1_1010)), "another 64 KB page");
    // "Any event qualification based on address ranges 2 and 3 are not defined."
    assert!(!q.range_tag(2, CODE + 0x1010, 3));
}

#[test]
fn s3_3_6_2_opcode_matchers_and_their_channels() {
    // OpCM0: M-slot only, encoding bits 40:37 must be 0b0101, the rest masked; ig_ad
    // and inv 0 with PMC38.ig_ibrp0 1 (Table 3-3, "Opcode Matching only").
    let mut q = Qualification { pmc32: 0b1000 << 48 | ((1 << 41) - 1) & !(0xf << 37), pmc33: 0b0101 << 37, ..Qualification::default() };
    assert!(q.opcode_match(0, SlotType::M, 0b0101 << 37 | 0x1ff));
    assert!(!q.opcode_match(0, SlotType::M, 0b0111 << 37));
    assert!(!q.opcode_match(0, SlotType::I, 0b0101 << 37), "mifb: I-slot not selected");
    // Channel 0 and 2 use OpCM0, unless PMC36 lets them ignore it; 1 and 3 use OpCM1
    // (still matching everything).
    q.pmc36 = 0xffff_fff0;
    let load = Instruction { ip: CODE, slot: SlotType::M, encoding: 0b0101 << 37, cpl: 0 };
    let other = Instruction { encoding: 0, ..load };
    assert!(q.channel_tag(0, &load) && q.channel_tag(2, &load));
    assert!(!q.channel_tag(0, &other) && !q.channel_tag(2, &other));
    assert!(q.channel_tag(1, &other));
    q.pmc36 |= 0b0001;
    assert!(q.channel_tag(0, &other), "ch0_ig_opc");
    // Table 3-3's first row: ig_ad 1 leaves channel 0 unconstrained, opcode included
    // (ERRATA MA17); channel 2 still uses OpCM0.
    q.pmc36 = 0xffff_fff0;
    q.pmc32 |= 1 << 57;
    assert!(q.channel_tag(0, &other) && !q.channel_tag(2, &other));
}

#[test]
fn s3_3_7_data_address_ranges_constrain_memory_events_as_cfgdtag_says() {
    let data = 0x6000_0000_0000_8000;
    let mut q = range0();
    q.dbr[0] = data;
    q.dbr[1] = PAGE_4K;
    let set = |q: &mut Qualification, en: u64, cfg: u64| {
        q.pmc41 = q.pmc41 & !(0xf << 45) & !(0b11 << 3) | en << 45 | cfg << 3;
    };
    let inside = insn(CODE + 0x10);
    let outside_code = insn(CODE + 0x2000);
    // 10: only the DBR pair.
    set(&mut q, 1, 0b10);
    assert!(q.memory_event_counts(&outside_code, data + 8));
    assert!(!q.memory_event_counts(&inside, data + 0x1000));
    // 00: instruction range, opcode and data range together.
    set(&mut q, 1, 0b00);
    assert!(q.memory_event_counts(&inside, data + 8));
    assert!(!q.memory_event_counts(&outside_code, data + 8));
    // 01: instruction range and opcode only.
    set(&mut q, 1, 0b01);
    assert!(q.memory_event_counts(&inside, 0));
    // No pair enabled: no constraint.
    set(&mut q, 0, 0b00);
    assert!(q.memory_event_counts(&outside_code, 0));
}
