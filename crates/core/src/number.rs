//! Numbers as people write them: the one parser behind every command-line value,
//! register value, event-string value and hypercall argument, so that `0XE` means
//! the same everywhere and `+5`, `0x+5` or ` 5` mean nothing anywhere.
//!
//! The grammar, strict on purpose (Rust's `from_str_radix` takes a leading `+`):
//! - a number is decimal digits, or `0x`/`0X` and hex digits, or `0b`/`0B` and binary
//!   digits, with single `_` between digits (`1_000_000`, `0xffff_ffff`); no sign,
//!   no spaces;
//! - a count is a number, or decimal scientific notation `1e9`, `2.5E8`, whose value
//!   must be a whole number.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

/// Why a text is not a number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NumberError {
    #[error("'{}' is not a number: expected decimal (42), hex (0x2a) or binary (0b101010), digits optionally grouped by '_'", quoted(.0))]
    Syntax(String),
    #[error("'{}' is not a count: expected a number (1000000, 0x1000) or decimal scientific notation (1e9, 2.5e8)", quoted(.0))]
    CountSyntax(String),
    #[error("'{}' is not a whole number", quoted(.0))]
    Fraction(String),
    #[error("'{}' does not fit 64 bits (at most 18446744073709551615)", quoted(.0))]
    Overflow(String),
}

/// The input as an error quotes it (a bounded excerpt).
fn quoted(text: &str) -> String {
    crate::input::excerpt(text, crate::input::EXCERPT_CHARS)
}

/// The value of `digits` in `radix`: digits only, with single `_` between them.
fn digits(digits: &str, radix: u32) -> Result<u64, Failure> {
    let mut value: u64 = 0;
    let mut last_was_digit = false;
    for c in digits.chars() {
        if c == '_' && last_was_digit {
            last_was_digit = false;
            continue;
        }
        let d = c.to_digit(radix).ok_or(Failure::Syntax)?;
        value = value.checked_mul(u64::from(radix)).and_then(|v| v.checked_add(u64::from(d))).ok_or(Failure::Overflow)?;
        last_was_digit = true;
    }
    if last_was_digit {
        Ok(value)
    } else {
        // Empty, or ending in '_'.
        Err(Failure::Syntax)
    }
}

enum Failure {
    Syntax,
    Overflow,
}

/// A number: decimal, `0x` hex or `0b` binary (see the module's grammar).
pub fn parse_u64(text: &str) -> Result<u64, NumberError> {
    let (body, radix) = split_radix(text);
    digits(body, radix).map_err(|f| match f {
        Failure::Syntax => NumberError::Syntax(text.to_string()),
        Failure::Overflow => NumberError::Overflow(text.to_string()),
    })
}

/// Bare digits in `radix` with no prefix (the `1a` of a raw event `r1a`).
pub fn parse_digits(text: &str, radix: u32) -> Option<u64> {
    digits(text, radix).ok()
}

/// A count: a number, or decimal scientific notation whose value is whole.
pub fn parse_count(text: &str) -> Result<u64, NumberError> {
    let (body, radix) = split_radix(text);
    let Some((mantissa, exponent)) = body.split_once(['e', 'E']).filter(|_| radix == 10) else {
        return parse_u64(text).map_err(|e| match e {
            NumberError::Syntax(t) => NumberError::CountSyntax(t),
            other => other,
        });
    };
    let syntax = || NumberError::CountSyntax(text.to_string());
    let overflow = || NumberError::Overflow(text.to_string());
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let exponent = match digits(exponent, 10) {
        Ok(e) => u32::try_from(e).map_err(|_| overflow())?,
        Err(Failure::Syntax) => return Err(syntax()),
        Err(Failure::Overflow) => return Err(overflow()),
    };
    // `2.50e1` is 250 / 10^2 * 10^1: read the mantissa's digits as one integer and
    // shift by the exponent less the fraction's length.
    let digits_text = format!("{whole}{fraction}");
    if whole.is_empty() || (mantissa.contains('.') && fraction.is_empty()) {
        return Err(syntax());
    }
    let all = match digits(&digits_text, 10) {
        Ok(v) => v,
        Err(Failure::Syntax) => return Err(syntax()),
        Err(Failure::Overflow) => return Err(overflow()),
    };
    let places = u32::try_from(fraction.chars().filter(|&c| c != '_').count()).map_err(|_| syntax())?;
    if exponent >= places {
        let scale = 10u64.checked_pow(exponent - places).ok_or_else(overflow)?;
        all.checked_mul(scale).ok_or_else(overflow)
    } else {
        let scale = 10u64.checked_pow(places - exponent).ok_or_else(|| NumberError::Fraction(text.to_string()))?;
        if all % scale == 0 {
            Ok(all / scale)
        } else {
            Err(NumberError::Fraction(text.to_string()))
        }
    }
}

/// The digits after a radix prefix, and the radix.
fn split_radix(text: &str) -> (&str, u32) {
    let prefixed = |p: [&str; 2]| text.strip_prefix(p[0]).or_else(|| text.strip_prefix(p[1]));
    if let Some(hex) = prefixed(["0x", "0X"]) {
        (hex, 16)
    } else if let Some(bin) = prefixed(["0b", "0B"]) {
        (bin, 2)
    } else {
        (text, 10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_radix_and_case_of_prefix_is_read() {
        assert_eq!(parse_u64("42"), Ok(42));
        assert_eq!(parse_u64("0xE"), Ok(14));
        assert_eq!(parse_u64("0XE"), Ok(14));
        assert_eq!(parse_u64("0b101"), Ok(5));
        assert_eq!(parse_u64("0B101"), Ok(5));
        assert_eq!(parse_u64("1_000_000"), Ok(1_000_000));
        assert_eq!(parse_u64("0xffff_ffff"), Ok(0xffff_ffff));
        assert_eq!(parse_u64("18446744073709551615"), Ok(u64::MAX));
    }

    #[test]
    fn signs_spaces_empty_digits_and_stray_separators_are_refused() {
        for bad in ["", " ", "+5", "-5", "0x+5", "0x-5", " 5", "5 ", "0x", "0b", "0b2", "0xg", "_1", "1_", "1__0", "0x_1", "1e3", "٣"] {
            assert!(matches!(parse_u64(bad), Err(NumberError::Syntax(_))), "{bad:?}");
        }
        assert!(matches!(parse_u64("18446744073709551616"), Err(NumberError::Overflow(_))));
        assert!(matches!(parse_u64("0x1_0000_0000_0000_0000"), Err(NumberError::Overflow(_))));
    }

    #[test]
    fn counts_take_scientific_notation_only_when_whole() {
        assert_eq!(parse_count("1e9"), Ok(1_000_000_000));
        assert_eq!(parse_count("1E9"), Ok(1_000_000_000));
        assert_eq!(parse_count("2.5e8"), Ok(250_000_000));
        assert_eq!(parse_count("0XE"), Ok(14));
        assert_eq!(parse_count("0x1E"), Ok(30), "hex digits, not an exponent");
        assert_eq!(parse_count("1_000e3"), Ok(1_000_000));
        assert_eq!(parse_count("1.50e1"), Ok(15));
        assert!(matches!(parse_count("1.5e0"), Err(NumberError::Fraction(_))));
        assert!(matches!(parse_count("1e20"), Err(NumberError::Overflow(_))));
        assert!(matches!(parse_count("1e99999999999"), Err(NumberError::Overflow(_))));
        for bad in ["e9", "1e", "1e+9", "1e-9", "+1e9", "1.e9", ".5e9", "1.5", "0b1e1", "1e9x"] {
            assert!(parse_count(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn bare_digits_have_no_prefix_or_sign() {
        assert_eq!(parse_digits("1a", 16), Some(0x1a));
        assert_eq!(parse_digits("+1a", 16), None);
        assert_eq!(parse_digits("", 16), None);
        assert_eq!(parse_digits("0x1a", 16), None);
    }
}
