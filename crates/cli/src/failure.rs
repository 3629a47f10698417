//! Failures of a command and their exit codes (1 runtime, 2 usage), with the parts
//! a JSON error carries: the offending token, its column, what would be valid.

use pmukit_arch::{metrics, CatalogError};
use pmukit_core::event_string::EventError;
use pmukit_core::input::InputError;

/// A failure and its exit code: the message as a terminal shows it, and for `--json`
/// the parts of it.
pub struct Failure {
    pub code: u8,
    pub message: String,
    /// Boxed: a `Result` carrying a failure stays small.
    pub detail: Box<Detail>,
}

/// What a JSON error carries beside the message (docs/json.md).
#[derive(Default)]
pub struct Detail {
    /// The message alone, where `message` adds the input and a caret under the token.
    pub message: Option<String>,
    /// The offending input: an event string, an argument.
    pub input: Option<String>,
    /// The offending part of it, and its 1-based column.
    pub token: Option<String>,
    pub column: Option<usize>,
    /// What would be valid in its place.
    pub suggestions: Vec<String>,
    pub help: Option<String>,
}

pub fn usage(message: impl ToString) -> Failure {
    Failure { code: 2, message: message.to_string(), detail: Box::default() }
}

/// A failure of the run rather than of the command line (a file that cannot be read).
pub fn runtime(message: impl ToString) -> Failure {
    Failure { code: 1, message: message.to_string(), detail: Box::default() }
}

impl From<EventError> for Failure {
    fn from(e: EventError) -> Failure {
        let detail = Detail {
            token: Some(e.token()),
            column: Some(e.column),
            suggestions: e.suggestions.clone(),
            help: e.help.clone(),
            input: Some(e.input.clone()),
            message: Some(e.message.clone()),
        };
        Failure { code: 2, message: e.to_string(), detail: Box::new(detail) }
    }
}

impl From<CatalogError> for Failure {
    fn from(e: CatalogError) -> Failure {
        match e {
            CatalogError::Input(ref i) if i.is_unreadable() => runtime(e),
            CatalogError::UnknownPmu { ref name, ref suggestions, .. } => Failure {
                detail: Box::new(Detail { token: Some(name.clone()), suggestions: suggestions.clone(), ..Detail::default() }),
                ..usage(&e)
            },
            _ => usage(e),
        }
    }
}

/// An input that cannot be read is the run's failure (exit 1); one that reads but is
/// too large or not text, the input's (exit 2).
impl From<InputError> for Failure {
    fn from(e: InputError) -> Failure {
        if e.is_unreadable() {
            runtime(e)
        } else {
            usage(e)
        }
    }
}

impl From<metrics::UnknownMetric> for Failure {
    fn from(e: metrics::UnknownMetric) -> Failure {
        let detail = Detail { token: Some(e.name.clone()), suggestions: e.suggestions.clone(), ..Detail::default() };
        Failure { detail: Box::new(detail), ..usage(e) }
    }
}

/// A command line clap refused: its message, and the argument and the values it
/// suggests or accepts.
pub fn clap_failure(e: &clap::Error) -> Failure {
    use clap::error::{ContextKind, ContextValue};
    let text = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => v.first().cloned(),
        _ => None,
    };
    let list = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::Strings(v)) => v.clone(),
        _ => Vec::new(),
    };
    let rendered = e.render().to_string();
    let first = rendered.lines().next().unwrap_or_default().trim_start_matches("error: ").to_string();
    let mut suggestions = list(ContextKind::SuggestedArg);
    suggestions.extend(list(ContextKind::SuggestedValue));
    suggestions.extend(list(ContextKind::SuggestedSubcommand));
    if suggestions.is_empty() {
        suggestions = list(ContextKind::ValidValue);
    }
    let detail = Detail {
        message: Some(first),
        token: text(ContextKind::InvalidValue).or_else(|| text(ContextKind::InvalidArg)).or_else(|| text(ContextKind::InvalidSubcommand)),
        suggestions,
        ..Detail::default()
    };
    Failure { code: 2, message: rendered.trim_end().to_string(), detail: Box::new(detail) }
}
