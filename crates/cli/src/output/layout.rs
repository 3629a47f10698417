//! Laying output out for the reader's terminal: its width, tables whose name columns
//! never wrap, and counter lists written as ranges.

use std::io::IsTerminal;

use comfy_table::{ColumnConstraint, ContentArrangement, LineStyle, Row, Table, TableStyle, Width};

/// Output narrower than this is not worth laying out; wider than this no one reads.
const MIN_WIDTH: u16 = 40;
const MAX_WIDTH: u16 = 400;

/// The width output is laid out for: `COLUMNS` when it holds a number (the user, or a
/// script, says how wide), else the terminal's when standard output is one, else 80,
/// the width a pipe into a pager or a file is usually read at.
pub fn width() -> u16 {
    let from_env = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<u16>().ok());
    let from_tty = || {
        let stdout = std::io::stdout();
        if !stdout.is_terminal() {
            return None;
        }
        terminal_size::terminal_size_of(stdout).map(|(w, _)| w.0)
    };
    from_env.or_else(from_tty).unwrap_or(80).clamp(MIN_WIDTH, MAX_WIDTH)
}

/// The width of the terminal standard error goes to (errors are wrapped only there),
/// `COLUMNS` first as for [`width`].
pub fn stderr_width() -> u16 {
    let from_env = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<u16>().ok());
    from_env.or_else(|| terminal_size::terminal_size_of(std::io::stderr()).map(|(w, _)| w.0)).unwrap_or(80).clamp(MIN_WIDTH, MAX_WIDTH)
}

/// Columns under an underlined header, like `perf list` and `ls -l`: no boxes.
const STYLE: TableStyle = TableStyle::new().header_separator(LineStyle::none().fill('─').junction(' '));

/// A table laid out within `width` columns; [`render`] lays it out.
pub fn table(header: &[&str], width: u16) -> Table {
    let mut t = Table::new();
    t.load_style(STYLE).force_no_tty().set_width(width).set_content_arrangement(ContentArrangement::Dynamic).set_truncation_indicator("…");
    if !header.is_empty() {
        t.set_header(header.to_vec());
    }
    t
}

/// The table's text, the columns in `whole` keeping their content on one line (names,
/// codes and counters are never split) and the others wrapping at word boundaries
/// into the space left.
pub fn render(t: Table, whole: &[usize]) -> String {
    render_bounded(t, whole, &[])
}

/// [`render`], with the columns in `bounded` at most `(column, width)` wide: their
/// content (lists of names) wraps between words.
pub fn render_bounded(mut t: Table, whole: &[usize], bounded: &[(usize, u16)]) -> String {
    for &c in whole {
        if let Some(col) = t.column_mut(c) {
            col.set_constraint(ColumnConstraint::ContentWidth);
        }
    }
    for &(c, w) in bounded {
        if let Some(col) = t.column_mut(c) {
            col.set_constraint(ColumnConstraint::UpperBoundary(Width::Fixed(w)));
        }
    }
    t.trim_fmt()
}

/// Whether a reader sees the output in a terminal as it comes: listings cut their rows
/// to one line there, and keep them whole for a pipe or a file, as perf's do.
pub fn on_terminal() -> bool {
    std::io::stdout().is_terminal()
}

/// A row cut to one line (the cut cell ends in `…`), for listings where `-v` shows
/// every line.
pub fn one_line(cells: Vec<String>) -> Row {
    let mut row = Row::from(cells);
    row.max_height(1);
    row
}

/// `text` broken at spaces into lines of at most `width` columns, every line after
/// the first indented by `indent` spaces; a word longer than a line keeps a line.
pub fn wrap(text: &str, width: u16, indent: usize) -> String {
    let width = usize::from(width);
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let room = if out.is_empty() { width } else { width.saturating_sub(indent) };
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > room {
            if !out.is_empty() {
                out.push_str(&" ".repeat(indent));
            }
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !out.is_empty() {
        out.push_str(&" ".repeat(indent));
    }
    out.push_str(&line);
    out
}

/// Counter names with consecutive numbers joined into ranges: `PMD4 … PMD15` →
/// `PMD4-15`, `CCNT PMN0 PMN1` → `CCNT`, `PMN0-1`.
pub fn ranges<S: AsRef<str>>(names: &[S]) -> Vec<String> {
    let split = |name: &str| {
        let digits = name.len() - name.bytes().rev().take_while(u8::is_ascii_digit).count();
        let (prefix, number) = name.split_at(digits);
        (prefix.to_string(), number.parse::<u64>().ok())
    };
    let mut out: Vec<String> = Vec::new();
    let mut run: Option<(String, u64, u64)> = None;
    let flush = |run: &mut Option<(String, u64, u64)>, out: &mut Vec<String>| {
        if let Some((prefix, first, last)) = run.take() {
            out.push(if first == last { format!("{prefix}{first}") } else { format!("{prefix}{first}-{last}") });
        }
    };
    for name in names {
        match split(name.as_ref()) {
            (prefix, Some(n)) => match &mut run {
                Some((p, _, last)) if *p == prefix && *last + 1 == n => *last = n,
                _ => {
                    flush(&mut run, &mut out);
                    run = Some((prefix, n, n));
                }
            },
            _ => {
                flush(&mut run, &mut out);
                out.push(name.as_ref().to_string());
            }
        }
    }
    flush(&mut run, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_counters_become_ranges_and_the_rest_stay_names() {
        let pmd: Vec<String> = (4..16).map(|i| format!("PMD{i}")).collect();
        assert_eq!(ranges(&pmd), ["PMD4-15"]);
        assert_eq!(ranges(&["CCNT", "PMN0", "PMN1"]), ["CCNT", "PMN0-1"]);
        assert_eq!(ranges(&["PIC0", "PIC2", "PIC3"]), ["PIC0", "PIC2-3"]);
        assert_eq!(ranges(&["PMD4", "PMD5", "PMC6"]), ["PMD4-5", "PMC6"]);
        assert!(ranges::<&str>(&[]).is_empty());
    }

    #[test]
    fn wrapped_text_keeps_words_whole_and_indents_continuations() {
        assert_eq!(wrap("aa bb cc dd", 5, 2), "aa bb\n  cc\n  dd");
        assert_eq!(wrap("averyveryverylongword x", 5, 0), "averyveryverylongword\nx");
        assert_eq!(wrap("", 10, 2), "");
    }

    #[test]
    fn a_table_fits_its_width_and_keeps_whole_columns_whole() {
        let mut t = table(&["event", "description"], 40);
        t.add_row(one_line(vec!["A_RATHER_LONG_EVENT_NAME".into(), "words ".repeat(30)]));
        let text = render(t, &[0]);
        assert!(text.lines().all(|l| l.chars().count() <= 40), "{text}");
        assert!(text.contains("A_RATHER_LONG_EVENT_NAME"), "{text}");
        assert_eq!(text.lines().count(), 3, "{text}");
    }
}
