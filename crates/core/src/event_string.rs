//! The event-string grammar, in the style of libpfm4 and perf:
//!
//! ```text
//! [pmu::]EVENT[.UMASK…][:MOD[=VALUE]…]      names are case-insensitive
//! [pmu::]r<hex>  |  [pmu::]0x<hex>            raw event code
//! ```
//!
//! Parsing yields the tokens with their columns; resolving checks them against a PMU's
//! table and produces an [`EventSel`]. Every error names the offending token and its
//! column, and suggests what would be valid.

// Input reaches every line of this module: no panicking operation is allowed in it
// (positions stay within the input, so their arithmetic cannot overflow).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use std::fmt;

use thiserror::Error;

use crate::input;
use crate::pmu::{ModifierKind, Pmu, GENERIC_EVENTS};
use crate::suggest::nearest;
use crate::table::{EventDef, UmaskVerdict};

/// A token of the input with its 1-based column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub text: String,
    pub column: usize,
}

/// An event string split into its parts, not yet checked against any table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventSpec {
    pub input: String,
    pub pmu: Option<Token>,
    pub event: Token,
    pub umasks: Vec<Token>,
    pub modifiers: Vec<(Token, Option<Token>)>,
}

/// An event resolved against a PMU: what to program.
#[derive(Debug, Clone, PartialEq)]
pub struct EventSel {
    pub input: String,
    pub pmu: &'static str,
    /// The table entry, or `None` for a raw code the table does not list.
    pub event: Option<EventDef>,
    pub code: u64,
    pub umask: u64,
    pub umask_names: Vec<String>,
    /// Modifiers in input order, with their values (flags are 0 or 1).
    pub modifiers: Vec<(&'static str, u64)>,
    /// The modifiers among them that take a number (`thresh`), always written `=N`.
    pub numeric: Vec<&'static str>,
    /// Valid but questionable choices the spec warns about (meaningless unit-mask
    /// combinations, ignored bits).
    pub warnings: Vec<String>,
}

/// A bad event string: what is wrong, where, and what would be valid.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub struct EventError {
    pub input: String,
    pub column: usize,
    pub width: usize,
    pub message: String,
    pub help: Option<String>,
    /// Names that would be valid in the offending token's place (the closest to it).
    pub suggestions: Vec<String>,
}

impl fmt::Display for EventError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} (column {})", self.message, self.column)?;
        // A long input is shown as a window around the token, so that an error never
        // repeats an argument of any length back.
        let (shown, column) = input::window(&self.input, self.column, input::EXCERPT_CHARS);
        let room = shown.chars().count().saturating_sub(column - 1).max(1);
        writeln!(f, "    {shown}")?;
        write!(f, "    {}{}", " ".repeat(column - 1), "^".repeat(self.width.clamp(1, room)))?;
        if let Some(help) = &self.help {
            write!(f, "\n  {help}")?;
        }
        Ok(())
    }
}

impl EventError {
    fn at(input: &str, token: &Token, message: String, help: Option<String>) -> EventError {
        EventError {
            input: input.to_string(),
            column: token.column,
            width: token.text.chars().count(),
            message,
            help,
            suggestions: Vec::new(),
        }
    }

    fn suggesting<'a>(mut self, names: impl IntoIterator<Item = &'a str>) -> EventError {
        self.suggestions = names.into_iter().map(str::to_string).collect();
        self
    }

    /// The offending part of the input (empty for the end of the input).
    pub fn token(&self) -> String {
        self.input.chars().skip(self.column.saturating_sub(1)).take(self.width).collect()
    }
}

/// A token of the input as a message quotes it: at most [`input::EXCERPT_CHARS`]
/// characters of it.
fn quoted(text: &str) -> String {
    input::excerpt(text, input::EXCERPT_CHARS)
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Split an event string into its tokens.
pub fn parse(input: &str) -> Result<EventSpec, EventError> {
    // Bytes, not chars: the grammar's characters are ASCII, so every position the
    // parser reaches follows ASCII only and its byte offset is its column too.
    let bytes = input.as_bytes();
    let mut pos = 0;
    let at = |pos: usize| bytes.get(pos).copied();
    let err = |column: usize, width: usize, message: String, help: &str| EventError {
        input: input.to_string(),
        column,
        width,
        message,
        help: Some(help.to_string()),
        suggestions: Vec::new(),
    };
    let word = |pos: &mut usize| -> Token {
        let start = *pos;
        while at(*pos).is_some_and(|b| is_name_char(char::from(b))) {
            *pos += 1;
        }
        Token { text: input.get(start..*pos).unwrap_or_default().to_string(), column: start + 1 }
    };
    let rest = |pos: usize| input.get(pos..).unwrap_or_default();
    let expect_word = |pos: &mut usize, what: &str| -> Result<Token, EventError> {
        let t = word(pos);
        if t.text.is_empty() {
            let found = rest(*pos).chars().next().map_or("end of input".to_string(), |c| format!("'{c}'"));
            return Err(err(*pos + 1, 1, format!("expected {what}, found {found}"), "syntax: [pmu::]EVENT[.UMASK…][:MOD[=VALUE]…]"));
        }
        Ok(t)
    };

    let mut first = expect_word(&mut pos, "an event name")?;
    let mut pmu = None;
    if at(pos) == Some(b':') && at(pos + 1) == Some(b':') {
        pos += 2;
        pmu = Some(first);
        first = expect_word(&mut pos, "an event name after '::'")?;
    }
    let mut umasks = Vec::new();
    while at(pos) == Some(b'.') {
        pos += 1;
        umasks.push(expect_word(&mut pos, "a unit-mask name after '.'")?);
    }
    let mut modifiers = Vec::new();
    while at(pos) == Some(b':') {
        pos += 1;
        let name = expect_word(&mut pos, "a modifier name after ':'")?;
        let value = if at(pos) == Some(b'=') {
            pos += 1;
            Some(expect_word(&mut pos, "a value after '='")?)
        } else {
            None
        };
        modifiers.push((name, value));
    }
    if pos < bytes.len() {
        return Err(err(
            pos + 1,
            rest(pos).chars().count(),
            format!("unexpected '{}'", quoted(rest(pos))),
            "syntax: [pmu::]EVENT[.UMASK…][:MOD[=VALUE]…]; names use letters, digits, '_' and '-'",
        ));
    }
    Ok(EventSpec { input: input.to_string(), pmu, event: first, umasks, modifiers })
}

/// Parse a raw event token: `r1a` or `0x1a`.
fn raw_code(text: &str) -> Option<u64> {
    let lower = text.to_ascii_lowercase();
    let hex = lower.strip_prefix("0x").or_else(|| lower.strip_prefix('r'))?;
    crate::number::parse_digits(hex, 16)
}

fn did_you_mean(names: &[&str], all: &str) -> Option<String> {
    if names.is_empty() {
        Some(all.to_string())
    } else {
        Some(format!("did you mean {}?", names.join(", ")))
    }
}

/// Resolve an event string against the PMUs; `default_pmu` applies without `pmu::`.
pub fn resolve(input: &str, pmus: &[Pmu], default_pmu: &str) -> Result<EventSel, EventError> {
    // `arm1176:INSTR_EXEC`: a PMU and one colon reads as an event with a modifier.
    if let Some((prefix, rest)) = input.split_once(':') {
        if !rest.starts_with(':') && pmus.iter().any(|p| p.name().eq_ignore_ascii_case(prefix)) {
            let token = Token { text: format!("{prefix}:"), column: 1 };
            return Err(EventError::at(
                input,
                &token,
                format!("'{prefix}' is a PMU: a PMU and its event are separated by two colons"),
                Some(format!("did you mean {prefix}::{}?", quoted(rest))),
            )
            .suggesting([format!("{prefix}::").as_str()]));
        }
    }
    let spec = parse(input)?;
    let pmu_name = spec.pmu.as_ref().map_or(default_pmu, |t| t.text.as_str());
    let Some(pmu) = pmus.iter().find(|p| p.name().eq_ignore_ascii_case(pmu_name)) else {
        let token = spec.pmu.clone().unwrap_or(Token { text: pmu_name.to_string(), column: 1 });
        let names: Vec<&str> = pmus.iter().map(|p| p.name()).collect();
        return Err(EventError::at(
            input,
            &token,
            format!("unknown PMU '{}'", quoted(pmu_name)),
            Some(format!("valid PMUs: {}", names.join(", "))),
        )
        .suggesting(nearest(pmu_name, names.iter().copied())));
    };
    if let Some(sel) = resolve_generic(&spec, pmu, pmus)? {
        return Ok(sel);
    }
    resolve_spec(&spec, pmu).map_err(|mut e| {
        // An event of other PMUs says which, and how to ask for it there.
        let text = spec.event.text.as_str();
        let unknown = e.column == spec.event.column && e.message.starts_with("unknown event");
        let known_on =
            |p: &Pmu| p.table.find(text).is_some() || p.table.find_umask_alias(text).is_some() || split_flattened(p, text).is_some();
        let elsewhere: Vec<&str> = pmus.iter().filter(|p| unknown && p.name() != pmu.name() && known_on(p)).map(|p| p.name()).collect();
        if let Some(first) = elsewhere.first() {
            e.help = Some(format!(
                "'{}' is an event of {}: give --pmu {first}, or write {first}::{}",
                quoted(text),
                elsewhere.join(", "),
                quoted(text)
            ));
            e.suggestions = elsewhere.iter().map(|p| format!("{p}::{text}")).collect();
        }
        // A modifier of another model of the family (ARM1156's :fiq) says where it is.
        for (m, _) in &spec.modifiers {
            let elsewhere: Vec<&str> = pmus
                .iter()
                .filter(|p| p.desc.family == pmu.desc.family && p.desc.modifier(&m.text).is_some() && pmu.desc.modifier(&m.text).is_none())
                .map(|p| p.name())
                .collect();
            if !elsewhere.is_empty() && e.column == m.column {
                e.message = format!("modifier '{}' exists only on {}, not on {}", m.text, elsewhere.join(", "), pmu.name());
            }
        }
        e
    })
}

/// perf's generic names (`cycles`, `branch-misses`, …) where the table has no event
/// of that name: the event the PMU's Linux driver maps the name to, with the input's
/// modifiers, or a refusal that says why the PMU has none and which other PMUs of
/// `pmus` take the name. `None` for other names.
fn resolve_generic(spec: &EventSpec, pmu: &Pmu, pmus: &[Pmu]) -> Result<Option<EventSel>, EventError> {
    let text = spec.event.text.as_str();
    let Some(names) = GENERIC_EVENTS.iter().find(|names| names.iter().any(|n| n.eq_ignore_ascii_case(text))) else { return Ok(None) };
    if pmu.table.find(text).is_some() || pmu.table.find_umask_alias(text).is_some() {
        return Ok(None);
    }
    let input = spec.input.as_str();
    let canonical = names.first().copied().unwrap_or(text);
    let Some((_, event)) = pmu.desc.generic.events.iter().find(|(g, _)| *g == canonical) else {
        let mapped: Vec<&str> = pmu.desc.generic.events.iter().map(|(g, _)| *g).collect();
        // The PMUs whose drivers map the name, where the user may have meant to count:
        // the nearest relative first, by the name they share (sparc-t4 for
        // sparc-t4-dram's memory controllers).
        let mut elsewhere: Vec<(&str, &str)> = pmus
            .iter()
            .filter(|p| p.name() != pmu.name())
            .filter_map(|p| p.desc.generic.events.iter().find(|(g, _)| *g == canonical).map(|(_, e)| (p.name(), *e)))
            .collect();
        let shared = |name: &str| name.bytes().zip(pmu.name().bytes()).take_while(|(a, b)| a == b).count();
        elsewhere.sort_by_key(|(p, _)| std::cmp::Reverse(shared(p)));
        let here = if mapped.is_empty() {
            format!("use {}'s own events (`pmu list {0}`)", pmu.name())
        } else {
            format!("generic events on {}: {}; or its own events (`pmu list {0}`)", pmu.name(), mapped.join(", "))
        };
        let help = if let Some((first, _)) = elsewhere.first() {
            let mut each: Vec<(&str, Vec<&str>)> = Vec::new();
            for (p, e) in &elsewhere {
                match each.iter_mut().find(|(x, _)| x == e) {
                    Some((_, on)) => on.push(p),
                    None => each.push((e, vec![p])),
                }
            }
            let each: Vec<String> = each.iter().map(|(e, on)| format!("{e} on {}", on.join(", "))).collect();
            format!("'{text}' is {}: give --pmu {first}, or write {first}::{text}. Or {here}", each.join("; "))
        } else {
            here
        };
        let why =
            if mapped.is_empty() { pmu.desc.generic.source.to_string() } else { format!("{} maps nothing to it", pmu.desc.generic.source) };
        let mut e = EventError::at(
            input,
            &spec.event,
            format!("perf's generic event '{text}' has no {} equivalent: {why}", pmu.name()),
            Some(help),
        );
        e.suggestions = elsewhere.iter().map(|(p, _)| format!("{p}::{text}")).collect();
        return Err(e);
    };
    if let Some(u) = spec.umasks.first() {
        return Err(EventError::at(
            input,
            u,
            format!("perf's generic event '{text}' takes no unit mask"),
            Some(format!("on {} it is {event}", pmu.name())),
        ));
    }
    // The mapped event, with the input's own modifiers, resolved as if written so; its
    // tokens stand where the generic name stands, so errors point into the input.
    let at = |t: Token| Token { column: spec.event.column, ..t };
    let target = parse(event)?;
    let mapped = EventSpec {
        input: spec.input.clone(),
        pmu: spec.pmu.clone(),
        event: at(target.event),
        umasks: target.umasks.into_iter().map(at).collect(),
        modifiers: spec.modifiers.clone(),
    };
    resolve_spec(&mapped, pmu).map(Some)
}

/// Resolve parsed tokens against one PMU.
pub fn resolve_spec(spec: &EventSpec, pmu: &Pmu) -> Result<EventSel, EventError> {
    let input = spec.input.as_str();
    let model = pmu.desc.model;
    // Borrowed unless a unit mask comes from the event token itself (an alias, a raw
    // code's low bits, a flattened name).
    let mut umask_tokens = std::borrow::Cow::Borrowed(spec.umasks.as_slice());
    // A raw code carries the unit mask in its low bits on families that have one.
    let mut raw_umask = None;
    let (event, code) = if let Some(e) = pmu.table.find(&spec.event.text) {
        (Some(e.clone()), e.code)
    } else if let Some((e, u)) = pmu.table.find_umask_alias(&spec.event.text) {
        umask_tokens.to_mut().insert(0, Token { text: u.name.to_string(), column: spec.event.column });
        (Some(e.clone()), e.code)
    } else if let Some(raw) = raw_code(&spec.event.text) {
        let bits = pmu.desc.raw_umask_bits;
        let code = raw.checked_shr(bits).unwrap_or(0);
        if bits > 0 {
            raw_umask = Some(raw & ((1u64 << bits) - 1));
        }
        // A code whose event the spec marks unused on this model is refused as that
        // event is, not as a code the table does not know.
        let other = || {
            pmu.table
                .events
                .iter()
                .find(|e| e.code == code && e.subevent_of.is_empty() && e.unused_on.iter().any(|m| m.eq_ignore_ascii_case(model)))
        };
        (pmu.table.by_code(code, model).or_else(other).cloned(), code)
    } else if let Some((e, extra)) = split_flattened(pmu, &spec.event.text) {
        umask_tokens.to_mut().splice(0..0, extra.into_iter().map(|text| Token { text, column: spec.event.column }));
        (Some(e.clone()), e.code)
    } else {
        let names = nearest(&spec.event.text, pmu.events().map(|e| e.name.as_ref()));
        return Err(EventError::at(
            input,
            &spec.event,
            format!("unknown event '{}' for {}", quoted(&spec.event.text), pmu.name()),
            did_you_mean(&names, &format!("`pmu list {}` shows the valid events", pmu.name())),
        )
        .suggesting(names));
    };
    if let Some(mask) = raw_umask.filter(|m| *m != 0) {
        umask_tokens.to_mut().insert(0, Token { text: format!("{mask:#x}"), column: spec.event.column });
    }
    if let Some(e) = &event {
        if !e.exists_on(model) {
            let why = if e.unused_on.iter().any(|m| m.eq_ignore_ascii_case(model)) {
                format!("the spec marks it unused on {model}")
            } else {
                format!("it exists only on {}", e.only_on.join(", "))
            };
            let pmus_with: Vec<&str> = e.only_on.iter().map(|m| m.as_ref()).collect();
            let help = if pmus_with.is_empty() { None } else { Some(format!("use it on {}", pmus_with.join(" or "))) };
            return Err(EventError::at(input, &spec.event, format!("event '{}' is not available on {}: {why}", e.name, pmu.name()), help));
        }
    } else {
        if code > pmu.desc.max_code {
            return Err(EventError::at(
                input,
                &spec.event,
                format!("raw code {code:#x} does not fit the event selector (at most {:#x})", pmu.desc.max_code),
                None,
            ));
        }
        if let Some(why) = pmu.desc.raw_outside_table {
            return Err(EventError::at(
                input,
                &spec.event,
                format!("event code {code:#x} is reserved on {}: {why}", pmu.name()),
                Some(format!("`pmu list {}` shows the defined event codes", pmu.name())),
            ));
        }
    }

    let umask = resolve_umasks(input, pmu, event.as_ref(), &umask_tokens)?;
    let modifiers = resolve_modifiers(input, pmu, event.as_ref(), &spec.modifiers)?;
    let numeric = modifiers
        .iter()
        .filter(|(m, _)| pmu.desc.modifier(m).is_some_and(|d| matches!(d.kind, ModifierKind::Number { .. })))
        .map(|(m, _)| *m)
        .collect();
    Ok(EventSel {
        input: input.to_string(),
        pmu: pmu.desc.name,
        event,
        code,
        umask: umask.value,
        umask_names: umask.names,
        modifiers,
        numeric,
        warnings: umask.warnings,
    })
}

/// `EVENT_UMASK…` as pfmon flattened `EVENT.UMASK…`: an event name followed by `_`
/// and unit-mask names.
fn split_flattened<'a>(pmu: &'a Pmu, text: &str) -> Option<(&'a EventDef, Vec<String>)> {
    let upper = text.to_ascii_uppercase();
    pmu.events().filter(|e| !e.umasks.is_empty()).find_map(|e| {
        let rest = upper.strip_prefix(&e.name.to_ascii_uppercase())?.strip_prefix('_')?;
        let mut names = Vec::new();
        let mut rest = rest.to_string();
        while !rest.is_empty() {
            // Longest unit-mask name first, since names may contain '_'.
            // A name with '.' (`ALL.ALL_PRED`) is flattened with '_' like the rest.
            let mut cands: Vec<&str> = e.umasks.iter().map(|u| u.name.as_ref()).collect();
            cands.sort_by_key(|n| std::cmp::Reverse(n.len()));
            let hit = cands.into_iter().find(|n| {
                let n = n.to_ascii_uppercase().replace('.', "_");
                rest == n || rest.starts_with(&format!("{n}_"))
            })?;
            names.push(hit.to_string());
            rest = rest[hit.len()..].trim_start_matches('_').to_string();
        }
        Some((e, names))
    })
}

/// The unit-mask value named by `tokens` (names or `0x…` values, OR-ed), with the
/// warnings the event's combination rule calls for.
fn resolve_umasks(input: &str, pmu: &Pmu, event: Option<&EventDef>, tokens: &[Token]) -> Result<Umask, EventError> {
    let Some(e) = event else {
        return match tokens.first() {
            Some(t) => Err(EventError::at(
                input,
                t,
                "a raw event code takes no unit-mask names".into(),
                Some("give the unit mask inside the raw code".into()),
            )),
            None => Ok(Umask::default()),
        };
    };
    if tokens.is_empty() {
        let defaults: Vec<_> = e.umasks.iter().filter(|u| u.default).collect();
        if !e.umasks.is_empty() && defaults.is_empty() {
            let names: Vec<&str> = e.umasks.iter().map(|u| u.name.as_ref()).collect();
            return Err(EventError {
                input: input.to_string(),
                column: input.chars().count() + 1,
                width: 1,
                message: format!("event '{}' needs a unit mask", e.name),
                help: Some(format!("valid unit masks: {}", names.join(", "))),
                suggestions: names.iter().map(|n| format!("{}.{n}", e.name)).collect(),
            });
        }
        // The defaults are checked as if they had been written: `E` must be refused
        // exactly when its canonical name `E.A.B` is.
        let value = defaults.iter().fold(0, |m, u| m | u.value);
        let mut out = Umask { value, names: defaults.iter().map(|u| u.name.to_string()).collect(), warnings: vec![] };
        let end = || Token { text: " ".into(), column: input.chars().count() + 1 };
        check_umask(input, e, end, &mut out)?;
        return Ok(out);
    }
    let mut out = Umask::default();
    for t in join_dotted(e, tokens).iter() {
        if let Some(v) = numeric_umask(&t.text) {
            if v > pmu.desc.max_umask {
                return Err(EventError::at(input, t, format!("unit mask {v:#x} does not fit (at most {:#x})", pmu.desc.max_umask), None));
            }
            out.value |= v;
            out.names.push(format!("{v:#x}"));
            continue;
        }
        let Some(u) = e.umask(&t.text) else {
            let valid: Vec<&str> = e.umasks.iter().map(|u| u.name.as_ref()).collect();
            let near = nearest(&t.text, valid.iter().copied());
            let help = if valid.is_empty() {
                Some(format!("event '{}' has no unit masks", e.name))
            } else {
                Some(match near.is_empty() {
                    true => format!("valid unit masks: {}", valid.join(", ")),
                    false => format!("did you mean {}? valid unit masks: {}", near.join(", "), valid.join(", ")),
                })
            };
            let message = format!("unknown unit mask '{}' for event '{}' on {}", quoted(&t.text), e.name, pmu.name());
            return Err(EventError::at(input, t, message, help).suggesting(near));
        };
        if out.names.iter().any(|n| n.eq_ignore_ascii_case(&u.name)) {
            return Err(EventError::at(input, t, format!("unit mask '{}' given twice", u.name), None));
        }
        out.value |= u.value;
        out.names.push(u.name.to_string());
    }
    let column = tokens.first().map_or(1, |t| t.column);
    let written = || Token { text: joined(tokens), column };
    check_umask(input, e, written, &mut out)?;
    Ok(out)
}

/// Every rule on a unit-mask value, however it was chosen (written, or the event's
/// defaults), as the table decides it (`EventDef::umask_verdict`); errors point at
/// the token `at` makes (made only for an error or a warning).
fn check_umask(input: &str, e: &EventDef, at: impl Fn() -> Token, out: &mut Umask) -> Result<(), EventError> {
    let ignored = out.value & e.umask_ignored;
    if ignored != 0 {
        out.warnings.push(format!("{}: unit-mask bits {ignored:#x} are ignored by the hardware", e.name));
    }
    let effective = out.value & !e.umask_ignored;
    let note = || if e.umask_note.is_empty() { String::new() } else { format!(": the spec says \"{}\"", e.umask_note) };
    match e.umask_verdict(out.value) {
        UmaskVerdict::Listed => Ok(()),
        UmaskVerdict::Meaningless => {
            out.warnings.push(format!("{} with unit mask {effective:#x} may count meaningless data{}", e.name, note()));
            Ok(())
        }
        UmaskVerdict::NotListed => {
            let listed: Vec<String> = e.umasks.iter().map(|u| format!("{} ({:#x})", u.name, u.value)).collect();
            Err(EventError::at(
                input,
                &at(),
                format!("unit mask {effective:#x} is not a meaningful setting of event '{}'{}", e.name, note()),
                Some(format!("meaningful unit masks: {}", listed.join(", "))),
            ))
        }
        UmaskVerdict::Invalid(bad) => {
            let note = if bad.note.is_empty() { String::new() } else { format!(" {}", bad.note) };
            let listed: Vec<String> = e.umasks.iter().map(|u| u.name.to_string()).collect();
            Err(EventError::at(
                input,
                &at(),
                format!("unit mask {:#x} of event '{}' {}{note}", out.value, e.name, bad.kind.describe()),
                Some(format!("valid unit masks: {}", listed.join(", "))),
            ))
        }
    }
}

/// Unit-mask tokens with the dotted names among them put back together: the parser
/// splits `ALL.ALL_PRED` at the dot, but it is one of Montecito's unit masks. The
/// longest run of tokens that names a unit mask wins.
fn join_dotted<'a>(e: &EventDef, tokens: &'a [Token]) -> std::borrow::Cow<'a, [Token]> {
    // Only a unit-mask name with a dot can be a run of several tokens, and no run is
    // longer than the name with the most parts: trying longer ones made a long string
    // of dotted tokens cost the cube of its length (a 7.7 KB one took 1.6 s).
    let parts = e.umasks.iter().map(|u| u.name.split('.').count()).max().unwrap_or(1);
    if tokens.len() < 2 || parts < 2 {
        return std::borrow::Cow::Borrowed(tokens);
    }
    let mut out = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        let longest = (i + parts).min(tokens.len());
        let end = (i + 2..=longest).rev().find(|&j| e.umask(&joined(tokens.get(i..j).unwrap_or_default())).is_some()).unwrap_or(i + 1);
        let run = tokens.get(i..end).unwrap_or_default();
        out.push(Token { text: joined(run), column: run.first().map_or(1, |t| t.column) });
        i = end;
    }
    std::borrow::Cow::Owned(out)
}

/// Tokens written back with the dots between them.
fn joined(tokens: &[Token]) -> String {
    tokens.iter().map(|t| t.text.as_str()).collect::<Vec<_>>().join(".")
}

/// A unit-mask token written as a number (`0x1f`).
fn numeric_umask(text: &str) -> Option<u64> {
    let hex = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X"))?;
    crate::number::parse_digits(hex, 16)
}

/// A resolved unit mask.
#[derive(Debug, Clone, Default, PartialEq)]
struct Umask {
    value: u64,
    names: Vec<String>,
    warnings: Vec<String>,
}

fn resolve_modifiers(
    input: &str,
    pmu: &Pmu,
    event: Option<&EventDef>,
    tokens: &[(Token, Option<Token>)],
) -> Result<Vec<(&'static str, u64)>, EventError> {
    if tokens.is_empty() {
        return Ok(Vec::new());
    }
    let event_mods: Vec<&str> = event.map(|e| e.modifiers.iter().map(|m| m.as_ref()).collect()).unwrap_or_default();
    let allowed: Vec<&'static str> = pmu
        .desc
        .modifiers
        .iter()
        .map(|m| m.name)
        .chain(pmu.desc.event_modifiers.iter().filter(|m| event_mods.iter().any(|n| n.eq_ignore_ascii_case(m.name))).map(|m| m.name))
        .collect();
    let mut out: Vec<(&'static str, u64)> = Vec::new();
    for (name, value) in tokens {
        let valid = || match allowed.is_empty() {
            true => format!("{} events take no modifiers", pmu.name()),
            false => format!("valid modifiers here: {}", allowed.join(", ")),
        };
        let def = match pmu.desc.modifier(&name.text) {
            Some(d) if allowed.contains(&d.name) => d,
            Some(d) => {
                let what = event.map_or("a raw event".to_string(), |e| format!("event '{}'", e.name));
                return Err(EventError::at(
                    input,
                    name,
                    format!("modifier '{}' does not apply to {what}: {}", d.name, d.description),
                    Some(valid()),
                ));
            }
            None => {
                let near = nearest(&name.text, allowed.iter().copied());
                return Err(EventError::at(
                    input,
                    name,
                    format!("unknown modifier '{}' for {}", quoted(&name.text), pmu.name()),
                    Some(valid()),
                )
                .suggesting(near));
            }
        };
        if out.iter().any(|(n, _)| *n == def.name) {
            return Err(EventError::at(input, name, format!("modifier '{}' given twice", def.name), None));
        }
        let v = match (def.kind, value) {
            (ModifierKind::Flag, None) => 1,
            (ModifierKind::Flag, Some(t)) => match t.text.as_str() {
                "0" => 0,
                "1" => 1,
                _ => {
                    return Err(EventError::at(
                        input,
                        t,
                        format!("modifier '{}' is a flag: its value is 0 or 1, not '{}'", def.name, quoted(&t.text)),
                        None,
                    ))
                }
            },
            (ModifierKind::Number { min, max }, None) => {
                return Err(EventError::at(
                    input,
                    name,
                    format!("modifier '{}' needs a value", def.name),
                    Some(format!("write {}=N with N from {min} to {max}", def.name)),
                ));
            }
            (ModifierKind::Number { min, max }, Some(t)) => {
                let valid = format!("valid values: {min} to {max}");
                match crate::number::parse_u64(&t.text) {
                    Ok(n) if (min..=max).contains(&n) => n,
                    Ok(_) => {
                        return Err(EventError::at(
                            input,
                            t,
                            format!("value '{}' of modifier '{}' is out of range", quoted(&t.text), def.name),
                            Some(valid),
                        ))
                    }
                    Err(e) => return Err(EventError::at(input, t, format!("value of modifier '{}': {e}", def.name), Some(valid))),
                }
            }
        };
        out.push((def.name, v));
    }
    Ok(out)
}

impl EventSel {
    /// The selection of table event `event` of `pmu` with unit mask `umask` and no
    /// modifier, as a tool that lists a table's selections builds them (perf's JSON,
    /// `pmu describe`'s probes), not as an event string parses.
    pub fn bare(pmu: &'static str, event: &EventDef, umask: u64) -> EventSel {
        EventSel {
            input: event.name.to_string(),
            pmu,
            event: Some(event.clone()),
            code: event.code,
            umask,
            umask_names: Vec::new(),
            modifiers: Vec::new(),
            numeric: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// Canonical spelling: `EVENT[.UMASK…][:MOD[=VALUE]…]`, or `r<hex>` for raw codes.
    pub fn name(&self) -> String {
        let mut s = match &self.event {
            Some(e) => e.name.to_string(),
            None => format!("r{:x}", self.code),
        };
        for u in &self.umask_names {
            s.push('.');
            s.push_str(u);
        }
        for (m, v) in &self.modifiers {
            s.push(':');
            s.push_str(m);
            if *v != 1 || self.numeric.contains(m) {
                s.push_str(&format!("={v}"));
            }
        }
        s
    }

    pub fn modifier(&self, name: &str) -> Option<u64> {
        self.modifiers.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }
}
