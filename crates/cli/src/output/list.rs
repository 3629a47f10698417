//! `pmu list`: the events (or derived metrics) of PMUs, filtered by a glob or a word,
//! with their unit masks and modifiers under `-v`.

use pmukit_arch::metrics::{self, Metric};
use pmukit_arch::Catalog;
use pmukit_core::pmu::Pmu;
use pmukit_core::table::EventDef;
use serde_json::{json, Value};

use super::describe::{event_json, metric_json, modifiers};
use super::layout::{self, one_line, ranges};
use super::{hex, Out};
use crate::failure::{usage, Failure};

/// What `pmu list PATTERN` keeps. A pattern with `*` or `?` is a glob over names
/// (events, their aliases, `EVENT.UMASK`, metrics and metric groups); any other word
/// is looked for in names and descriptions. Both ignore case.
pub struct Filter {
    /// As given, for messages.
    input: String,
    /// Lower case.
    pattern: String,
    glob: bool,
}

impl Filter {
    pub fn new(pattern: &str) -> Filter {
        Filter { input: pattern.to_string(), pattern: pattern.to_ascii_lowercase(), glob: pattern.contains(['*', '?']) }
    }

    fn name(&self, name: &str) -> bool {
        let name = name.to_ascii_lowercase();
        if self.glob {
            glob(self.pattern.as_bytes(), name.as_bytes())
        } else {
            name.contains(&self.pattern)
        }
    }

    fn text(&self, text: &str) -> bool {
        !self.glob && text.to_ascii_lowercase().contains(&self.pattern)
    }

    fn event(&self, e: &EventDef) -> bool {
        self.name(&e.name)
            || e.aliases.iter().any(|a| self.name(a))
            || e.umasks.iter().any(|u| self.name(&format!("{}.{}", e.name, u.name)) || u.aliases.iter().any(|a| self.name(a)))
            || self.text(&e.description)
            || e.umasks.iter().any(|u| self.text(&u.description))
    }

    fn metric(&self, m: &Metric) -> bool {
        self.name(&m.def.name) || m.groups().any(|g| self.name(g)) || self.text(&m.def.description)
    }
}

/// `*` any run of characters, `?` any one character, everything else itself.
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    // Iterative matching with one backtrack point: linear in practice, never
    // exponential on patterns such as `*a*a*a*b`.
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == b'?' || c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p.min(pattern.len())..].iter().all(|&c| c == b'*')
}

/// The widest the counters column gets.
const COUNTERS_WIDTH: u16 = 26;

/// An empty listing is a usage error: the filter (or PMU) was wrong. A filter close to
/// a PMU's name was most likely meant as one.
fn nothing_matches(what: &str, filter: Option<&Filter>, pmus: &[&str]) -> Failure {
    let message = match filter {
        Some(f) => {
            let all: Vec<&str> = pmukit_arch::FAMILIES.iter().flat_map(|f| f.pmus.iter().map(|p| p.name)).collect();
            let near = pmukit_core::suggest::nearest(&f.pattern, all.iter().copied());
            let hint = if near.is_empty() { String::new() } else { format!(" (is it a PMU? did you mean {}?)", near.join(", ")) };
            format!("no {what} of {} matches '{}'{hint}", pmus.join(", "), f.input)
        }
        None => format!("{} has no {what}s", pmus.join(", ")),
    };
    usage(message)
}

/// The counters as ranges, with their widths: `CCNT (32-bit), PMN0-1 (32-bit)`.
fn counter_summary(pmu: &Pmu) -> String {
    let mut parts: Vec<String> = Vec::new();
    let counters = pmu.desc.counters;
    let mut i = 0;
    while let Some(first) = counters.get(i) {
        let same: Vec<&str> = counters[i..].iter().take_while(|c| c.width == first.width).map(|c| c.name).collect();
        i += same.len();
        parts.extend(ranges(&same).into_iter().map(|r| format!("{r} ({}-bit)", first.width)));
    }
    parts.join(", ")
}

impl Out {
    pub fn list(&self, pmus: &[&Pmu], filter: Option<&Filter>, verbose: bool) -> Result<(), Failure> {
        let keep = |e: &&EventDef| filter.is_none_or(|f| f.event(e));
        if self.json {
            let all: Vec<Value> = pmus.iter().flat_map(|p| p.events().filter(keep).map(|e| event_json(p, e))).collect();
            // As the table: a filter that matches nothing is an error, in either form.
            if all.is_empty() && filter.is_some() {
                return Err(nothing_matches("event", filter, &pmus.iter().map(|p| p.name()).collect::<Vec<_>>()));
            }
            return self.json(&json!({"events": all}));
        }
        let width = layout::width();
        // Rows are cut to a line only where a reader scrolls a terminal.
        let cut = !verbose && layout::on_terminal();
        let mut s = String::new();
        for pmu in pmus {
            let events: Vec<&EventDef> = pmu.events().filter(keep).collect();
            if events.is_empty() && filter.is_some() {
                continue;
            }
            let mut head = layout::table(&[], width);
            head.add_row(vec![format!("{}:", pmu.name()), pmu.desc.description.to_string()]);
            head.add_row(vec!["counters:".to_string(), counter_summary(pmu)]);
            if verbose {
                let common: Vec<String> = pmu.desc.modifiers.iter().map(|m| format!(":{} {}", m.name, m.description)).collect();
                if !common.is_empty() {
                    head.add_row(vec!["modifiers:".to_string(), common.join("; ")]);
                }
            }
            s.push_str(&format!("{}\n", layout::render(head, &[0])));
            let mut t = layout::table(&["event", "code", "counters", "description"], width);
            for e in events {
                let counters = ranges(&pmukit_arch::event_counters(pmu, e)).join(" ");
                let cells = vec![e.name.to_string(), hex(e.code), counters, e.description.to_string()];
                if cut {
                    t.add_row(one_line(cells));
                    continue;
                }
                t.add_row(cells);
                if !verbose {
                    continue;
                }
                for a in e.aliases.iter() {
                    t.add_row(vec![format!("  {a}"), String::new(), String::new(), format!("alias of {}", e.name)]);
                }
                for u in e.umasks.iter() {
                    let default = if u.default { " (default)" } else { "" };
                    t.add_row(vec![format!("  .{}", u.name), hex(u.value), String::new(), format!("{}{default}", u.description)]);
                }
                let own: Vec<String> = modifiers(pmu, e).iter().skip(pmu.desc.modifiers.len()).map(|m| format!(":{}", m.name)).collect();
                if !own.is_empty() {
                    t.add_row(vec![String::new(), String::new(), String::new(), format!("also takes {}", own.join(" "))]);
                }
            }
            // Counter lists as long as Niagara's (an event reads up to 16 fields) wrap
            // between names.
            s.push_str(&format!("{}\n\n", layout::render_bounded(t, &[0, 1], &[(2, COUNTERS_WIDTH)])));
        }
        if s.is_empty() {
            return Err(nothing_matches("event", filter, &pmus.iter().map(|p| p.name()).collect::<Vec<_>>()));
        }
        self.text(s.trim_end())
    }

    /// The derived metrics each PMU can compute, with their groups.
    pub fn list_metrics(&self, catalog: &Catalog, pmus: &[&Pmu], filter: Option<&Filter>, verbose: bool) -> Result<(), Failure> {
        let per_pmu: Vec<(&Pmu, Vec<Metric>)> = pmus
            .iter()
            .map(|p| (*p, metrics::metrics(catalog, p).into_iter().filter(|m| filter.is_none_or(|f| f.metric(m))).collect::<Vec<_>>()))
            .filter(|(_, ms)| !ms.is_empty())
            .collect();
        if per_pmu.is_empty() {
            return Err(nothing_matches("metric", filter, &pmus.iter().map(|p| p.name()).collect::<Vec<_>>()));
        }
        if self.json {
            let all: Vec<Value> = per_pmu.iter().flat_map(|(p, ms)| ms.iter().map(|m| metric_json(m, &[p.name()]))).collect();
            return self.json(&json!({"metrics": all}));
        }
        let width = layout::width();
        let mut s = String::new();
        for (pmu, ms) in per_pmu {
            let mut t = layout::table(&["metric", "group", "unit", "description"], width);
            for m in ms {
                let (_, unit) = m.def.scale();
                let cells =
                    vec![m.def.name.to_string(), m.groups().collect::<Vec<_>>().join(";"), unit.to_string(), m.def.description.to_string()];
                if verbose {
                    t.add_row(cells);
                    t.add_row(vec![String::new(), String::new(), String::new(), format!("= {}", m.def.expr)]);
                } else if layout::on_terminal() {
                    t.add_row(one_line(cells));
                } else {
                    t.add_row(cells);
                }
            }
            s.push_str(&format!("{} metrics:\n{}\n\n", pmu.name(), layout::render(t, &[0, 1, 2])));
        }
        self.text(s.trim_end())
    }
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn globs_match_runs_single_characters_and_nothing_else() {
        let m = |p: &str, t: &str| glob(p.as_bytes(), t.as_bytes());
        assert!(m("l2d*", "l2d_misses"));
        assert!(m("*miss*", "l2d_misses"));
        assert!(m("l?d_misses", "l2d_misses"));
        assert!(m("*", ""));
        assert!(!m("l2d*", "l3_misses"));
        assert!(!m("l2d", "l2d_misses"));
        assert!(!m("?", ""));
        assert!(m("*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaab"));
        assert!(!m("*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaa"));
    }
}
