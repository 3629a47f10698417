//! Registers and their fields, described once and used for encoding, decoding,
//! validation, bit diagrams and simulated write semantics.
//!
//! An architecture declares each register as a `const Register`. Nothing else in the
//! code base repeats a field position: encoders set fields by [`FieldRef`], models
//! apply writes through [`Register::apply_write`], and decoders walk the same list.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use std::borrow::Cow;
use std::fmt::Write as _;

use thiserror::Error;

/// How software sees a field. The names follow the spec vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read/write.
    ReadWrite,
    /// Read-only: writes are ignored.
    ReadOnly,
    /// Reserved. Software should write zero; writes are ignored and reads return
    /// zero (`unpredictable_read == false`) or an unpredictable value (`true`), which
    /// the models return as zero.
    Reserved { unpredictable_read: bool },
    /// Hardware sets it; writing 1 clears it, writing 0 has no effect.
    WriteOneToClear,
    /// Hardware sets it; software may clear it (write 0) but never set it (a written 1
    /// keeps the current value).
    Sticky,
    /// Write-only action: writing 1 triggers an action; the bit is not stored and
    /// reads as zero (the spec calls the read value unpredictable).
    Action,
}

impl Access {
    pub fn label(self) -> &'static str {
        match self {
            Access::ReadWrite => "RW",
            Access::ReadOnly => "RO",
            Access::Reserved { .. } => "SBZ",
            Access::WriteOneToClear => "W1C",
            Access::Sticky => "sticky",
            Access::Action => "WO",
        }
    }

    fn is_reserved(self) -> bool {
        matches!(self, Access::Reserved { .. })
    }
}

/// A value of a field that has a name of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamedValue {
    pub value: u64,
    pub name: &'static str,
    pub meaning: &'static str,
}

/// How a decoder explains a field's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Values {
    /// A plain number (a count, an address, an initial value).
    Number,
    /// A flag or enumeration whose values are listed.
    Named(&'static [NamedValue]),
    /// An event selector: the architecture names the event.
    Event,
    /// A unit mask: the architecture names it, knowing the selected event.
    Umask,
}

/// One field of a register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub msb: u8,
    pub lsb: u8,
    pub access: Access,
    pub description: &'static str,
    pub values: Values,
    /// Models on which the field exists; elsewhere its bits are reserved
    /// should-be-zero. Empty means every model of the family.
    pub only_on: &'static [&'static str],
    /// The one value the spec asks for (Montecito's ism, "should be set to '10 for
    /// proper operation"); decoding any other warns.
    pub proper: Option<u64>,
}

impl Field {
    /// A read/write numeric field (the common case); adjust with the `with_*` methods.
    pub const fn new(name: &'static str, msb: u8, lsb: u8, description: &'static str) -> Field {
        Field { name, msb, lsb, access: Access::ReadWrite, description, values: Values::Number, only_on: &[], proper: None }
    }

    pub const fn with_proper(mut self, value: u64) -> Field {
        self.proper = Some(value);
        self
    }

    pub const fn with_access(mut self, access: Access) -> Field {
        self.access = access;
        self
    }

    pub const fn with_values(mut self, values: Values) -> Field {
        self.values = values;
        self
    }

    pub const fn only_on(mut self, models: &'static [&'static str]) -> Field {
        self.only_on = models;
        self
    }

    pub const fn width(&self) -> u32 {
        (self.msb - self.lsb) as u32 + 1
    }

    /// Mask of the field's bits in place.
    pub const fn mask(&self) -> u64 {
        let ones = if self.width() >= 64 { u64::MAX } else { (1u64 << self.width()) - 1 };
        ones << self.lsb
    }

    /// Largest value the field can hold.
    pub const fn max(&self) -> u64 {
        self.mask() >> self.lsb
    }

    pub const fn get(&self, register: u64) -> u64 {
        (register & self.mask()) >> self.lsb
    }

    /// `register` with this field replaced by `value` (truncated to the field width).
    pub const fn set(&self, register: u64, value: u64) -> u64 {
        (register & !self.mask()) | ((value << self.lsb) & self.mask())
    }

    /// Spec-style bit range: "27:20" or "11".
    pub fn bits(&self) -> String {
        if self.msb == self.lsb {
            self.msb.to_string()
        } else {
            format!("{}:{}", self.msb, self.lsb)
        }
    }

    fn exists_on(&self, model: &str) -> bool {
        self.only_on.is_empty() || self.only_on.iter().any(|m| m.eq_ignore_ascii_case(model))
    }

    /// A field of other models, reserved in a register specialised with `for_model`.
    fn is_absent(&self) -> bool {
        self.access.is_reserved() && !self.only_on.is_empty()
    }

    fn meaning(&self, value: u64) -> Option<&'static str> {
        match self.values {
            Values::Named(list) => list.iter().find(|v| v.value == value).map(|v| v.meaning),
            _ => None,
        }
    }
}

/// A register: name, width, reset value and its fields (most significant first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Register {
    pub name: &'static str,
    /// Other names the spec or the ecosystem uses for the same register.
    pub aliases: &'static [&'static str],
    pub width: u8,
    pub reset: u64,
    pub description: &'static str,
    pub fields: Cow<'static, [Field]>,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RegisterError {
    #[error("{register} has no field '{field}'; valid fields: {valid}")]
    UnknownField { register: &'static str, field: String, valid: String },
    #[error("{register}.{field} does not exist on this model (its bits are should-be-zero): {why}")]
    AbsentField { register: &'static str, field: &'static str, why: &'static str },
    #[error("value {value:#x} does not fit {register}.{field} (bits {bits}, at most {max:#x})")]
    FieldOverflow { register: &'static str, field: &'static str, bits: String, value: u64, max: u64 },
    #[error("value {value:#x} does not fit the {width}-bit register {register}")]
    TooWide { register: &'static str, width: u8, value: u64 },
    #[error("{register} bits {bits} ({field}) should be zero, but the value sets them ({value:#x}){note}")]
    ReservedBitsSet { register: &'static str, field: &'static str, bits: String, value: u64, note: String },
    #[error("{register}.{field} is {access}: software cannot set it")]
    NotWritable { register: &'static str, field: &'static str, access: &'static str },
}

/// What a register write did, beyond the stored value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WriteEffect {
    /// The value the register holds after the write.
    pub stored: u64,
    /// Action fields written with a non-zero value, in field order.
    pub actions: Vec<&'static str>,
    /// Bits of write-1-to-clear or sticky fields that the write cleared.
    pub cleared: u64,
}

/// One field of a decoded value.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DecodedField {
    pub name: String,
    pub bits: String,
    pub value: u64,
    pub meaning: String,
}

/// A decoded register value: its fields and any warnings (reserved bits set).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Decoded {
    pub register: String,
    pub value: String,
    pub fields: Vec<DecodedField>,
    pub warnings: Vec<String>,
}

impl Register {
    pub const fn new(name: &'static str, width: u8, reset: u64, description: &'static str, fields: &'static [Field]) -> Register {
        Register { name, aliases: &[], width, reset, description, fields: Cow::Borrowed(fields) }
    }

    pub const fn with_aliases(mut self, aliases: &'static [&'static str]) -> Register {
        self.aliases = aliases;
        self
    }

    /// Does `name` name this register (case-insensitive, aliases included)?
    pub fn is_named(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name) || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
    }

    pub fn width_mask(&self) -> u64 {
        if self.width >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        }
    }

    /// The register as it exists on `model`: fields that exist only on other models
    /// become reserved should-be-zero bits, keeping their position from the one list.
    pub fn for_model(&self, model: &str) -> Register {
        let fields: Vec<Field> = self
            .fields
            .iter()
            .map(|f| {
                if f.exists_on(model) {
                    *f
                } else {
                    // Keep the name and models so that asking for the field explains
                    // why it is absent here.
                    Field { access: Access::Reserved { unpredictable_read: true }, values: Values::Number, ..*f }
                }
            })
            .collect();
        Register { fields: Cow::Owned(fields), ..self.clone() }
    }

    pub fn field(&self, name: &str) -> Result<&Field, RegisterError> {
        // One pass: a field absent on this model is an error wherever it stands, else
        // the first defined field of the name. Encoders pass the fields' own names,
        // which compare by address before any letter is looked at.
        let mut found = None;
        for f in self.fields.iter() {
            if f.name.len() != name.len() || (f.name.as_ptr() != name.as_ptr() && !f.name.eq_ignore_ascii_case(name)) {
                continue;
            }
            if f.is_absent() {
                return Err(RegisterError::AbsentField { register: self.name, field: f.name, why: f.description });
            }
            if found.is_none() && !f.access.is_reserved() {
                found = Some(f);
            }
        }
        found.ok_or_else(|| RegisterError::UnknownField {
            register: self.name,
            field: name.to_string(),
            valid: self.fields.iter().filter(|f| !f.access.is_reserved()).map(|f| f.name).collect::<Vec<_>>().join(", "),
        })
    }

    /// Bits that no defined field covers or that belong to reserved fields.
    pub fn reserved_mask(&self) -> u64 {
        let defined = self.fields.iter().filter(|f| !f.access.is_reserved()).fold(0, |m, f| m | f.mask());
        self.width_mask() & !defined
    }

    /// Build a value from named fields, checking that each fits and can be written.
    pub fn encode(&self, fields: &[(&str, u64)]) -> Result<u64, RegisterError> {
        let mut value = 0;
        for &(name, v) in fields {
            let f = self.field(name)?;
            if v > f.max() {
                return Err(RegisterError::FieldOverflow { register: self.name, field: f.name, bits: f.bits(), value: v, max: f.max() });
            }
            if matches!(f.access, Access::ReadOnly) && v != 0 {
                return Err(RegisterError::NotWritable { register: self.name, field: f.name, access: "read-only" });
            }
            value = f.set(value, v);
        }
        Ok(value)
    }

    /// Check a value software is about to write: it must fit the register and leave
    /// every reserved bit zero.
    pub fn check_write(&self, value: u64) -> Result<(), RegisterError> {
        if value & !self.width_mask() != 0 {
            return Err(RegisterError::TooWide { register: self.name, width: self.width, value });
        }
        match self.reserved_violations(value).into_iter().next() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn reserved_violations(&self, value: u64) -> Vec<RegisterError> {
        let mut out = Vec::new();
        for f in self.fields.iter().filter(|f| f.access.is_reserved()) {
            if f.get(value) != 0 {
                out.push(RegisterError::ReservedBitsSet {
                    register: self.name,
                    field: f.name,
                    bits: f.bits(),
                    value: f.get(value),
                    note: Self::reserved_note(f),
                });
            }
        }
        let covered = self.fields.iter().fold(0, |m, f| m | f.mask());
        let loose = value & self.width_mask() & !covered;
        if loose != 0 {
            out.push(RegisterError::ReservedBitsSet {
                register: self.name,
                field: "undefined",
                bits: format!("{loose:#x}"),
                value: loose,
                note: String::new(),
            });
        }
        out
    }

    /// Why a field is reserved when the family defines it on other models.
    fn reserved_note(reserved: &Field) -> String {
        if reserved.is_absent() {
            format!(": {}", reserved.description)
        } else {
            String::new()
        }
    }

    /// Apply a software write to a register holding `old`, with the access semantics
    /// of each field. Bits outside the register's width are ignored.
    pub fn apply_write(&self, old: u64, written: u64) -> WriteEffect {
        let mut effect = WriteEffect { stored: old & self.width_mask(), ..WriteEffect::default() };
        for f in self.fields.iter() {
            let (was, new) = (f.get(old), f.get(written));
            let next = match f.access {
                Access::ReadWrite => new,
                Access::ReadOnly => was,
                Access::Reserved { .. } => 0,
                Access::WriteOneToClear => was & !new,
                Access::Sticky => was & new,
                Access::Action => {
                    if new != 0 {
                        effect.actions.push(f.name);
                    }
                    0
                }
            };
            if matches!(f.access, Access::WriteOneToClear | Access::Sticky) {
                effect.cleared |= f.set(0, was & !next);
            }
            effect.stored = f.set(effect.stored, next);
        }
        effect
    }

    /// What software reads from a register holding `stored`: action bits and
    /// reserved bits read as zero.
    pub fn read(&self, stored: u64) -> u64 {
        self.fields
            .iter()
            .filter(|f| matches!(f.access, Access::Action | Access::Reserved { .. }))
            .fold(stored & self.width_mask(), |v, f| f.set(v, 0))
    }

    /// Decode a value field by field. `explain` gives the meaning of event-selector
    /// and unit-mask fields, from the field and the whole register value.
    /// Reserved bits that are set become warnings (a read may return them).
    pub fn decode(&self, value: u64, explain: &dyn Fn(&Field, u64) -> Option<String>) -> Result<Decoded, RegisterError> {
        if value & !self.width_mask() != 0 {
            return Err(RegisterError::TooWide { register: self.name, width: self.width, value });
        }
        let fields: Vec<DecodedField> = self
            .fields
            .iter()
            .map(|f| {
                let v = f.get(value);
                let meaning = match (f.values, f.access) {
                    (_, Access::Reserved { .. }) => match (v, f.is_absent()) {
                        (0, false) => "reserved".to_string(),
                        (0, true) => format!("reserved on this model (exists on {})", f.only_on.join(", ")),
                        _ => "reserved, should be zero".to_string(),
                    },
                    (Values::Event, _) => explain(f, value).unwrap_or_else(|| format!("event {v:#x}: reserved")),
                    (Values::Umask, _) => explain(f, value).unwrap_or_else(|| format!("unit mask {v:#x}")),
                    (Values::Named(_), _) => f.meaning(v).map(str::to_string).unwrap_or_else(|| format!("undefined value {v:#x}")),
                    (Values::Number, _) => f.description.to_string(),
                };
                DecodedField { name: f.name.to_string(), bits: f.bits(), value: v, meaning }
            })
            .collect();
        let mut warnings: Vec<String> = self.reserved_violations(value).iter().map(ToString::to_string).collect();
        for (f, d) in self.fields.iter().zip(&fields) {
            if let Some(p) = f.proper.filter(|&p| p != d.value) {
                warnings.push(format!(
                    "{} bits {} ({}) are {:#x}, not {p:#x}: {}; {}",
                    self.name, d.bits, f.name, d.value, d.meaning, f.description
                ));
            }
        }
        let digits = (self.width as usize).div_ceil(4);
        Ok(Decoded { register: self.name.to_string(), value: format!("{value:#0w$x}", w = digits + 2), fields, warnings })
    }

    /// An ASCII bit diagram in the style of the spec's register figures, with the
    /// field values of `value` in a last row when given. A register wider than
    /// `columns` is drawn in several rows of fields, most significant first, each
    /// within `columns` (a field wider than that on its own keeps a row to itself).
    pub fn diagram(&self, value: Option<u64>, columns: usize) -> String {
        let cells: Vec<(String, String, String)> = self
            .fields
            .iter()
            .map(|f| {
                let bits = if f.msb == f.lsb { f.msb.to_string() } else { format!("{}  {}", f.msb, f.lsb) };
                let val = value.map(|v| format!("{:#x}", f.get(v))).unwrap_or_default();
                (bits, f.name.to_string(), val)
            })
            .collect();
        let widths: Vec<usize> = cells.iter().map(|(b, n, v)| b.len().max(n.len()).max(v.len()) + 2).collect();
        // Rows of fields: each cell takes its width and a separator after the first '+'.
        let mut rows: Vec<std::ops::Range<usize>> = Vec::new();
        let mut start = 0;
        let mut used = 1;
        for (i, w) in widths.iter().enumerate() {
            if i > start && used + w + 1 > columns {
                rows.push(start..i);
                start = i;
                used = 1;
            }
            used += w + 1;
        }
        rows.push(start..cells.len());
        let mut out = String::new();
        for (k, range) in rows.into_iter().enumerate() {
            let (Some(cells), Some(widths)) = (cells.get(range.clone()), widths.get(range)) else { continue };
            let border: String = widths.iter().fold(String::from("+"), |mut s, w| {
                s.push_str(&"-".repeat(*w));
                s.push('+');
                s
            });
            let row = |pick: &dyn Fn(&(String, String, String)) -> &String, sep: char| {
                let mut s = String::from(sep);
                for (cell, w) in cells.iter().zip(widths) {
                    let _ = write!(s, "{:^w$}", pick(cell), w = *w);
                    s.push(sep);
                }
                s.trim_end().to_string()
            };
            if k > 0 {
                out.push('\n');
            }
            for line in [row(&|c| &c.0, ' '), border.clone(), row(&|c| &c.1, '|'), border] {
                out.push_str(&line);
                out.push('\n');
            }
            if value.is_some() {
                out.push_str(&row(&|c| &c.2, ' '));
                out.push('\n');
            }
        }
        out
    }
}
