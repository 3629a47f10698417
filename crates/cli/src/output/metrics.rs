//! `pmu metrics`: a table of each interval's and unit's metrics, or the report as JSON.

use super::{layout, Out};
use crate::counts::MetricsReport;
use crate::failure::Failure;

impl Out {
    pub fn metrics(&self, r: &MetricsReport) -> Result<(), Failure> {
        if self.json {
            return self.json(&serde_json::to_value(r).unwrap_or_default());
        }
        let timed = r.results.iter().any(|g| g.interval.is_some());
        let split = r.results.iter().any(|g| g.unit.is_some());
        let mut header = Vec::new();
        if timed {
            header.push("time");
        }
        if split {
            header.push("unit");
        }
        header.extend(["metric", "value", "unit", "description"]);
        let mut t = layout::table(&header, layout::width());
        for g in &r.results {
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
        let mut s = format!("{}\n", layout::render(t, &keep));
        for n in &r.notes {
            s.push_str(&format!("{}\n", layout::wrap(&format!("note: {n}"), layout::width(), 2)));
        }
        self.text(&s)
    }
}
