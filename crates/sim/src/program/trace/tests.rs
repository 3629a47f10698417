use super::*;
use proptest::prelude::*;

proptest! {
    /// What `--trace-out` writes of a running program's phases is the records
    /// they were made of, in order, whichever phase each landed in (thousands of
    /// data addresses end phases early, a change of privilege ends one).
    #[test]
    fn phases_give_back_the_records_they_were_made_of(
        thread in any::<u8>(),
        records in proptest::collection::vec((any::<u64>(), native::tests::op(), 0u8..8), 1..3000),
    ) {
        let records: Vec<Record> = records
            .into_iter()
            .map(|(ip, op, p)| Record { thread, privilege: if p == 0 { Privilege::KERNEL } else { Privilege::USER }, ip, op })
            .collect();
        let mut maker = Maker::new(true);
        let mut phases: Vec<Phase> = records.iter().filter_map(|&r| maker.push(r)).collect();
        phases.extend(maker.take());
        prop_assert!(maker.take().is_none());
        for p in &phases {
            prop_assert!(p.body.len() <= PHASE_RECORDS && p.streams.len() + p.tables.len() <= PHASE_STREAMS - PHASE_TRANSFERS);
            prop_assert!(p.check().is_ok());
        }
        let back: Vec<Line> = phases.iter().flat_map(|p| lines(p, thread)).collect();
        let records: Vec<Line> = records.into_iter().map(Line::Instruction).collect();
        prop_assert_eq!(back, records);
    }

    /// The shortcuts a running program takes into a phase (`push_op`, `push_mem`)
    /// make the phases `push`, the reference, makes of the same records: the
    /// same instructions, streams, tables and phase boundaries.
    #[test]
    fn pushing_operations_makes_the_phases_records_make(
        records in proptest::collection::vec((0u8..3, any::<u64>(), native::tests::op(), 0u8..8), 1..3000),
    ) {
        let records: Vec<Record> = records
            .into_iter()
            .map(|(thread, ip, op, p)| Record { thread, privilege: if p == 0 { Privilege::KERNEL } else { Privilege::USER }, ip, op })
            .collect();
        let (mut reference, mut shortcut) = (Maker::new(false), Maker::new(false));
        let (mut expected, mut made) = (Vec::new(), Vec::new());
        for &r in &records {
            expected.extend(reference.push(r));
            let Record { thread, privilege, ip, op } = r;
            let taken = |yes: bool| if yes { Pattern::Always } else { Pattern::Never };
            made.extend(match op {
                Kind::Plain(op) => shortcut.push_op(thread, privilege, ip, &op),
                Kind::Branch(target, yes) => shortcut.push_op(thread, privilege, ip, &Op::Branch { target, when: taken(yes) }),
                Kind::Call(target) => shortcut.push_op(thread, privilege, ip, &Op::Call { target, frame: 0 }),
                Kind::Return(to) => shortcut.push_op(thread, privilege, ip, &Op::Return { to }),
                Kind::Mem(kind, at, bytes) => shortcut.push_mem(thread, privilege, ip, kind, at, bytes),
                Kind::Jump(_) => shortcut.push(r),
            });
        }
        expected.extend(reference.take());
        made.extend(shortcut.take());
        prop_assert_eq!(made, expected);
    }
}
