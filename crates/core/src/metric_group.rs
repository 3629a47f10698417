//! Metrics evaluated together over named counts, as perf's stat-shadow evaluates a
//! metric group: an identifier in an expression is a count, `duration_time` (perf's
//! tool event, which metrics read in seconds), or another metric of the set, whose
//! value is computed first (once) and used as a number. A metric that reaches itself
//! is an error naming the chain; so is a name that is none of these. `#literals`
//! (`#smt_on`, `#num_cpus_online`) come from the caller, as perf takes them from the
//! machine.

// Input reaches every line of this module: no panicking operation is allowed in it.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use std::cell::RefCell;
use std::collections::HashMap;

use thiserror::Error;

use crate::metric::{MetricContext, MetricEvalError, MetricExpr, MetricParseError};
use crate::table::MetricDef;

/// perf's tool event for the run's elapsed time.
pub const DURATION_TIME: &str = "duration_time";

/// What a metric's identifiers are looked up in.
pub trait Counts {
    /// The count called `name` (case-insensitive): `Some(None)` when the event is known
    /// but was not counted, `None` when nothing of that name is known.
    fn count(&self, name: &str) -> Option<Option<f64>>;
    /// A `#literal`'s value, named without the `#`.
    fn literal(&self, name: &str) -> Option<f64>;
    /// The elapsed time in seconds, if known.
    fn duration_s(&self) -> Option<f64>;
}

#[derive(Debug, Clone, PartialEq, Error)]
pub enum MetricError {
    #[error("metric {metric}: {source}")]
    Parse { metric: String, source: MetricParseError },
    #[error("metric {metric} needs '{name}', which is neither a counted event nor a metric")]
    Missing { metric: String, name: String },
    #[error("metric {metric} is not computed: its input {event} was not counted")]
    NotCounted { metric: String, event: String },
    #[error(
        "metric {metric} needs duration_time, the run's elapsed time, which the input does not give (perf stat -e duration_time adds it)"
    )]
    NoDuration { metric: String },
    #[error("metric {metric} needs the literal #{literal}, which is not known here (give #{literal}=VALUE)")]
    NoLiteral { metric: String, literal: String },
    #[error("metrics refer to each other in a cycle: {}", chain.join(" -> "))]
    Recursion { chain: Vec<String> },
    #[error("metric {metric}: {source}")]
    Eval { metric: String, source: MetricEvalError },
}

/// The metrics of a set, evaluated over one set of counts.
pub struct Evaluator<'a> {
    defs: &'a [MetricDef],
    counts: &'a dyn Counts,
    /// Values (or failures) of the metrics computed so far, by lowercase name.
    done: RefCell<HashMap<String, Result<f64, MetricError>>>,
    /// The metrics being computed, outermost first, to detect a cycle.
    stack: RefCell<Vec<String>>,
}

impl<'a> Evaluator<'a> {
    pub fn new(defs: &'a [MetricDef], counts: &'a dyn Counts) -> Evaluator<'a> {
        Evaluator { defs, counts, done: RefCell::new(HashMap::new()), stack: RefCell::new(Vec::new()) }
    }

    /// The value of `def` (one of the set, or an ad-hoc expression): NaN where perf's
    /// arithmetic gives NaN (`/` by zero), for the caller to call undefined.
    pub fn value(&self, def: &MetricDef) -> Result<f64, MetricError> {
        let key = def.name.to_ascii_lowercase();
        if let Some(done) = self.done.borrow().get(&key) {
            return done.clone();
        }
        if self.stack.borrow().iter().any(|m| m.eq_ignore_ascii_case(&def.name)) {
            let mut chain = self.stack.borrow().clone();
            chain.push(def.name.to_string());
            return Err(MetricError::Recursion { chain });
        }
        self.stack.borrow_mut().push(def.name.to_string());
        let result = self.compute(def);
        self.stack.borrow_mut().pop();
        self.done.borrow_mut().insert(key, result.clone());
        result
    }

    fn compute(&self, def: &MetricDef) -> Result<f64, MetricError> {
        let metric = def.name.to_string();
        let expr = MetricExpr::parse(&def.expr).map_err(|source| MetricError::Parse { metric: metric.clone(), source })?;
        let scope = Scope { evaluator: self, metric: &metric, failure: RefCell::new(None) };
        let value = expr.eval(&scope);
        // A failure the lookup saw says more than the evaluator's "unknown name".
        if let Some(failure) = scope.failure.into_inner() {
            return Err(failure);
        }
        value.map_err(|source| MetricError::Eval { metric, source })
    }

    fn metric(&self, name: &str) -> Option<&'a MetricDef> {
        self.defs.iter().find(|d| d.name.eq_ignore_ascii_case(name))
    }
}

/// One metric's lookups: the first failure is kept to report.
struct Scope<'e, 'a> {
    evaluator: &'e Evaluator<'a>,
    metric: &'e str,
    failure: RefCell<Option<MetricError>>,
}

impl Scope<'_, '_> {
    fn fail(&self, e: MetricError) -> Option<f64> {
        self.failure.borrow_mut().get_or_insert(e);
        None
    }
}

impl MetricContext for Scope<'_, '_> {
    fn value(&self, name: &str) -> Option<f64> {
        let counts = self.evaluator.counts;
        if name == DURATION_TIME {
            return counts.duration_s().or_else(|| self.fail(MetricError::NoDuration { metric: self.metric.to_string() }));
        }
        match counts.count(name) {
            Some(Some(v)) => Some(v),
            Some(None) => self.fail(MetricError::NotCounted { metric: self.metric.to_string(), event: name.to_string() }),
            None => match self.evaluator.metric(name) {
                Some(def) => self.evaluator.value(def).map_or_else(|e| self.fail(e), Some),
                None => self.fail(MetricError::Missing { metric: self.metric.to_string(), name: name.to_string() }),
            },
        }
    }

    fn literal(&self, name: &str) -> Option<f64> {
        let v = self.evaluator.counts.literal(name);
        v.or_else(|| self.fail(MetricError::NoLiteral { metric: self.metric.to_string(), literal: name.to_string() }))
    }

    fn has_event(&self, name: &str) -> bool {
        matches!(self.evaluator.counts.count(name), Some(Some(_)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    struct Map(Vec<(&'static str, Option<f64>)>, Option<f64>);

    impl Counts for Map {
        fn count(&self, name: &str) -> Option<Option<f64>> {
            self.0.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| *v)
        }
        fn literal(&self, name: &str) -> Option<f64> {
            (name == "smt_on").then_some(1.0)
        }
        fn duration_s(&self) -> Option<f64> {
            self.1
        }
    }

    fn def(name: &'static str, expr: &'static str) -> MetricDef {
        let empty = || Cow::Borrowed("");
        MetricDef {
            name: Cow::Borrowed(name),
            expr: Cow::Borrowed(expr),
            description: empty(),
            group: empty(),
            scale_unit: empty(),
            source: empty(),
            min: empty(),
            max: empty(),
        }
    }

    #[test]
    fn metrics_refer_to_metrics_and_cycles_are_named() {
        let defs = [def("ipc", "INST / CYC"), def("cpi", "1 / ipc"), def("a", "b + 1"), def("b", "a * 2")];
        let counts = Map(vec![("inst", Some(8.0)), ("cyc", Some(4.0)), ("lost", None)], Some(2.0));
        let e = Evaluator::new(&defs, &counts);
        assert_eq!(e.value(&defs[1]), Ok(0.5));
        match e.value(&defs[2]) {
            Err(MetricError::Recursion { chain }) => assert_eq!(chain, ["a", "b", "a"]),
            other => panic!("{other:?}"),
        }
        assert_eq!(e.value(&def("rate", "INST / duration_time")), Ok(4.0));
        assert!(matches!(e.value(&def("m", "LOST + 1")), Err(MetricError::NotCounted { .. })));
        assert!(matches!(e.value(&def("m2", "NOPE + 1")), Err(MetricError::Missing { ref name, .. }) if name == "NOPE"));
        assert!(matches!(e.value(&def("m3", "#num_dies")), Err(MetricError::NoLiteral { ref literal, .. }) if literal == "num_dies"));
        assert_eq!(e.value(&def("m4", "#smt_on * 3")), Ok(3.0));
        assert!(e.value(&def("m5", "INST / (CYC - 4)")).unwrap().is_nan());
        let none = Map(vec![], None);
        assert!(matches!(Evaluator::new(&[], &none).value(&def("t", "1 / duration_time")), Err(MetricError::NoDuration { .. })));
    }
}
