//! Derived metrics written in Linux perf's metric expression language.
//!
//! perf describes derived metrics with a small infix language: the `MetricExpr`
//! strings of the kernel's `tools/perf/pmu-events/arch/**.json` files, read by
//! `tools/perf/util/expr.l` and `expr.y`. pmukit writes its own metrics in the
//! same language so that they stay data and can be handed to perf unchanged.
//! This module follows the grammar of perf as of Linux 6.x.
//!
//! # Language
//!
//! Lowest to highest precedence; binary operators are left-associative:
//!
//! | syntax | value |
//! |---|---|
//! | `a if c else b` | `b` when `c` is zero, otherwise `a`; `a if c else b if d else e` nests to the right. As in perf, `c` and `a` cannot be bare `if` expressions (parenthesise them) |
//! | `a \| b` | 1 if either operand is non-zero, else 0 |
//! | `a ^ b` | 1 if exactly one operand is non-zero, else 0 |
//! | `a & b` | 1 if both operands are non-zero, else 0 |
//! | `a < b`, `a > b` | 1 or 0; NaN if an operand is NaN |
//! | `a + b`, `a - b` | IEEE `f64` |
//! | `a * b`, `a / b`, `a % b` | IEEE `f64`, except that `%` truncates both operands to 64-bit integers like perf |
//! | `-a` | negation |
//!
//! Operands are numbers, event or metric names, `#literals`, parenthesised
//! expressions and the functions `min(a, b)`, `max(a, b)`, `d_ratio(a, b)`
//! (`a / b`, or 0 when `b` is 0) and `has_event(NAME)` (1 or 0).
//!
//! * Numbers are perf's: `12`, `1.5`, `.5`, `1.`, `1e9`, `1e-3`. The exponent
//!   marker is a lowercase `e` with an optional `-` (no `+`), and there is no
//!   hexadecimal form.
//! * Names are runs of `[0-9A-Za-z_.:@?]` and the escapes `\-`, `\,`, `\=`,
//!   whose backslash is dropped from the stored name: `cpu@cycles\,period\=1@`
//!   names `cpu@cycles,period=1@` (perf cannot read an unescaped `=` either).
//!   Like flex, the lexer takes the longest match, so `0x1F`, `1E9` and `2x`
//!   are names, not numbers; `a-b` is a subtraction.
//! * `#literals` are `#` followed by `[0-9A-Za-z_.-]`. The `-` is perf's:
//!   `#slots-1` is the literal `slots-1`, write `#slots - 1`.
//! * `if`, `else`, `min`, `max`, `d_ratio`, `has_event`, `source_count` and
//!   `strcmp_cpuid_str` are reserved, as perf lexes them as keywords.
//!
//! # Departures from perf
//!
//! * Unrecognised characters are errors. perf's lexer silently skips them, so
//!   there `!x` means `x` and `a <= b` means `a < b` (perf has no `!`, `<=`,
//!   `>=`, `==` or `!=`); rejecting them stops an expression from meaning one
//!   thing here and another once exported.
//! * Unknown names and literals are evaluation errors where perf yields NaN:
//!   an error says what is missing; a NaN metric does not. `/` by zero is NaN,
//!   as in perf (whose older versions, before the change that made it NaN,
//!   abandoned the whole expression), and `%` by zero is an error, as perf
//!   abandons the expression there.
//! * Because of that, `if`/`else`, `&`, `|` and `d_ratio` evaluate lazily:
//!   only the taken branch, the right operand of `&` and `|` only when the left
//!   one does not decide, and the numerator of `d_ratio` only when the
//!   denominator is non-zero. perf evaluates everything, which costs it nothing
//!   as unknowns are NaN there; laziness gives the same values for perf's guard
//!   idioms (`X if has_event(X) else 0`, `has_event(X) & X > 0`).
//! * `&`, `|` and `^` treat NaN and infinities as non-zero; perf's result for
//!   non-finite operands is an artefact of its event-collection pass.
//! * `?` in names is kept verbatim (perf substitutes a runtime parameter) and
//!   `has_event` asks the [`MetricContext`]; both are the context's business.
//! * `source_count()` and `strcmp_cpuid_str()` are not supported.
//! * Parentheses and function calls nest at most 256 deep, so that parsing
//!   cannot exhaust the stack; nothing else limits an expression's size.

// Input reaches every line of this module: no panicking operation is allowed in it.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// Parentheses (and function calls) allowed inside one another. The parser
/// recurses once per level; nothing else in this module recurses.
const MAX_NESTING: usize = 256;

const FUNCTIONS: &str = "min, max, d_ratio, has_event";
const OPERAND: &str = "a number, an event name, '(' or a function";
const RESERVED: [&str; 8] = ["if", "else", "min", "max", "d_ratio", "has_event", "source_count", "strcmp_cpuid_str"];

/// Supplies the values a [`MetricExpr`] reads.
pub trait MetricContext {
    /// Value of an event count or another metric named `name` (None if unknown / not counted).
    fn value(&self, name: &str) -> Option<f64>;
    /// Value of a `#literal` (name given without the '#').
    fn literal(&self, name: &str) -> Option<f64>;
    /// Whether `has_event(name)` holds. perf asks whether the event exists on
    /// this machine, which a context may know without having counted it.
    fn has_event(&self, name: &str) -> bool {
        self.value(name).is_some()
    }
}

/// Why [`MetricExpr::parse`] rejected a string. Columns are 1-based and count characters.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum MetricParseError {
    #[error("metric expression '{expr}': unexpected {} at column {column}, expected {expected}", describe(.token))]
    Unexpected {
        expr: String,
        column: usize,
        /// Empty at the end of the expression.
        token: String,
        expected: &'static str,
    },
    #[error("metric expression '{expr}': invalid character '{token}' at column {column}{hint}")]
    InvalidChar { expr: String, column: usize, token: String, hint: &'static str },
    #[error("metric expression '{expr}': unknown function '{token}' at column {column}, expected one of {}", FUNCTIONS)]
    UnknownFunction { expr: String, column: usize, token: String },
    #[error("metric expression '{expr}': number '{token}' at column {column} is out of range")]
    NumberOutOfRange { expr: String, column: usize, token: String },
    #[error("metric expression '{expr}': '{token}' at column {column} nests the expression deeper than {limit} levels")]
    TooDeep { expr: String, column: usize, token: String, limit: usize },
}

impl MetricParseError {
    /// 1-based character column of the offending token.
    pub fn column(&self) -> usize {
        match self {
            Self::Unexpected { column, .. }
            | Self::InvalidChar { column, .. }
            | Self::UnknownFunction { column, .. }
            | Self::NumberOutOfRange { column, .. }
            | Self::TooDeep { column, .. } => *column,
        }
    }

    /// The offending token as written; empty at the end of the expression.
    pub fn token(&self) -> &str {
        match self {
            Self::Unexpected { token, .. }
            | Self::InvalidChar { token, .. }
            | Self::UnknownFunction { token, .. }
            | Self::NumberOutOfRange { token, .. }
            | Self::TooDeep { token, .. } => token,
        }
    }
}

fn describe(token: &str) -> String {
    if token.is_empty() {
        "end of expression".to_owned()
    } else {
        format!("'{token}'")
    }
}

/// Why [`MetricExpr::eval`] could not produce a value.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum MetricEvalError {
    #[error("metric expression '{expr}': unknown event or metric '{name}'")]
    UnknownIdentifier { expr: String, name: String },
    #[error("metric expression '{expr}': unknown literal '#{name}'")]
    UnknownLiteral { expr: String, name: String },
    #[error("metric expression '{expr}': division by zero in '{op}': divisor '{divisor}' evaluated to {value}")]
    DivisionByZero {
        expr: String,
        op: char,
        /// The divisor's source text.
        divisor: String,
        value: f64,
    },
}

/// A parsed metric expression; displays as its source text.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricExpr {
    source: String,
    // A flat arena rather than boxed children: nothing, not even `Drop`,
    // recurses over the tree, so a long `a + b + …` chain cannot exhaust the
    // stack. Children precede their parents, and leaves appear in source order.
    nodes: Vec<Node>,
    root: usize,
}

impl MetricExpr {
    pub fn parse(src: &str) -> Result<MetricExpr, MetricParseError> {
        let mut parser = Parser { src, pos: 0, peeked: None, nesting: 0, nodes: Vec::new() };
        let root = parser.parse_all().map_err(|fail| fail.into_error(src))?;
        Ok(MetricExpr { source: src.to_owned(), nodes: parser.nodes, root })
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// Identifiers the expression reads (events or other metrics), in first-use order, without duplicates; excludes #literals and has_event() arguments.
    pub fn identifiers(&self) -> Vec<&str> {
        let mut seen = HashSet::new();
        self.nodes
            .iter()
            .filter_map(|node| match &node.kind {
                Kind::Event(name) => Some(name.as_str()),
                _ => None,
            })
            .filter(|name| seen.insert(*name))
            .collect()
    }

    pub fn eval(&self, ctx: &dyn MetricContext) -> Result<f64, MetricEvalError> {
        let expr = || self.source.clone();
        self.run(ctx).map_err(|fail| match fail {
            EvalFail::UnknownIdentifier(name) => MetricEvalError::UnknownIdentifier { expr: expr(), name: name.to_owned() },
            EvalFail::UnknownLiteral(name) => MetricEvalError::UnknownLiteral { expr: expr(), name: name.to_owned() },
            EvalFail::DivisionByZero { op, divisor, value } => {
                MetricEvalError::DivisionByZero { expr: expr(), op, divisor: self.source[divisor.start..divisor.end].to_owned(), value }
            }
        })
    }

    /// Evaluates with an explicit work list instead of recursion, so that
    /// evaluation depth is not limited by the stack.
    fn run(&self, ctx: &dyn MetricContext) -> Result<f64, EvalFail<'_>> {
        let mut work = vec![Step::Eval(self.root)];
        let mut values = Values(Vec::new());
        while let Some(step) = work.pop() {
            match step {
                Step::Eval(id) => match &node(&self.nodes, id).kind {
                    Kind::Number(v) => values.push(*v),
                    Kind::Event(name) => values.push(ctx.value(name).ok_or(EvalFail::UnknownIdentifier(name))?),
                    Kind::Literal(name) => values.push(ctx.literal(name).ok_or(EvalFail::UnknownLiteral(name))?),
                    Kind::HasEvent(name) => values.push(flag(ctx.has_event(name))),
                    Kind::Neg(operand) => work.extend([Step::Resume(id), Step::Eval(*operand)]),
                    Kind::If { cond, .. } => work.extend([Step::Resume(id), Step::Eval(*cond)]),
                    Kind::Binary(op, lhs, rhs) => {
                        let (first, second) = op.order(*lhs, *rhs);
                        if op.is_lazy() {
                            work.extend([Step::Resume(id), Step::Eval(first)]);
                        } else {
                            work.extend([Step::Apply(id), Step::Eval(second), Step::Eval(first)]);
                        }
                    }
                },
                Step::Resume(id) => match node(&self.nodes, id).kind {
                    Kind::Neg(_) => {
                        let v = values.pop();
                        values.push(-v);
                    }
                    Kind::If { then, otherwise, .. } => {
                        let cond = values.pop();
                        work.push(Step::Eval(if is_true(cond) { then } else { otherwise }));
                    }
                    Kind::Binary(op, lhs, rhs) => {
                        let first = values.pop();
                        if let Some(v) = op.settled_by(first) {
                            values.push(v);
                        } else {
                            values.push(first);
                            work.extend([Step::Apply(id), Step::Eval(op.order(lhs, rhs).1)]);
                        }
                    }
                    Kind::Number(_) | Kind::Event(_) | Kind::Literal(_) | Kind::HasEvent(_) => {}
                },
                Step::Apply(id) => {
                    if let Kind::Binary(op, _, rhs) = node(&self.nodes, id).kind {
                        let second = values.pop();
                        let first = values.pop();
                        let (x, y) = op.order(first, second);
                        values.push(op.apply(x, y).ok_or(EvalFail::DivisionByZero {
                            op: if op == BinOp::Rem { '%' } else { '/' },
                            divisor: node(&self.nodes, rhs).span,
                            value: y,
                        })?);
                    }
                }
            }
        }
        Ok(values.pop())
    }
}

impl fmt::Display for MetricExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl FromStr for MetricExpr {
    type Err = MetricParseError;

    fn from_str(src: &str) -> Result<Self, Self::Err> {
        Self::parse(src)
    }
}

/// perf's truth test: only zero (of either sign) is false, NaN is true.
fn is_true(v: f64) -> bool {
    v != 0.0
}

fn flag(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

/// Byte range into the source text.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Span {
    start: usize,
    end: usize,
}

impl Span {
    fn to(self, other: Span) -> Span {
        Span { start: self.start, end: other.end }
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Node {
    kind: Kind,
    span: Span,
}

/// Children are indices into [`MetricExpr::nodes`].
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Number(f64),
    Event(String),
    Literal(String),
    HasEvent(String),
    Neg(usize),
    Binary(BinOp, usize, usize),
    If { then: usize, cond: usize, otherwise: usize },
}

enum Step {
    Eval(usize),
    /// Continue a node once the operand it evaluates first is on the stack.
    Resume(usize),
    /// Combine a binary node's two operands, which are on the stack.
    Apply(usize),
}

/// The evaluator's operand stack.
struct Values(Vec<f64>);

impl Values {
    fn push(&mut self, v: f64) {
        self.0.push(v);
    }

    /// Steps only pop what earlier steps pushed, so the stack is never empty
    /// here; NaN rather than a panic should that invariant ever break.
    fn pop(&mut self) -> f64 {
        self.0.pop().unwrap_or(f64::NAN)
    }
}

/// An evaluation failure before it is dressed with the source text.
enum EvalFail<'a> {
    UnknownIdentifier(&'a str),
    UnknownLiteral(&'a str),
    DivisionByZero { op: char, divisor: Span, value: f64 },
}

/// Binary operators and the two-argument functions, which evaluate alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BinOp {
    Or,
    Xor,
    And,
    Lt,
    Gt,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Min,
    Max,
    DRatio,
}

impl BinOp {
    /// Operator and precedence for an infix token, loosest first.
    fn infix(c: u8) -> Option<(BinOp, u8)> {
        Some(match c {
            b'|' => (BinOp::Or, 1),
            b'^' => (BinOp::Xor, 2),
            b'&' => (BinOp::And, 3),
            b'<' => (BinOp::Lt, 4),
            b'>' => (BinOp::Gt, 4),
            b'+' => (BinOp::Add, 5),
            b'-' => (BinOp::Sub, 5),
            b'*' => (BinOp::Mul, 6),
            b'/' => (BinOp::Div, 6),
            b'%' => (BinOp::Rem, 6),
            _ => return None,
        })
    }

    /// Operators whose first operand may settle the result on its own.
    fn is_lazy(self) -> bool {
        matches!(self, BinOp::And | BinOp::Or | BinOp::DRatio)
    }

    /// `(lhs, rhs)` in evaluation order: `d_ratio` needs its denominator
    /// first. Swapping is its own inverse, so this also maps back.
    fn order<T>(self, lhs: T, rhs: T) -> (T, T) {
        if self == BinOp::DRatio {
            (rhs, lhs)
        } else {
            (lhs, rhs)
        }
    }

    /// The result when the operand evaluated first settles it, as in `0 & x`,
    /// `1 | x` and `d_ratio(x, 0)`. Skipping `x` then is what lets guards like
    /// `has_event(X) & X > 0` work for an uncounted `X`.
    fn settled_by(self, first: f64) -> Option<f64> {
        match self {
            BinOp::And if !is_true(first) => Some(0.0),
            BinOp::Or if is_true(first) => Some(1.0),
            BinOp::DRatio if first == 0.0 => Some(0.0),
            _ => None,
        }
    }

    /// None on `%` by zero, which perf refuses to evaluate.
    fn apply(self, x: f64, y: f64) -> Option<f64> {
        Some(match self {
            BinOp::Or => flag(is_true(x) || is_true(y)),
            BinOp::Xor => flag(is_true(x) != is_true(y)),
            BinOp::And => flag(is_true(x) && is_true(y)),
            // perf propagates NaN through comparisons instead of answering 0.
            BinOp::Lt | BinOp::Gt if x.is_nan() || y.is_nan() => f64::NAN,
            BinOp::Lt => flag(x < y),
            BinOp::Gt => flag(x > y),
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            // perf's `/` by (either) zero is NaN, which the rest of the expression
            // carries: `min(a / 0, 3)` is 3, as `NaN < 3` is false.
            BinOp::Div if y == 0.0 => f64::NAN,
            BinOp::Div => x / y,
            // perf computes `(long)x % (long)y`, so a divisor in (-1, 1) is zero too.
            BinOp::Rem if y.trunc() == 0.0 => return None,
            BinOp::Rem if x.is_nan() || y.is_nan() => f64::NAN,
            // `as` saturates, and wrapping_rem only differs for i64::MIN % -1,
            // where the mathematical answer is 0 anyway.
            BinOp::Rem => (x as i64).wrapping_rem(y as i64) as f64,
            // perf's `a < b ? a : b` rather than `f64::min`, so that NaN
            // operands come out as they do in perf.
            BinOp::Min => {
                if x < y {
                    x
                } else {
                    y
                }
            }
            BinOp::Max => {
                if x > y {
                    x
                } else {
                    y
                }
            }
            BinOp::DRatio if y == 0.0 => 0.0,
            BinOp::DRatio => x / y,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Number(f64),
    Ident(String),
    Literal(String),
    /// One of [`RESERVED`].
    Word(&'static str),
    Punct(u8),
    End,
}

#[derive(Debug, Clone, PartialEq)]
struct Token {
    tok: Tok,
    span: Span,
}

/// A parse failure before it is dressed with the source text. Debug builds
/// give every `Result` temporary its own stack slot, so keeping the error
/// boxed, and the `Result`s pointer-sized, is what keeps [`MAX_NESTING`]
/// levels of recursion well within a 2 MiB thread stack.
struct Fail {
    span: Span,
    why: Why,
}

enum Why {
    Unexpected(&'static str),
    InvalidChar(&'static str),
    UnknownFunction,
    NumberOutOfRange,
    TooDeep(usize),
}

impl Fail {
    fn into_error(self, src: &str) -> MetricParseError {
        let expr = src.to_owned();
        let column = src[..self.span.start].chars().count() + 1;
        let token = src[self.span.start..self.span.end].to_owned();
        match self.why {
            Why::Unexpected(expected) => MetricParseError::Unexpected { expr, column, token, expected },
            Why::InvalidChar(hint) => MetricParseError::InvalidChar { expr, column, token, hint },
            Why::UnknownFunction => MetricParseError::UnknownFunction { expr, column, token },
            Why::NumberOutOfRange => MetricParseError::NumberOutOfRange { expr, column, token },
            Why::TooDeep(limit) => MetricParseError::TooDeep { expr, column, token, limit },
        }
    }
}

type Parsed<T> = Result<T, Box<Fail>>;

fn fail<T>(span: Span, why: Why) -> Parsed<T> {
    Err(Box::new(Fail { span, why }))
}

/// The node at `id`. Ids come only from the parser's own pushes into the arena (a
/// child is pushed before its parent), never from the input, so one is always there.
#[allow(clippy::indexing_slicing)]
fn node(nodes: &[Node], id: usize) -> &Node {
    &nodes[id]
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
    // Tokens are lexed on demand so that errors surface in source order.
    peeked: Option<Token>,
    nesting: usize,
    nodes: Vec<Node>,
}

impl Parser<'_> {
    fn lex(&mut self) -> Parsed<Token> {
        let bytes = self.src.as_bytes();
        while bytes.get(self.pos).is_some_and(u8::is_ascii_whitespace) {
            self.pos += 1;
        }
        let start = self.pos;
        let rest = bytes.get(start..).unwrap_or_default();
        let (tok, len) = match rest.first() {
            None => (Tok::End, 0),
            Some(b'#') => {
                let len = 1 + rest.get(1..).unwrap_or_default().iter().take_while(|b| is_literal_char(**b)).count();
                if len == 1 {
                    return self.invalid_char(start, "; expected a literal name after '#'");
                }
                (Tok::Literal(self.src[start + 1..start + len].to_owned()), len)
            }
            Some(&c @ (b'|' | b'^' | b'&' | b'<' | b'>' | b'+' | b'-' | b'*' | b'/' | b'%' | b'(' | b')' | b',')) => (Tok::Punct(c), 1),
            Some(&c) => {
                let number = number_len(rest);
                let symbol = symbol_len(rest);
                // flex takes the longest match and lists numbers before names.
                if number > 0 && number >= symbol {
                    (self.number(start, number)?, number)
                } else if symbol > 0 {
                    let text = &self.src[start..start + symbol];
                    let tok = match RESERVED.iter().find(|w| **w == text) {
                        Some(word) => Tok::Word(word),
                        None => Tok::Ident(text.replace('\\', "")),
                    };
                    (tok, symbol)
                } else {
                    return self.invalid_char(start, hint(c));
                }
            }
        };
        self.pos += len;
        Ok(Token { tok, span: Span { start, end: start + len } })
    }

    fn number(&self, start: usize, len: usize) -> Parsed<Tok> {
        let text = &self.src[start..start + len];
        let mantissa = text.split('e').next().unwrap_or(text);
        // perf's strtod() fails on overflow and on underflow to zero.
        let underflow = |v: f64| v == 0.0 && mantissa.bytes().any(|b| matches!(b, b'1'..=b'9'));
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() && !underflow(v) => Ok(Tok::Number(v)),
            _ => fail(Span { start, end: start + len }, Why::NumberOutOfRange),
        }
    }

    fn invalid_char<T>(&self, start: usize, hint: &'static str) -> Parsed<T> {
        let len = self.src[start..].chars().next().map_or(0, char::len_utf8);
        fail(Span { start, end: start + len }, Why::InvalidChar(hint))
    }

    fn peek(&mut self) -> Parsed<&Token> {
        let token = match self.peeked.take() {
            Some(token) => token,
            None => self.lex()?,
        };
        Ok(self.peeked.insert(token))
    }

    fn bump(&mut self) -> Parsed<Token> {
        match self.peeked.take() {
            Some(token) => Ok(token),
            None => self.lex(),
        }
    }

    fn expect(&mut self, tok: Tok, expected: &'static str) -> Parsed<Token> {
        let token = self.bump()?;
        if token.tok == tok {
            Ok(token)
        } else {
            fail(token.span, Why::Unexpected(expected))
        }
    }

    fn open(&mut self, paren: &Token) -> Parsed<()> {
        self.nesting += 1;
        if self.nesting > MAX_NESTING {
            return fail(paren.span, Why::TooDeep(MAX_NESTING));
        }
        Ok(())
    }

    fn close(&mut self, expected: &'static str) -> Parsed<Token> {
        self.nesting -= 1;
        self.expect(Tok::Punct(b')'), expected)
    }

    fn push(&mut self, kind: Kind, span: Span) -> usize {
        self.nodes.push(Node { kind, span });
        self.nodes.len() - 1
    }

    fn span(&self, id: usize) -> Span {
        node(&self.nodes, id).span
    }

    fn parse_all(&mut self) -> Parsed<usize> {
        let root = self.parse_if()?;
        self.expect(Tok::End, "an operator, 'if' or end of expression")?;
        Ok(root)
    }

    /// `expr (if expr else expr)*`, nesting to the right. A loop rather than
    /// recursion, so that long chains cost no stack.
    fn parse_if(&mut self) -> Parsed<usize> {
        let mut current = self.parse_expr()?;
        let mut pending = Vec::new();
        while self.peek()?.tok == Tok::Word("if") {
            self.bump()?;
            let cond = self.parse_expr()?;
            self.expect(Tok::Word("else"), "an operator or 'else'")?;
            let next = self.parse_expr()?;
            pending.push((std::mem::replace(&mut current, next), cond));
        }
        while let Some((then, cond)) = pending.pop() {
            let span = self.span(then).to(self.span(current));
            let kind = Kind::If { then, cond, otherwise: current };
            current = self.push(kind, span);
        }
        Ok(current)
    }

    fn parse_expr(&mut self) -> Parsed<usize> {
        self.parse_binary(1)
    }

    /// Precedence climbing: recursion depth is bounded by the number of
    /// precedence levels, not by the length of the chain.
    fn parse_binary(&mut self, min_prec: u8) -> Parsed<usize> {
        let mut lhs = self.parse_unary()?;
        while let Some((op, prec)) = self.peek_infix(min_prec)? {
            self.bump()?;
            let rhs = self.parse_binary(prec + 1)?;
            let span = self.span(lhs).to(self.span(rhs));
            lhs = self.push(Kind::Binary(op, lhs, rhs), span);
        }
        Ok(lhs)
    }

    fn peek_infix(&mut self, min_prec: u8) -> Parsed<Option<(BinOp, u8)>> {
        Ok(match self.peek()?.tok {
            Tok::Punct(c) => BinOp::infix(c).filter(|&(_, prec)| prec >= min_prec),
            _ => None,
        })
    }

    fn parse_unary(&mut self) -> Parsed<usize> {
        let mut minuses = Vec::new();
        while self.peek()?.tok == Tok::Punct(b'-') {
            minuses.push(self.bump()?.span);
        }
        let mut node = self.parse_primary()?;
        while let Some(minus) = minuses.pop() {
            let span = minus.to(self.span(node));
            node = self.push(Kind::Neg(node), span);
        }
        Ok(node)
    }

    fn parse_primary(&mut self) -> Parsed<usize> {
        let token = self.bump()?;
        let kind = match token.tok {
            Tok::Number(v) => Kind::Number(v),
            Tok::Literal(name) => Kind::Literal(name),
            Tok::Ident(name) => {
                // perf would read `foo(` as a name followed by a syntax error;
                // naming the valid functions is more useful.
                if self.peek()?.tok == Tok::Punct(b'(') {
                    return fail(token.span, Why::UnknownFunction);
                }
                Kind::Event(name)
            }
            Tok::Punct(b'(') => {
                self.open(&token)?;
                let inner = self.parse_if()?;
                let close = self.close("an operator, 'if' or ')'")?;
                // Cover the parentheses so that a divisor like `(a - b)` is
                // quoted as written.
                let span = token.span.to(close.span);
                if let Some(n) = self.nodes.get_mut(inner) {
                    n.span = span;
                }
                return Ok(inner);
            }
            Tok::Word(name) if name != "if" && name != "else" => return self.parse_call(name, token.span),
            _ => return fail(token.span, Why::Unexpected(OPERAND)),
        };
        Ok(self.push(kind, token.span))
    }

    fn parse_call(&mut self, name: &str, name_span: Span) -> Parsed<usize> {
        let op = match name {
            "min" => Some(BinOp::Min),
            "max" => Some(BinOp::Max),
            "d_ratio" => Some(BinOp::DRatio),
            "has_event" => None,
            _ => return fail(name_span, Why::UnknownFunction),
        };
        let paren = self.expect(Tok::Punct(b'('), "'('")?;
        self.open(&paren)?;
        let (kind, close) = match op {
            Some(op) => {
                let a = self.parse_expr()?;
                self.expect(Tok::Punct(b','), "an operator or ','")?;
                let b = self.parse_expr()?;
                let close = self.close("an operator or ')'")?;
                (Kind::Binary(op, a, b), close)
            }
            None => {
                let arg = self.bump()?;
                let Tok::Ident(event) = arg.tok else {
                    return fail(arg.span, Why::Unexpected("an event name"));
                };
                (Kind::HasEvent(event), self.close("')'")?)
            }
        };
        Ok(self.push(kind, name_span.to(close.span)))
    }
}

/// Length of perf's number token `([0-9]+\.?[0-9]*|[0-9]*\.?[0-9]+)(e-?[0-9]+)?` at the start of `s`, or 0.
fn number_len(s: &[u8]) -> usize {
    let digits = |from: usize| s.get(from..).map_or(0, |t| t.iter().take_while(|b| b.is_ascii_digit()).count());
    let int = digits(0);
    let mut len = int;
    if s.get(int) == Some(&b'.') {
        let frac = digits(int + 1);
        if int + frac > 0 {
            len = int + 1 + frac;
        }
    }
    if len > 0 && s.get(len) == Some(&b'e') {
        let sign = usize::from(s.get(len + 1) == Some(&b'-'));
        let exp = digits(len + 1 + sign);
        if exp > 0 {
            len += 1 + sign + exp;
        }
    }
    len
}

/// Length of perf's name token `([0-9a-zA-Z_.:@?]|\\[-,=])+` at the start of `s`, or 0.
fn symbol_len(s: &[u8]) -> usize {
    let mut len = 0;
    loop {
        match s.get(len) {
            Some(b) if b.is_ascii_alphanumeric() || b"_.:@?".contains(b) => len += 1,
            Some(b'\\') if matches!(s.get(len + 1), Some(b'-' | b',' | b'=')) => len += 2,
            _ => return len,
        }
    }
}

fn is_literal_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

fn hint(c: u8) -> &'static str {
    match c {
        b'!' => "; perf has no '!' or '!=' operator (write '0 if x else 1' for not x)",
        b'=' => "; perf has no '==', '<=' or '>=' operator, and '=' in an event name is written '\\='",
        b'\\' => "; only '\\-', '\\,' and '\\=' escapes are allowed in event names",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Names map to values; `#name` entries answer literals.
    struct Ctx(Vec<(&'static str, f64)>);

    impl MetricContext for Ctx {
        fn value(&self, name: &str) -> Option<f64> {
            self.0.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
        }
        fn literal(&self, name: &str) -> Option<f64> {
            self.value(&format!("#{name}"))
        }
    }

    /// Answers every name and literal with the same value.
    struct Everything(f64);

    impl MetricContext for Everything {
        fn value(&self, _: &str) -> Option<f64> {
            Some(self.0)
        }
        fn literal(&self, _: &str) -> Option<f64> {
            Some(self.0)
        }
    }

    fn eval_with(src: &str, ctx: &Ctx) -> Result<f64, MetricEvalError> {
        MetricExpr::parse(src).unwrap().eval(ctx)
    }

    fn eval(src: &str) -> f64 {
        eval_with(src, &Ctx(vec![])).unwrap()
    }

    fn parse_err(src: &str) -> MetricParseError {
        MetricExpr::parse(src).unwrap_err()
    }

    #[test]
    fn perf_selftest_values_hold() {
        // The cases of perf's own `tools/perf/tests/expr.c`.
        let ctx = Ctx(vec![("FOO", 1.0), ("BAR", 2.0)]);
        for (src, want) in [
            ("1+1", 2.0),
            ("FOO+BAR", 3.0),
            ("(BAR/2)%2", 1.0),
            ("1 - -4", 5.0),
            ("(FOO-1)*2 + (BAR/2)%2 - -4", 5.0),
            ("1-1 | 1", 1.0),
            ("1-1 & 1", 0.0),
            ("min(1,2) + 1", 2.0),
            ("max(1,2) + 1", 3.0),
            ("1+1 if 3*4 else 0", 2.0),
            ("100 if 1 else 200 if 1 else 300", 100.0),
            ("100 if 0 else 200 if 1 else 300", 200.0),
            ("100 if 1 else 200 if 0 else 300", 100.0),
            ("100 if 0 else 200 if 0 else 300", 300.0),
            ("1.1 + 2.1", 1.1 + 2.1),
            (".1 + 2.", 0.1 + 2.0),
            ("d_ratio(1, 2)", 0.5),
            ("d_ratio(2.5, 0)", 0.0),
            ("1.1 < 2.2", 1.0),
            ("2.2 > 1.1", 1.0),
            ("1.1 < 1.1", 0.0),
            ("2.2 > 2.2", 0.0),
            ("2.2 < 1.1", 0.0),
            ("1.1 > 2.2", 0.0),
            ("1.1e10 < 1.1e100", 1.0),
            ("1.1e2 > 1.1e-2", 1.0),
        ] {
            assert_eq!(eval_with(src, &ctx), Ok(want), "{src}");
        }
        assert!(MetricExpr::parse("BAR/").is_err());
        // perf's selftest: `FOO/0` is NaN.
        assert!(eval_with("FOO/0", &ctx).unwrap().is_nan());
        let names = MetricExpr::parse(r"dash\-event1 - dash\-event2 + EVENT1\,param\=?@").unwrap();
        assert_eq!(names.identifiers(), ["dash-event1", "dash-event2", "EVENT1,param=?@"]);
    }

    #[test]
    fn subtraction_and_division_are_left_associative() {
        assert_eq!(eval("2 - 3 - 4"), -5.0);
        assert_eq!(eval("8 / 4 / 2"), 1.0);
        assert_eq!(eval("7 % 4 % 2"), 1.0);
    }

    #[test]
    fn multiplication_binds_tighter_than_addition() {
        assert_eq!(eval("2 * 3 + 4"), 10.0);
        assert_eq!(eval("2 + 3 * 4"), 14.0);
        assert_eq!(eval("(2 + 3) * 4"), 20.0);
    }

    #[test]
    fn unary_minus_binds_tightest() {
        assert_eq!(eval("-2 * 3"), -6.0);
        assert_eq!(eval("2 * -3"), -6.0);
        assert_eq!(eval("2 - -3"), 5.0);
        assert_eq!(eval("--2"), 2.0);
    }

    #[test]
    fn logical_operators_rank_or_xor_and_below_comparison() {
        // `&` over `^` over `|`.
        assert_eq!(eval("1 ^ 1 & 0"), 1.0);
        assert_eq!(eval("1 | 1 ^ 1"), 1.0);
        assert_eq!(eval("0 & 0 | 1"), 1.0);
        // Comparisons over logic, arithmetic over comparisons.
        assert_eq!(eval("1 < 2 & 3 > 2"), 1.0);
        assert_eq!(eval("1 < 2 + 3"), 1.0);
        assert_eq!(eval("1 < 2 < 3"), 1.0);
    }

    #[test]
    fn logical_operators_test_nonzeroness_not_bits() {
        assert_eq!(eval("2 & 1"), 1.0);
        assert_eq!(eval("2 | 0"), 1.0);
        assert_eq!(eval("0 | 0"), 0.0);
        assert_eq!(eval("2 ^ 1"), 0.0);
        assert_eq!(eval("0.5 ^ 0"), 1.0);
        assert_eq!(eval("0 & 1"), 0.0);
    }

    #[test]
    fn and_or_skip_the_right_operand_when_the_left_decides() {
        assert_eq!(eval("0 & MISSING"), 0.0);
        assert_eq!(eval("1 | MISSING"), 1.0);
        assert!(MetricExpr::parse("1 & MISSING").unwrap().eval(&Ctx(vec![])).is_err());
        let guard = "has_event(X) & X > 10";
        assert_eq!(eval(guard), 0.0);
        assert_eq!(eval_with(guard, &Ctx(vec![("X", 11.0)])).unwrap(), 1.0);
    }

    #[test]
    fn if_else_chains_nest_to_the_right() {
        let src = "a if c else b if d else e";
        let ctx = |c, d| Ctx(vec![("a", 1.0), ("b", 2.0), ("e", 3.0), ("c", c), ("d", d)]);
        assert_eq!(eval_with(src, &ctx(1.0, 1.0)).unwrap(), 1.0);
        assert_eq!(eval_with(src, &ctx(1.0, 0.0)).unwrap(), 1.0);
        assert_eq!(eval_with(src, &ctx(0.0, 1.0)).unwrap(), 2.0);
        assert_eq!(eval_with(src, &ctx(0.0, 0.0)).unwrap(), 3.0);
    }

    #[test]
    fn if_else_has_the_lowest_precedence() {
        assert_eq!(eval("1 + 2 if 0 | 0 else 3 + 4"), 7.0);
        assert_eq!(eval("1 + 2 if 1 < 2 else 3 + 4"), 3.0);
        assert_eq!(eval("(1 if 0 else 2) * 10"), 20.0);
        assert_eq!(eval("1 if -0 else 2"), 2.0);
    }

    #[test]
    fn if_else_condition_and_then_branch_are_not_bare_if_expressions() {
        let err = parse_err("a if b if c else d else e");
        assert_eq!(err.token(), "if");
        assert_eq!(err.column(), 8);
        assert!(MetricExpr::parse("a if (b if c else d) else e").is_ok());
        let err = parse_err("min(a if b else c, d)");
        assert_eq!(err.token(), "if");
    }

    #[test]
    fn if_else_evaluates_only_the_taken_branch() {
        assert_eq!(eval("X if has_event(X) else 5"), 5.0);
        assert_eq!(eval("1 / 0 if 0 else 2"), 2.0);
    }

    #[test]
    fn d_ratio_by_zero_is_zero() {
        assert_eq!(eval("d_ratio(3, 0)"), 0.0);
        assert_eq!(eval("d_ratio(3, -0)"), 0.0);
        assert_eq!(eval("d_ratio(3, 2)"), 1.5);
        // The numerator is not needed, so not required.
        assert_eq!(eval("d_ratio(MISSING, 0)"), 0.0);
    }

    #[test]
    fn division_by_zero_is_nan_as_in_perf_and_modulo_by_zero_names_the_divisor() {
        let ctx = Ctx(vec![("b", 4.0)]);
        // perf's expr.y: `/` by FP_ZERO gives NAN, which flows on.
        assert!(eval_with("1 / (b - 4)", &ctx).unwrap().is_nan());
        assert!(eval_with("1 / -0", &ctx).unwrap().is_nan());
        assert_eq!(eval_with("min(1 / (b - 4), 3)", &ctx).unwrap(), 3.0, "NaN < 3 is false");
        assert_eq!(eval_with("5 if 1 / 0 else 6", &ctx).unwrap(), 5.0, "NaN is not zero");
        let err = eval_with("7 % (b * 0)", &ctx).unwrap_err();
        assert!(matches!(err, MetricEvalError::DivisionByZero { op: '%', ref divisor, .. } if divisor == "(b * 0)"));
    }

    #[test]
    fn division_follows_ieee_otherwise() {
        assert_eq!(eval("1 / 4"), 0.25);
        assert_eq!(eval("1e308 * 10 / 2"), f64::INFINITY);
        assert!(eval("(1e308 * 10 - 1e308 * 10) / 2").is_nan());
    }

    #[test]
    fn modulo_truncates_to_integers_like_perf() {
        assert_eq!(eval("7.9 % 2.5"), 1.0);
        assert_eq!(eval("-7 % 2"), -1.0);
        let err = eval_with("5 % 0.5", &Ctx(vec![])).unwrap_err();
        assert!(matches!(err, MetricEvalError::DivisionByZero { op: '%', value, .. } if value == 0.5));
        // Saturating conversions cannot overflow the remainder.
        assert_eq!(eval("-1e300 % -1"), 0.0);
    }

    #[test]
    fn min_and_max_pick_an_operand() {
        assert_eq!(eval("min(3, 2)"), 2.0);
        assert_eq!(eval("max(3, 2)"), 3.0);
        assert_eq!(eval("max(-1, min(4, 2 * 3))"), 4.0);
        assert_eq!(eval("min(1 + 1, 3) * 2"), 4.0);
    }

    #[test]
    fn comparison_yields_one_or_zero() {
        assert_eq!(eval("3 > 2"), 1.0);
        assert_eq!(eval("3 < 2"), 0.0);
        assert_eq!(eval("2 < 2"), 0.0);
        let nan = Ctx(vec![("n", f64::NAN)]);
        assert!(eval_with("n < 1", &nan).unwrap().is_nan());
    }

    #[test]
    fn numbers_follow_perfs_lexer() {
        assert_eq!(eval("12"), 12.0);
        assert_eq!(eval("1.5"), 1.5);
        assert_eq!(eval(".5"), 0.5);
        assert_eq!(eval("1."), 1.0);
        assert_eq!(eval("1e9"), 1e9);
        assert_eq!(eval("1e-3"), 1e-3);
        assert_eq!(eval("2.5e2"), 250.0);
        // Longest match: these are names, as in perf.
        for name in ["0x1F", "1E9", "2x", "1.5.2"] {
            let expr = MetricExpr::parse(name).unwrap();
            assert_eq!(expr.identifiers(), [name]);
        }
        assert!(matches!(parse_err("1e999"), MetricParseError::NumberOutOfRange { column: 1, .. }));
        assert!(matches!(parse_err("1e-999"), MetricParseError::NumberOutOfRange { .. }));
        assert_eq!(eval("0e-999"), 0.0);
    }

    #[test]
    fn identifiers_keep_colon_dot_at_and_drop_escape_backslashes() {
        let src = r"INSTR_EXEC + CPU_CYCLES:d + BR_MISPRED_DETAIL.ALL.ALL_PRED + cpu@cycles\,period\=1@ + a\-b + a\=b?";
        let expr = MetricExpr::parse(src).unwrap();
        assert_eq!(
            expr.identifiers(),
            ["INSTR_EXEC", "CPU_CYCLES:d", "BR_MISPRED_DETAIL.ALL.ALL_PRED", "cpu@cycles,period=1@", "a-b", "a=b?",]
        );
        let ctx = Ctx(vec![("a-b", 5.0), ("a", 1.0), ("b", 2.0)]);
        assert_eq!(eval_with(r"a\-b", &ctx).unwrap(), 5.0);
        assert_eq!(eval_with("a-b", &ctx).unwrap(), -1.0);
        // Case-sensitive as written.
        assert!(eval_with("A", &ctx).is_err());
        // perf needs `=` escaped inside names too.
        let err = parse_err(r"cpu@cycles\,period=1@");
        assert_eq!((err.column(), err.token()), (19, "="));
        assert!(err.to_string().contains(r"is written '\='"));
    }

    #[test]
    fn unknown_identifier_is_named() {
        let err = eval_with("1 + cycles", &Ctx(vec![])).unwrap_err();
        assert_eq!(err, MetricEvalError::UnknownIdentifier { expr: "1 + cycles".into(), name: "cycles".into() });
    }

    #[test]
    fn literals_are_resolved_by_the_context() {
        let ctx = Ctx(vec![("#smt_on", 1.0), ("#slots", 4.0), ("#slots-1", 9.0)]);
        assert_eq!(eval_with("#slots * 2 if #smt_on else 0", &ctx).unwrap(), 8.0);
        // `-` belongs to literal names in perf.
        assert_eq!(eval_with("#slots - 1", &ctx).unwrap(), 3.0);
        assert_eq!(eval_with("#slots-1", &ctx).unwrap(), 9.0);
        let err = eval_with("#num_cpus", &ctx).unwrap_err();
        assert_eq!(err.to_string(), "metric expression '#num_cpus': unknown literal '#num_cpus'");
        assert!(MetricExpr::parse("#slots").unwrap().identifiers().is_empty());
        assert_eq!(parse_err("# slots").column(), 1);
    }

    #[test]
    fn has_event_tests_the_context() {
        let ctx = Ctx(vec![("cycles", 10.0)]);
        assert_eq!(eval_with("has_event(cycles)", &ctx).unwrap(), 1.0);
        assert_eq!(eval_with("has_event(instructions)", &ctx).unwrap(), 0.0);
        assert_eq!(eval_with(r"has_event(cpu@a\,b@)", &ctx).unwrap(), 0.0);
        let expr = MetricExpr::parse("has_event(instructions) + cycles").unwrap();
        assert_eq!(expr.identifiers(), ["cycles"]);
        let err = parse_err("has_event(1)");
        assert_eq!(err.token(), "1");
        assert!(err.to_string().ends_with("expected an event name"));
        assert!(parse_err("has_event(a + b)").to_string().ends_with("expected ')'"));
    }

    #[test]
    fn has_event_can_be_answered_without_a_value() {
        struct Known;
        impl MetricContext for Known {
            fn value(&self, _: &str) -> Option<f64> {
                None
            }
            fn literal(&self, _: &str) -> Option<f64> {
                None
            }
            fn has_event(&self, name: &str) -> bool {
                name == "cycles"
            }
        }
        let expr = MetricExpr::parse("has_event(cycles)").unwrap();
        assert_eq!(expr.eval(&Known).unwrap(), 1.0);
    }

    #[test]
    fn error_columns_point_at_the_offending_token() {
        let err = parse_err("a + * b");
        assert_eq!(
            err.to_string(),
            "metric expression 'a + * b': unexpected '*' at column 5, expected a number, an event name, '(' or a function"
        );
        assert_eq!((err.column(), err.token()), (5, "*"));

        let err = parse_err("(a + b");
        assert_eq!(
            err.to_string(),
            "metric expression '(a + b': unexpected end of expression at column 7, expected an operator, 'if' or ')'"
        );
        assert_eq!((err.column(), err.token()), (7, ""));

        let err = parse_err("min(a b)");
        assert_eq!((err.column(), err.token()), (7, "b"));
        assert!(err.to_string().ends_with("expected an operator or ','"));

        let err = parse_err("a b");
        assert!(err.to_string().ends_with("expected an operator, 'if' or end of expression"));
        assert_eq!(
            parse_err("a if b").to_string(),
            "metric expression 'a if b': unexpected end of expression at column 7, expected an operator or 'else'"
        );
        assert_eq!(parse_err("").column(), 1);
        // Tokens are whole characters, columns count characters.
        let err = parse_err("a + é");
        assert_eq!((err.column(), err.token()), (5, "é"));
    }

    #[test]
    fn unknown_functions_list_the_valid_ones() {
        let err = parse_err("1 + foo(a, b)");
        assert_eq!(
            err.to_string(),
            "metric expression '1 + foo(a, b)': unknown function 'foo' at column 5, expected one of min, max, d_ratio, has_event"
        );
        assert_eq!(parse_err("MIN(a, b)").token(), "MIN");
        assert_eq!(parse_err("source_count(a)").token(), "source_count");
    }

    #[test]
    fn reserved_words_are_not_names() {
        assert_eq!(parse_err("min + 1").token(), "+");
        assert_eq!(parse_err("if").token(), "if");
        assert_eq!(parse_err("1 + else").token(), "else");
        assert_eq!(parse_err("source_count").token(), "source_count");
        // Only the exact word is reserved.
        let expr = MetricExpr::parse("iff + minimum + else_").unwrap();
        assert_eq!(expr.identifiers(), ["iff", "minimum", "else_"]);
    }

    #[test]
    fn operators_perf_lacks_are_rejected() {
        for (src, column, token) in
            [("!a", 1, "!"), ("a != b", 3, "!"), ("a <= b", 4, "="), ("a == b", 3, "="), ("a $ b", 3, "$"), (r"a\x", 2, "\\")]
        {
            let err = parse_err(src);
            assert!(matches!(err, MetricParseError::InvalidChar { .. }), "{src}: {err}");
            assert_eq!((err.column(), err.token()), (column, token), "{src}");
        }
        assert!(parse_err("!a").to_string().contains("perf has no '!'"));
        assert_eq!(parse_err("+a").token(), "+");
    }

    #[test]
    fn nesting_is_capped_without_overflowing_the_stack() {
        let parens = |n: usize| format!("{}1{}", "(".repeat(n), ")".repeat(n));
        assert_eq!(eval(&parens(MAX_NESTING)), 1.0);
        let err = parse_err(&parens(MAX_NESTING + 1));
        assert!(matches!(err, MetricParseError::TooDeep { limit: MAX_NESTING, .. }));
        assert_eq!((err.column(), err.token()), (MAX_NESTING + 1, "("));
        assert!(err.to_string().contains("deeper than 256 levels"));

        // The costliest path per level, at the limit, in a test thread's stack.
        let half = MAX_NESTING / 2;
        let mixed = format!("{}1{}", "min(1, 1 + (".repeat(half), "))".repeat(half));
        assert_eq!(eval(&mixed), 1.0);
        let calls = format!("{}1{}", "d_ratio(1, ".repeat(MAX_NESTING + 1), ")".repeat(MAX_NESTING + 1));
        assert!(matches!(parse_err(&calls), MetricParseError::TooDeep { .. }));
    }

    #[test]
    fn long_chains_need_no_nesting_limit() {
        let n = 100_000;
        assert_eq!(eval(&vec!["1"; n].join(" + ")), n as f64);
        assert_eq!(eval(&format!("{}1", "-".repeat(n))), 1.0);
        assert_eq!(eval(&format!("{}7", "1 if 0 else ".repeat(n))), 7.0);
        let deep = MetricExpr::parse(&vec!["a"; n].join(" * ")).unwrap();
        assert_eq!(deep.identifiers(), ["a"]);
        assert_eq!(deep.clone(), deep);
    }

    #[test]
    fn identifiers_are_in_first_use_order_without_duplicates() {
        let expr = MetricExpr::parse("b + a * b + c if a > #lit & has_event(z) else d / min(c, e)").unwrap();
        assert_eq!(expr.identifiers(), ["b", "a", "c", "d", "e"]);
    }

    #[test]
    fn display_round_trips_the_source() {
        let src = r"  d_ratio(INST_RETIRED.ANY, cpu@cycles\,period\=1@) * 100 if #smt_on else 0 ";
        let expr = MetricExpr::parse(src).unwrap();
        assert_eq!(expr.to_string(), src);
        assert_eq!(expr.source(), src);
        let again: MetricExpr = expr.to_string().parse().unwrap();
        assert_eq!(again, expr);
    }

    /// Fragments that exercise the grammar rather than only the lexer.
    fn fragment() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "a",
            "b",
            "#x",
            "0",
            "1",
            "2.5",
            ".5",
            "1e-3",
            "1e999",
            "if",
            "else",
            "min",
            "max",
            "d_ratio",
            "has_event",
            "foo",
            "(",
            ")",
            ",",
            "+",
            "-",
            "*",
            "/",
            "%",
            "|",
            "^",
            "&",
            "<",
            ">",
            "!",
            "=",
            "\\",
            "\\-",
            " ",
            "é",
            "#",
        ])
    }

    /// Well-formed expressions, to reach evaluation rather than parse errors.
    fn expression() -> impl Strategy<Value = String> {
        let leaf = prop::sample::select(vec!["a", "b", "#x", "0", "1", "2.5", "-0", "1e-3", "has_event(a)"]).prop_map(String::from);
        leaf.prop_recursive(8, 128, 3, |inner| {
            let op = prop::sample::select(vec!["+", "-", "*", "/", "%", "|", "^", "&", "<", ">"]);
            let func = prop::sample::select(vec!["min", "max", "d_ratio"]);
            prop_oneof![
                (inner.clone(), op, inner.clone()).prop_map(|(a, op, b)| format!("{a} {op} {b}")),
                inner.clone().prop_map(|a| format!("-{a}")),
                inner.clone().prop_map(|a| format!("({a})")),
                (func, inner.clone(), inner.clone()).prop_map(|(f, a, b)| format!("{f}({a}, {b})")),
                (inner.clone(), inner.clone(), inner).prop_map(|(a, c, b)| format!("({a} if {c} else {b})")),
            ]
        })
    }

    /// A plainly recursive evaluator with the documented semantics, to check
    /// the work-list evaluator against; None stands for any error.
    fn reference(expr: &MetricExpr, id: usize, ctx: &dyn MetricContext) -> Option<f64> {
        let eval = |id| reference(expr, id, ctx);
        Some(match &expr.nodes[id].kind {
            Kind::Number(v) => *v,
            Kind::Event(name) => ctx.value(name)?,
            Kind::Literal(name) => ctx.literal(name)?,
            Kind::HasEvent(name) => flag(ctx.has_event(name)),
            Kind::Neg(a) => -eval(*a)?,
            Kind::If { then, cond, otherwise } => eval(if eval(*cond)? != 0.0 { *then } else { *otherwise })?,
            Kind::Binary(BinOp::And, a, b) => flag(eval(*a)? != 0.0 && eval(*b)? != 0.0),
            Kind::Binary(BinOp::Or, a, b) => flag(eval(*a)? != 0.0 || eval(*b)? != 0.0),
            Kind::Binary(BinOp::DRatio, a, b) => {
                let y = eval(*b)?;
                if y == 0.0 {
                    0.0
                } else {
                    eval(*a)? / y
                }
            }
            Kind::Binary(op, a, b) => {
                let x = eval(*a)?;
                op.apply(x, eval(*b)?)?
            }
        })
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics(src in "\\PC{0,64}") {
            if let Ok(expr) = MetricExpr::parse(&src) {
                let _ = expr.eval(&Everything(0.0));
                let _ = expr.identifiers();
            }
        }

        #[test]
        fn evaluation_matches_a_recursive_reference(src in expression()) {
            let expr = MetricExpr::parse(&src).unwrap();
            prop_assert_eq!(&MetricExpr::parse(&expr.to_string()).unwrap(), &expr);
            let partial = Ctx(vec![("a", 3.0), ("#x", -2.0)]);
            let everything = [0.0, -0.0, 1.0, 0.5, -3.0, f64::NAN, f64::INFINITY].map(Everything);
            let contexts = everything.iter().map(|c| c as &dyn MetricContext).chain([&partial as _]);
            for ctx in contexts {
                let got = expr.eval(ctx).ok();
                let want = reference(&expr, expr.root, ctx);
                prop_assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "{}", src);
            }
        }

        #[test]
        fn token_soup_never_panics_and_round_trips(parts in prop::collection::vec(fragment(), 0..40)) {
            let src: String = parts.concat();
            match MetricExpr::parse(&src) {
                Ok(expr) => {
                    for v in [0.0, -0.0, 1.0, 0.5, -3.0, f64::NAN, f64::INFINITY] {
                        let _ = expr.eval(&Everything(v));
                    }
                    prop_assert_eq!(MetricExpr::parse(&expr.to_string()), Ok(expr));
                }
                Err(err) => {
                    prop_assert!(err.column() <= src.chars().count() + 1);
                    prop_assert!(!err.to_string().is_empty());
                }
            }
        }
    }
}
