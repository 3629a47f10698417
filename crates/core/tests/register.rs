//! The register model's access semantics, on a small synthetic register.

use pmukit_core::register::{Access, Field, NamedValue, Register, RegisterError, Values};

const ONOFF: &[NamedValue] = &[NamedValue { value: 0, name: "0", meaning: "off" }, NamedValue { value: 1, name: "1", meaning: "on" }];

const RSV: Field = Field::new("SBZ", 15, 15, "").with_access(Access::Reserved { unpredictable_read: true });
const ONLY_B: Field = Field::new("FB", 14, 14, "exists on model b only").only_on(&["b"]);
const SEL: Field = Field::new("Sel", 13, 8, "event").with_values(Values::Event);
const W1C: Field = Field::new("OV", 7, 7, "overflow").with_access(Access::WriteOneToClear);
const STICKY: Field = Field::new("ST", 6, 6, "sticky").with_access(Access::Sticky);
const ACT: Field = Field::new("RST", 5, 5, "reset").with_access(Access::Action);
const RO: Field = Field::new("ID", 4, 2, "id").with_access(Access::ReadOnly);
const EN: Field = Field::new("EN", 0, 0, "enable").with_values(Values::Named(ONOFF));
// Bit 1 is covered by no field: it is reserved too.
const REG: Register = Register::new("CTL", 16, 0x0010, "test register", &[RSV, ONLY_B, SEL, W1C, STICKY, ACT, RO, EN]);

#[test]
fn field_get_and_set_use_the_declared_bit_range() {
    assert_eq!(SEL.mask(), 0x3F00);
    assert_eq!(SEL.get(0x2A00), 0x2A);
    assert_eq!(SEL.set(0xFFFF, 0), 0xC0FF);
    assert_eq!(SEL.bits(), "13:8");
    assert_eq!(EN.bits(), "0");
}

#[test]
fn read_write_fields_take_the_written_value() {
    let e = REG.apply_write(0, EN.set(0, 1));
    assert_eq!(EN.get(e.stored), 1);
}

#[test]
fn read_only_fields_ignore_writes() {
    let e = REG.apply_write(0x0010, 0);
    assert_eq!(RO.get(e.stored), 0b100);
}

#[test]
fn reserved_bits_ignore_writes_and_read_as_zero() {
    let e = REG.apply_write(0, 0x8000);
    assert_eq!(e.stored & 0x8000, 0);
    assert_eq!(REG.read(0x8000), 0);
}

#[test]
fn write_one_to_clear_clears_only_on_one() {
    let set = W1C.set(0, 1);
    assert_eq!(W1C.get(REG.apply_write(set, 0).stored), 1, "writing 0 has no effect");
    let e = REG.apply_write(set, set);
    assert_eq!(W1C.get(e.stored), 0, "writing 1 clears");
    assert_eq!(e.cleared, set);
}

#[test]
fn sticky_bits_can_be_cleared_but_never_set() {
    let set = STICKY.set(0, 1);
    assert_eq!(STICKY.get(REG.apply_write(0, set).stored), 0, "software cannot set it");
    assert_eq!(STICKY.get(REG.apply_write(set, set).stored), 1, "writing 1 keeps it");
    assert_eq!(STICKY.get(REG.apply_write(set, 0).stored), 0, "writing 0 clears it");
}

#[test]
fn action_bits_trigger_and_are_not_stored() {
    let e = REG.apply_write(0, ACT.set(0, 1));
    assert_eq!(e.actions, vec!["RST"]);
    assert_eq!(ACT.get(e.stored), 0);
    assert_eq!(REG.read(ACT.set(0, 1)), 0, "reads as zero");
}

#[test]
fn check_write_rejects_reserved_and_uncovered_bits() {
    assert!(matches!(REG.check_write(0x8000), Err(RegisterError::ReservedBitsSet { .. })));
    assert!(matches!(REG.check_write(0x0002), Err(RegisterError::ReservedBitsSet { .. })), "bit 1 belongs to no field");
    assert!(matches!(REG.check_write(0x1_0000), Err(RegisterError::TooWide { .. })));
    assert!(REG.check_write(0x0001).is_ok());
}

#[test]
fn fields_of_other_models_become_reserved_but_keep_their_name() {
    let a = REG.for_model("a");
    let err = a.field("FB").unwrap_err();
    assert!(matches!(err, RegisterError::AbsentField { .. }));
    assert!(err.to_string().contains("exists on model b only"));
    assert!(a.check_write(ONLY_B.set(0, 1)).is_err());
    let b = REG.for_model("b");
    assert!(b.check_write(ONLY_B.set(0, 1)).is_ok());
}

#[test]
fn encode_checks_width_and_field_names() {
    assert_eq!(REG.encode(&[("sel", 0x3F), ("EN", 1)]).unwrap(), 0x3F01);
    assert!(matches!(REG.encode(&[("Sel", 0x40)]), Err(RegisterError::FieldOverflow { .. })));
    let err = REG.encode(&[("nope", 1)]).unwrap_err();
    assert!(err.to_string().contains("valid fields"), "{err}");
}

#[test]
fn decode_names_values_and_warns_on_reserved_bits() {
    let d = REG.decode(0x8A01, &|f, reg| (f.get(reg) == 0xA).then(|| "TEN".to_string())).unwrap();
    let sel = d.fields.iter().find(|f| f.name == "Sel").unwrap();
    assert_eq!((sel.value, sel.meaning.as_str()), (0xA, "TEN"));
    let en = d.fields.iter().find(|f| f.name == "EN").unwrap();
    assert_eq!(en.meaning, "on");
    assert_eq!(d.warnings.len(), 1, "{:?}", d.warnings);
    assert!(REG.decode(0x10000, &|_, _| None).is_err());
}

#[test]
fn diagram_shows_every_field_with_its_bits() {
    let d = REG.diagram(Some(0x0001), 200);
    for name in ["SBZ", "FB", "Sel", "OV", "ST", "RST", "ID", "EN"] {
        assert!(d.contains(name), "{name} missing from\n{d}");
    }
    assert!(d.contains("13  8"));
    assert_eq!(d.lines().count(), 5, "bits, border, names, border, values");
}

#[test]
fn a_diagram_wider_than_the_columns_is_split_into_rows_of_whole_fields() {
    let whole = REG.diagram(Some(0x0001), 200);
    let widest = whole.lines().map(str::len).max().unwrap();
    let split = REG.diagram(Some(0x0001), widest - 1);
    assert!(split.lines().all(|l| l.len() < widest), "{split}");
    let rows: Vec<&str> = split.split("\n\n").collect();
    assert_eq!(rows.len(), 2, "{split}");
    // Most significant fields first, every field once.
    assert!(rows[0].contains("SBZ") && rows[1].contains("EN"), "{split}");
    for name in ["SBZ", "FB", "Sel", "OV", "ST", "RST", "ID", "EN"] {
        assert_eq!(split.matches(&format!(" {name} ")).count(), 1, "{name} in\n{split}");
    }
}

proptest::proptest! {
    /// Decoding, checking and applying any value never panics, and a write never
    /// stores bits outside the register.
    #[test]
    fn any_value_decodes_and_writes_without_panic(old in proptest::num::u64::ANY, value in proptest::num::u64::ANY) {
        let _ = REG.decode(value, &|_, _| None);
        let _ = REG.check_write(value);
        let e = REG.apply_write(old, value);
        proptest::prop_assert_eq!(e.stored & !0xFFFF, 0);
    }
}
