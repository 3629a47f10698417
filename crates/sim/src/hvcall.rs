//! Hypercall scripts for `pmu hv`: a sequence of calls, each written as a function
//! name or number followed by its arguments (`'niagara_mmustat_conf 0x10000000'`),
//! run in order against one fresh hypervisor model.

use pmukit_arch::sparc::sun4v::{Function, Status, Trap, FUNCTIONS, MAX_ARGS};
use pmukit_core::number::parse_u64;
use pmukit_core::suggest::nearest;
use serde::Serialize;
use thiserror::Error;

use crate::models::sun4v::{Config, ConfigError, Hypervisor, Processor};

/// One parsed call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub input: String,
    pub trap: Trap,
    pub function: u64,
    pub name: Option<&'static str>,
    pub args: Vec<u64>,
}

/// A call and what it returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    pub call: String,
    /// Trap number: 0x80 (FAST_TRAP) or 0xff (CORE_TRAP).
    pub trap: u64,
    pub function: u64,
    pub name: Option<&'static str>,
    pub args: Vec<u64>,
    pub status: u64,
    pub status_name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ret1: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ret2: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CallError {
    #[error("empty hypercall: write a function name or number and its arguments, e.g. 'niagara_mmustat_info'")]
    Empty,
    #[error("unknown hypercall '{name}'{hint}; known calls: {known} (or give a function number such as 0x103)")]
    UnknownFunction { name: String, hint: String, known: String },
    #[error("hypercall '{call}': argument '{arg}' is not a number: expected decimal, 0x hex or 0b binary, with no sign")]
    BadArgument { call: String, arg: String },
    #[error("hypercall '{call}': {given} arguments given; a sun4v call takes at most {MAX_ARGS}")]
    TooManyArguments { call: String, given: usize },
    #[error("unknown machine '{0}'; machines: niagara1 (alias niagara), kt, t4")]
    UnknownMachine(String),
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// A machine by the name the command line uses.
pub fn machine(name: &str) -> Result<Processor, CallError> {
    match name.to_ascii_lowercase().as_str() {
        "niagara" | "niagara1" | "t1" => Ok(Processor::Niagara1),
        "kt" | "t3" => Ok(Processor::Kt),
        "t4" => Ok(Processor::T4),
        _ => Err(CallError::UnknownMachine(name.to_string())),
    }
}

/// Parse `NAME|NUMBER [ARG…]`. A number that names no known call is kept: the
/// hypervisor answers it (EBADTRAP), which is what an emulator author wants to see.
pub fn parse(input: &str) -> Result<Call, CallError> {
    let mut words = input.split_whitespace();
    let head = words.next().ok_or(CallError::Empty)?;
    let (trap, function, name) = match Function::lookup(head) {
        Some(f) => (f.trap, f.number, Some(f.name)),
        None => match parse_u64(head).ok() {
            Some(n) => (Trap::Fast, n, None),
            None => {
                let near = nearest(head, FUNCTIONS.iter().map(|f| f.name));
                return Err(CallError::UnknownFunction {
                    name: head.to_string(),
                    hint: if near.is_empty() { String::new() } else { format!(" (did you mean {}?)", near.join(", ")) },
                    known: FUNCTIONS.iter().map(|f| f.name).collect::<Vec<_>>().join(", "),
                });
            }
        },
    };
    let args = words
        .map(|w| parse_u64(w).ok().ok_or_else(|| CallError::BadArgument { call: input.to_string(), arg: w.to_string() }))
        .collect::<Result<Vec<_>, _>>()?;
    if args.len() > MAX_ARGS {
        return Err(CallError::TooManyArguments { call: input.to_string(), given: args.len() });
    }
    Ok(Call { input: input.to_string(), trap, function, name, args })
}

/// Run `calls` in order on virtual CPU `vcpu` of one fresh machine. All calls are
/// parsed first, so a typo runs nothing.
pub fn run(processor: Processor, vcpus: usize, vcpu: usize, calls: &[String]) -> Result<Vec<Outcome>, CallError> {
    let parsed = calls.iter().map(|c| parse(c)).collect::<Result<Vec<_>, _>>()?;
    let mut hv = Hypervisor::new(Config::new(processor, vcpus))?;
    Ok(parsed
        .into_iter()
        .map(|c| {
            let r = match c.trap {
                Trap::Fast => hv.fast_trap(vcpu, c.function, &c.args),
                Trap::Core => hv.core_trap(vcpu, c.function, &c.args),
            };
            outcome(c, r.status, r.ret1, r.ret2)
        })
        .collect())
}

fn outcome(c: Call, status: Status, ret1: Option<u64>, ret2: Option<u64>) -> Outcome {
    Outcome {
        call: c.input,
        trap: c.trap.number(),
        function: c.function,
        name: c.name,
        args: c.args,
        status: status.number(),
        status_name: status.name(),
        ret1,
        ret2,
    }
}
