//! Subcommand arguments that clap builds only for the subcommand given.

use clap::builder::{Resettable, StyledStr};
use clap::{ArgMatches, Args, Command, FromArgMatches, Id};

/// `T`'s arguments, added to their subcommand only when clap parses or shows that
/// subcommand (`Command::defer`): `pmu list` does not build the options of `pmu stat`,
/// `record`, `report` and `metrics`, a tenth of its start-up (docs/PERFORMANCE.md).
pub struct Lazy<T>(Box<T>);

impl<T> std::ops::Deref for Lazy<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: FromArgMatches> FromArgMatches for Lazy<T> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(matches).map(|t| Lazy(Box::new(t)))
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(matches)
    }
}

impl<T: Args> Args for Lazy<T> {
    fn group_id() -> Option<Id> {
        T::group_id()
    }

    fn augment_args(cmd: Command) -> Command {
        cmd.defer(|cmd| keeping_about(cmd, T::augment_args))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        cmd.defer(|cmd| keeping_about(cmd, T::augment_args_for_update))
    }
}

/// `augment` applied to `cmd`, whose own description stays: the arguments' structs
/// describe themselves too, and deferred, they would come after the subcommand's.
fn keeping_about(cmd: Command, augment: fn(Command) -> Command) -> Command {
    let kept = |text: Option<&StyledStr>| text.cloned().map_or(Resettable::Reset, Resettable::Value);
    let (about, long_about) = (kept(cmd.get_about()), kept(cmd.get_long_about()));
    augment(cmd).about(about).long_about(long_about)
}
