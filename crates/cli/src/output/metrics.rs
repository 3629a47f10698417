//! `pmu metrics`: each interval's and unit's metrics as a table, printed as each
//! interval ends, then the notes (the JSON is written by `counts` as it goes).

use super::{layout, Out};
use crate::counts::GroupResult;
use crate::failure::Failure;

impl Out {
    /// The rows of `groups` (one interval's, or the whole run's) as a table, with its
    /// header when it is the first.
    pub fn metrics_table(&self, groups: &[&GroupResult], first: bool) -> String {
        let timed = groups.iter().any(|g| g.interval.is_some());
        let split = groups.iter().any(|g| g.unit.is_some());
        let mut header = Vec::new();
        if timed {
            header.push("time");
        }
        if split {
            header.push("unit");
        }
        header.extend(["metric", "value", "unit", "description"]);
        let mut t = layout::table(if first { &header } else { &[] }, layout::width());
        for g in groups {
            for m in &g.metrics {
                let mut row = Vec::new();
                if timed {
                    row.push(g.interval.map_or(String::new(), |t| format!("{t:.9}")));
                }
                if split {
                    row.push(g.unit.clone().unwrap_or_default());
                }
                let value =
                    m.value.map_or("undefined".to_string(), |v| if m.unit.is_empty() { format!("{v:.2}") } else { format!("{v:.1}") });
                row.extend([m.name.clone(), value, m.unit.clone(), m.description.clone()]);
                t.add_row(row);
            }
        }
        let keep: Vec<usize> = (0..header.len() - 1).collect();
        format!("{}\n", layout::render(t, &keep))
    }

    /// The notes after the tables.
    pub fn metrics_notes(&self, notes: &[String]) -> Result<(), Failure> {
        let text: String = notes.iter().map(|n| format!("{}\n", layout::wrap(&format!("note: {n}"), layout::width(), 2))).collect();
        self.text_raw(&text)
    }
}
