//! The counting driver for Niagara MMU statistics, written as a sun4v guest kernel
//! would be: it hands each virtual CPU a zeroed, 64-byte-aligned buffer with
//! `niagara_mmustat_conf` (Niagara MMU statistics §2.1), lets the hypervisor update it
//! while the workload runs, reads the big-endian fields back from guest memory (§2.3)
//! for each virtual CPU, then disables collection with a real address of 0.
//!
//! The buffer fields are 64 bits wide and the hypervisor raises no interrupt: one read
//! at the end of a run is exact.

use pmukit_arch::sparc::niagara::{self, BUFFER_ALIGN, BUFFER_BYTES, COUNTER_BYTES, NIAGARA};
use pmukit_arch::sparc::sun4v::{Status, NIAGARA_MMUSTAT_CONF};
use pmukit_arch::EncodedSet;
use pmukit_core::report::Unit;

use crate::drivers::{Driver, Reading, Runs};
use crate::engine::{self, Exit};
use crate::models::sun4v::{Config, Hypervisor, Processor};
use crate::stream::Cursor;

pub struct NiagaraDriver {
    hv: Hypervisor,
    /// Real address of each virtual CPU's buffer.
    buffers: Vec<u64>,
    /// Per event of the running set, the buffer fields (counter indices) it sums.
    reads: Vec<Vec<usize>>,
    /// Virtual CPUs whose collection the hypervisor accepted.
    collecting: Vec<bool>,
    faults: Vec<String>,
}

impl NiagaraDriver {
    /// A Niagara 1 guest of `vcpus` virtual CPUs, each with its buffer laid out one
    /// after the other from the start of guest memory.
    pub fn new(vcpus: usize) -> NiagaraDriver {
        let config = Config::new(Processor::Niagara1, vcpus);
        let base = config.memory[0].base.next_multiple_of(BUFFER_ALIGN);
        let hv = Hypervisor::new(config).expect("Config::new builds a valid machine for 1-256 vCPUs");
        let buffers = (0..vcpus as u64).map(|v| base + v * BUFFER_BYTES as u64).collect();
        NiagaraDriver { hv, buffers, reads: Vec::new(), collecting: vec![false; vcpus], faults: Vec::new() }
    }

    /// The hypervisor, for tests that check what the driver asked of it.
    pub fn hypervisor(&self) -> &Hypervisor {
        &self.hv
    }

    fn field(&self, vcpu: usize, counter: usize) -> u64 {
        let (mmu, context, page_size, quantity) = niagara::slot(counter);
        let at = self.buffers[vcpu] + niagara::offset(mmu, context, page_size, quantity) as u64;
        let bytes = self.hv.read_guest(at, COUNTER_BYTES).expect("the driver's buffers lie in mapped guest memory");
        u64::from_be_bytes(bytes.try_into().expect("read_guest returns the length asked for"))
    }
}

impl Driver for NiagaraDriver {
    fn start(&mut self, set: &EncodedSet) {
        self.reads = set.events.iter().map(|e| e.counters.iter().filter_map(|c| NIAGARA.counter_index(c)).collect()).collect();
        for vcpu in 0..self.buffers.len() {
            // §2.1: "The initial contents of the buffer should be zero".
            let ra = self.buffers[vcpu];
            self.hv.write_guest(ra, &[0; BUFFER_BYTES]).expect("the driver's buffers lie in mapped guest memory");
            let r = self.hv.fast_trap(vcpu, NIAGARA_MMUSTAT_CONF.number, &[ra]);
            self.collecting[vcpu] = r.is_ok();
            if r.status != Status::EOK {
                self.faults.push(format!(
                    "vCPU {vcpu}: niagara_mmustat_conf({ra:#x}) returned {} ({}): its statistics are not counted",
                    r.status.name(),
                    r.status.description()
                ));
            }
        }
    }

    fn units(&self, _pmu: &str) -> Vec<Unit> {
        (0..self.buffers.len()).map(Unit::cpu).collect()
    }

    fn stop(&mut self, _pmu: &str) -> Vec<Reading> {
        let vcpus: Vec<usize> = (0..self.buffers.len()).filter(|&v| self.collecting[v]).collect();
        let values = self
            .reads
            .iter()
            .map(|fields| {
                (!vcpus.is_empty())
                    .then(|| vcpus.iter().map(|&v| (v, fields.iter().map(|&c| self.field(v, c)).fold(0, u64::wrapping_add))).collect())
            })
            .collect();
        for vcpu in 0..self.buffers.len() {
            // §2.1: raddr 0 disables collection; the buffer is no longer accessed.
            self.hv.fast_trap(vcpu, NIAGARA_MMUSTAT_CONF.number, &[0]);
            self.collecting[vcpu] = false;
        }
        values
    }

    fn interrupts(&self) -> u64 {
        0
    }

    fn notes(&self) -> Vec<String> {
        self.faults.clone()
    }
}

impl<const F: usize> Runs<F> for NiagaraDriver {
    fn run(&mut self, cursor: &mut Cursor<F>, cycles: u64) -> u64 {
        let mut done = 0;
        while done < cycles {
            let (ran, exit) = engine::run(&mut self.hv, cursor, cycles - done);
            done += ran;
            if exit == Exit::EndOfStream {
                break;
            }
        }
        done
    }
}
