//! The names an option takes, for shell completion: PMUs and built-in workloads. The
//! parsers take any text, so that a wrong name is refused by pmu's own checks, with
//! their suggestions; they only tell clap (and so `pmu completions`) what to offer.

use clap::builder::{PossibleValue, TypedValueParser};

/// Any text, offering `names` to completion.
#[derive(Clone)]
pub struct Offering(fn() -> Vec<&'static str>);

impl TypedValueParser for Offering {
    type Value = String;

    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &std::ffi::OsStr) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new((self.0)().into_iter().map(PossibleValue::new)))
    }
}

/// The built-in PMUs' names.
pub fn pmus() -> Offering {
    Offering(|| pmukit_arch::Catalog::builtin().pmus.iter().map(|p| p.name()).collect())
}

/// The built-in workloads' names.
pub fn workloads() -> Offering {
    Offering(|| pmukit_sim::program::builtin::WORKLOADS.iter().map(|w| w.name).collect())
}
