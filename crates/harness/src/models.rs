//! The register-level models, driven by arbitrary sequences of register reads and
//! writes, hypercalls and runs of the event stream, as the software under test in an
//! emulator would drive them. After every operation the model refuses, its whole state
//! must be what it was.

use arbitrary::{Result, Unstructured};
use pmukit_arch::arm11::{Cp15, CP15_MAP};
use pmukit_arch::montecito::ear::Served;
use pmukit_arch::montecito::etb::BranchKind;
use pmukit_arch::sparc::sun4v::{FUNCTIONS, NIAGARA_MMUSTAT_CONF};
use pmukit_arch::sparc::t4::{DRAM_MAP, DRAM_STEP, PCR_ASI, PIC_ASI};
use pmukit_sim::engine::{self, Counting};
use pmukit_sim::models::arm11::Arm11Pmu;
use pmukit_sim::models::montecito::{Breakpoint, Montecito, EVENTS};
use pmukit_sim::models::sun4v::{Config, Hypervisor, Processor, Status};
use pmukit_sim::models::t4::T4Core;
use pmukit_sim::models::t4_dram::{Owner, T4Dram};
use pmukit_sim::stream::{
    Block, Branch, Cursor, Detail, FetchMiss, MemRef, Privilege, Signal, Span, ARM11, EVERY, MAX_PER_CYCLE, MONTECITO, SPARC,
};

/// Operations per input: enough for overflow, interrupts and re-programming to meet.
const MAX_OPS: usize = 64;

/// Runs `step` until the input or `MAX_OPS` runs out. A step returns the model state
/// to compare with (when the operation was refused) or `None`.
fn drive<M: Clone + PartialEq + std::fmt::Debug>(
    data: &[u8],
    model: &mut M,
    mut step: impl FnMut(&mut Unstructured, &mut M) -> Result<Option<String>>,
) {
    let mut u = Unstructured::new(data);
    for _ in 0..MAX_OPS {
        if u.is_empty() {
            break;
        }
        let before = model.clone();
        match step(&mut u, model) {
            Ok(Some(refused)) => assert!(*model == before, "{refused} was refused but changed the model"),
            Ok(None) => {}
            Err(_) => break,
        }
    }
}

fn privilege(u: &mut Unstructured) -> Result<Privilege> {
    u.choose(&[Privilege::Hyper, Privilege::Cpl0, Privilege::Cpl1, Privilege::Cpl2, Privilege::Cpl3]).copied()
}

/// A Montecito PMC value as software programs one: a mapped event (Table 4-42) with
/// any unit mask, privilege mask, overflow interrupt, monitor kind, threshold and
/// `all`, and the ism '10 §3.3.1 asks for; so the runs count what each event maps
/// its unit masks onto, which values of whole registers seldom select.
fn montecito_pmc(u: &mut Unstructured) -> Result<u64> {
    use pmukit_arch::montecito::registers::{ALL, ES, ISM, ISM_PROPER, OI, PLM, PM, THRESHOLD, UMASK};
    let event = u.choose(EVENTS)?;
    let mut pmc = ISM.set(ES.set(0, u64::from(event.code)), ISM_PROPER);
    for field in [PLM, OI, PM, UMASK, THRESHOLD, ALL] {
        pmc = field.set(pmc, u.int_in_range(0..=field.max())?);
    }
    Ok(pmc)
}

/// A value that is often at a boundary: 0, all ones, one bit, near a counter's wrap.
fn value(u: &mut Unstructured) -> Result<u64> {
    Ok(match u.int_in_range(0u8..=5)? {
        0 => 0,
        1 => u64::MAX,
        2 => 1 << u.int_in_range(0u32..=63)?,
        3 => (1u64 << u.int_in_range(1u32..=63)?).wrapping_sub(u.int_in_range(1u64..=16)?),
        _ => u.arbitrary()?,
    })
}

/// Anything the capture hardware may be told of a span (Montecito's EARs and trace
/// buffer read it).
fn detail(u: &mut Unstructured) -> Result<Detail> {
    let translated = |u: &mut Unstructured| -> Result<Option<Served>> {
        Ok(match u.int_in_range(0u8..=3)? {
            0 => None,
            1 => Some(Served::L2Tlb),
            2 => Some(Served::Vhpt),
            _ => Some(Served::Fault),
        })
    };
    let fetch = if u.arbitrary()? {
        Some(FetchMiss { addr: u.arbitrary()?, latency: u.arbitrary()?, rab: u.arbitrary()?, tlb: translated(u)? })
    } else {
        None
    };
    Ok(Detail {
        data_ip: u.arbitrary()?,
        data_latency: u.arbitrary()?,
        data_tlb: translated(u)?,
        branch_ip: u.arbitrary()?,
        branch_kind: *u.choose(&[BranchKind::IpRelative, BranchKind::Return, BranchKind::Indirect])?,
        path_mispredicted: u.arbitrary()?,
        fetch,
    })
}

/// A block of spans of any signals, threads, privileges, data references, branch
/// outcomes and capture details, run for an arbitrary budget of cycles; and the same
/// block in the words of the model's family `F` (as its machine makes it) on a copy of
/// the model, which must end as the model does (docs/engine.md E7): a model reads no
/// signal outside its family.
fn run<M, const F: usize>(u: &mut Unstructured, model: &mut M, threads: u8) -> Result<()>
where
    M: Counting + Counting<F> + Clone + PartialEq + std::fmt::Debug,
{
    let mut body = Vec::new();
    for _ in 0..u.int_in_range(1usize..=6)? {
        let mut span = Span::new(u.int_in_range(0u64..=64)?, u.arbitrary::<u64>()? & !3);
        span.thread = u.int_in_range(0..=threads.saturating_sub(1))?;
        span.privilege = privilege(u)?;
        for _ in 0..u.int_in_range(0usize..=12)? {
            let signal = *u.choose(&Signal::ALL)?;
            span = span.with(signal, u.int_in_range(0..=MAX_PER_CYCLE)?);
        }
        if u.arbitrary()? {
            span.mem =
                Some(MemRef { addr: u.arbitrary()?, stride: u.arbitrary()?, size: u.int_in_range(1u8..=64)?, write: u.arbitrary()? });
        }
        if u.arbitrary()? {
            span.branch = Some(Branch { target: u.arbitrary()?, taken: u.arbitrary()?, mispredicted: u.arbitrary()? });
        }
        if u.arbitrary()? {
            span.detail = detail(u)?;
        }
        body.push(span);
    }
    // Long enough for a 31- or 32-bit counter to wrap on its own, and any counter
    // written near its wrap (`value`) to cross it; short enough for thousands of
    // inputs a second, since the engine steps each overflow span by span.
    let repeat = u.int_in_range(1u64..=1 << 36)?;
    let budget = u.int_in_range(1u64..=1 << 38)?;
    let block = Block { body, repeat };
    let mut family = model.clone();
    let narrowed = block.clone().into_family::<F>();
    let ran = engine::run::<EVERY>(model, &mut Cursor::new(Box::new(std::iter::once(block))), budget);
    let ran_family = engine::run::<F>(&mut family, &mut Cursor::new(Box::new(std::iter::once(narrowed))), budget);
    assert_eq!(ran, ran_family, "the family's words ran otherwise");
    assert!(*model == family, "the family's words counted otherwise: {model:?} against {family:?}");
    Ok(())
}

/// ARM11: MCR and MRC to the four PMU registers and to CP15 encodings near them, on
/// each core.
pub fn arm11_model(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else { return };
    let mut pmu = Arm11Pmu::new(["arm1136", "arm1156", "arm1176"][usize::from(first) % 3]);
    drive(rest, &mut pmu, |u, pmu| {
        let cp = if u.arbitrary()? {
            CP15_MAP[u.int_in_range(0..=3)?].0
        } else {
            Cp15 { opc1: u.int_in_range(0..=7)?, crn: u.int_in_range(0..=15)?, crm: u.int_in_range(0..=15)?, opc2: u.int_in_range(0..=7)? }
        };
        Ok(match u.int_in_range(0u8..=2)? {
            0 => pmu.mcr(cp, value(u)? as u32).err().map(|e| format!("MCR {e}")),
            1 => pmu.mrc(cp).err().map(|e| format!("MRC {e}")),
            _ => {
                run::<_, ARM11>(u, pmu, 1)?;
                None
            }
        })
    });
}

/// SPARC T4: LDXA/STXA to the PCR and PIC ASIs (and others) of strands the core has
/// and lacks, in every mode; mode changes and trap deliveries.
pub fn t4_model(data: &[u8]) {
    let mut core = T4Core::new(3);
    drive(data, &mut core, |u, core| {
        let strand = u.int_in_range(0usize..=4)?;
        let other: u8 = u.arbitrary()?;
        let asi = *u.choose(&[PCR_ASI, PIC_ASI, PCR_ASI, PIC_ASI, 0x80, other])?;
        let va = if u.arbitrary()? { u.int_in_range(0u64..=4)? * 8 } else { u.arbitrary()? };
        Ok(match u.int_in_range(0u8..=4)? {
            0 => core.ldxa(strand, asi, va, privilege(u)?).err().map(|e| format!("LDXA {e:?}")),
            1 => core.stxa(strand, asi, va, value(u)?, privilege(u)?).err().map(|e| format!("STXA {e:?}")),
            2 => core.set_mode(strand, privilege(u)?).err().map(|e| format!("mode {e:?}")),
            3 => {
                core.take_trap(strand);
                None
            }
            _ => {
                run::<_, SPARC>(u, core, 4)?;
                None
            }
        })
    });
}

/// SPARC T4 memory controllers: register reads and writes at mapped, misaligned and
/// unmapped physical addresses by both owners (§10.5).
pub fn t4_dram_model(data: &[u8]) {
    let mut dram = T4Dram::new();
    drive(data, &mut dram, |u, dram| {
        let (_, base, count) = *u.choose(&DRAM_MAP)?;
        let pa = match u.int_in_range(0u8..=3)? {
            0 | 1 => base + DRAM_STEP * u.int_in_range(0..=u64::from(count))?,
            2 => base + u.int_in_range(1u64..=7)?,
            _ => u.arbitrary()?,
        };
        let owner = *u.choose(&[Owner::Solaris, Owner::PowerManagement])?;
        Ok(match u.int_in_range(0u8..=2)? {
            0 => dram.read(pa, owner).err().map(|e| format!("read {e}")),
            1 => dram.write(pa, value(u)?, owner).err().map(|e| format!("write {e}")),
            _ => {
                run::<_, SPARC>(u, dram, 1)?;
                None
            }
        })
    });
}

/// The sun4v hypervisor of each processor: fast and core traps of every known
/// function (and unknown numbers) with boundary and guest-memory arguments, from
/// virtual CPUs that exist and one that does not; the KT's L2 propagation.
pub fn hypercalls(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else { return };
    let processor = [Processor::Niagara1, Processor::Kt, Processor::T4][usize::from(first) % 3];
    let Ok(mut hv) = Hypervisor::new(Config::new(processor, 2)) else { return };
    drive(rest, &mut hv, |u, hv| {
        let vcpu = u.int_in_range(0usize..=2)?;
        let function = if u.ratio(7, 8)? { u.choose(&FUNCTIONS)?.number } else { u.arbitrary()? };
        let mut args = Vec::new();
        for _ in 0..u.int_in_range(0usize..=6)? {
            args.push(match u.int_in_range(0u8..=3)? {
                0 => u.int_in_range(0u64..=16)?,
                1 => 0x1000_0000 + u.int_in_range(0u64..=0x1000)? * 0x40,
                2 => 0x200 + u.int_in_range(0u64..=16)?,
                _ => value(u)?,
            });
        }
        Ok(match u.int_in_range(0u8..=4)? {
            0 | 1 => {
                let before = hv.clone();
                let r = hv.fast_trap(vcpu, function, &args);
                if function == NIAGARA_MMUSTAT_CONF.number && matches!(r.status, Status::EBADALIGN | Status::ENORADDR) {
                    // The one failure with an effect (MMU statistics §2.1, ERRATA TN5):
                    // the vCPU is left as conf(0) leaves it, collection disabled.
                    let mut expected = before;
                    assert!(expected.fast_trap(vcpu, function, &[0]).is_ok());
                    assert!(*hv == expected, "a failed conf {args:x?} did more than disable collection");
                    return Ok(None);
                }
                (!r.is_ok()).then(|| format!("fast trap {function:#x} {args:x?} -> {r:?}"))
            }
            2 => {
                let r = hv.core_trap(vcpu, function, &args);
                (!r.is_ok()).then(|| format!("core trap {function:#x} {args:x?} -> {r:?}"))
            }
            3 => {
                let busy = u.arbitrary()?;
                if let Some(kt) = hv.kt_mut() {
                    kt.set_l2_busy(busy);
                }
                None
            }
            _ => {
                run::<_, SPARC>(u, hv, 3)?;
                None
            }
        })
    });
}

/// Montecito: PMC and PMD reads and writes of any index on threads 0-2, PSR and PMV
/// changes (which move the CPL and the interrupt masks), interrupt takes.
pub fn montecito_model(data: &[u8]) {
    let mut m = Montecito::new();
    drive(data, &mut m, |u, m| {
        let thread = u.int_in_range(0usize..=2)?;
        let index = if u.ratio(3, 4)? { u.int_in_range(0usize..=63)? } else { u.arbitrary()? };
        Ok(match u.int_in_range(0u8..=10)? {
            0 | 1 => {
                let pmc = if u.arbitrary()? { montecito_pmc(u)? } else { value(u)? };
                m.write_pmc(thread, index, pmc).err().map(|e| format!("PMC write {e}"))
            }
            // The IBRs and DBRs that qualification reads: a run after them is gated.
            9 => {
                let kind = if u.arbitrary()? { Breakpoint::Ibr } else { Breakpoint::Dbr };
                m.write_breakpoint(thread, kind, index % 10, value(u)?).err().map(|e| format!("{kind} write {e}"))
            }
            10 => {
                let kind = if u.arbitrary()? { Breakpoint::Ibr } else { Breakpoint::Dbr };
                m.read_breakpoint(thread, kind, index % 10).err().map(|e| format!("{kind} read {e}"))
            }
            2 => m.read_pmc(thread, index).err().map(|e| format!("PMC read {e}")),
            3 | 4 => m.write_pmd(thread, index, value(u)?).err().map(|e| format!("PMD write {e}")),
            5 => m.read_pmd(thread, index).err().map(|e| format!("PMD read {e}")),
            6 => {
                let psr = if u.arbitrary()? { u.int_in_range(0u64..=3)? << 32 | u.int_in_range(0u64..=1)? << 2 } else { value(u)? };
                m.set_psr(thread, psr).err().map(|e| format!("PSR {e}"))
            }
            7 => m.write_pmv(thread, value(u)?).err().map(|e| format!("PMV {e}")).or_else(|| {
                let _ = m.take_interrupt(thread);
                None
            }),
            _ => {
                run::<_, MONTECITO>(u, m, 2)?;
                None
            }
        })
    });
}
