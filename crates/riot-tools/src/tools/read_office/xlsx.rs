//! A workbook's sheets as tables with column letters and row numbers,
//! read with calamine.

use std::fmt::Write as _;
use std::io::Cursor;

use super::{
    CellRange, Converted, MAX_PART_BYTES, MAX_TEXT_CHARS, OfficeError, cell_name, column_name,
    plural, table_cell,
};

/// Rows of a sheet one Read shows at most, however short they are.
const MAX_ROWS_PER_READ: u32 = 2000;

/// Refuses a package with a part over `limit` bytes uncompressed, before
/// a reader that takes the zip itself (calamine) inflates it: the sizes
/// the zip declares are what its reader lets out.
pub(super) fn check_part_sizes(bytes: &[u8], limit: u64) -> Result<(), OfficeError> {
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).map_err(OfficeError::NotAPackage)?;
    for i in 0..zip.len() {
        let part = zip
            .by_index_raw(i)
            .map_err(|source| OfficeError::PartEntry {
                name: i.to_string(),
                source,
            })?;
        if part.size() > limit {
            let name = part
                .name()
                .map_or_else(|_| format!("#{i}"), |n| n.into_owned());
            return Err(OfficeError::PartTooLarge { name, limit });
        }
    }
    Ok(())
}

pub(super) fn workbook(
    bytes: Vec<u8>,
    display: &str,
    want: Option<&CellRange>,
) -> Result<Converted, OfficeError> {
    use calamine::Reader as _;
    check_part_sizes(&bytes, MAX_PART_BYTES)?;
    let mut book = calamine::Xlsx::new(Cursor::new(bytes)).map_err(OfficeError::Workbook)?;
    let names = book.sheet_names();
    if names.is_empty() {
        return Err(OfficeError::NoSheets);
    }
    let chosen: Vec<String> = match want.and_then(|w| w.sheet.as_ref()) {
        Some(sheet) => {
            let Some(found) = names.iter().find(|n| n.eq_ignore_ascii_case(sheet)) else {
                return Err(OfficeError::NoSuchSheet {
                    sheet: sheet.clone(),
                    sheets: names,
                });
            };
            vec![found.clone()]
        }
        // Cells alone are the first sheet's.
        None if want.is_some_and(|w| w.cells.is_some()) => vec![names[0].clone()],
        None => names.clone(),
    };
    let cells = want.and_then(|w| w.cells);
    let mut text = format!(
        "{display} (workbook, {} sheet{}: {}):\n",
        names.len(),
        plural(names.len()),
        names
            .iter()
            .map(|n| format!("{n:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut summaries = Vec::new();
    let mut left: Vec<String> = Vec::new();
    for (i, name) in chosen.iter().enumerate() {
        if text.len() >= MAX_TEXT_CHARS {
            left.push(name.clone());
            continue;
        }
        let range = book
            .worksheet_range(name)
            .map_err(|source| OfficeError::Sheet {
                name: name.clone(),
                source,
            })?;
        let room = MAX_TEXT_CHARS - text.len();
        let (sheet_text, summary, cut) = sheet(name, &range, cells, room);
        text.push('\n');
        text.push_str(&sheet_text);
        summaries.push(summary);
        if cut && i + 1 < chosen.len() {
            left.extend(chosen[i + 1..].iter().cloned());
            break;
        }
    }
    if !left.is_empty() {
        let _ = write!(
            text,
            "\n(Not shown: {}. Read each with range=\"SHEET\".)",
            left.iter()
                .map(|n| format!("sheet {n:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(Converted {
        text,
        summary: summaries.join("; "),
    })
}

/// One sheet as a table with column letters and row numbers, within
/// `room` characters: (text, summary, whether it was cut).
fn sheet(
    name: &str,
    range: &calamine::Range<calamine::Data>,
    want: Option<((u32, u32), (u32, u32))>,
    room: usize,
) -> (String, String, bool) {
    let (Some(first), Some(last)) = (range.start(), range.end()) else {
        return (
            format!("## Sheet {name:?}: empty\n"),
            format!("{name}: empty"),
            false,
        );
    };
    let extent = format!("{}:{}", cell_name(first), cell_name(last));
    let (top, bottom) = match want {
        Some((a, b)) => (
            (a.0.max(first.0), a.1.max(first.1)),
            (b.0.min(last.0), b.1.min(last.1)),
        ),
        None => (first, last),
    };
    if top.0 > bottom.0 || top.1 > bottom.1 {
        return (
            format!("## Sheet {name:?} ({extent}): nothing in the range asked for\n"),
            format!("{name}: {extent}"),
            false,
        );
    }
    let columns: Vec<u32> = (top.1..=bottom.1).collect();
    let mut out = format!("## Sheet {name:?} ({extent})\n\n|   |");
    for c in &columns {
        let _ = write!(out, " {} |", column_name(*c));
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(columns.len()));
    out.push('\n');
    let mut shown_last = None;
    let mut rows_shown = 0u32;
    let mut cut_at = None;
    for row in top.0..=bottom.0 {
        let values: Vec<String> = columns
            .iter()
            .map(|c| {
                range
                    .get_value((row, *c))
                    .map(cell_text)
                    .unwrap_or_default()
            })
            .collect();
        if values.iter().all(String::is_empty) {
            continue;
        }
        let mut line = format!("| {} |", row + 1);
        for v in &values {
            let _ = write!(line, " {} |", table_cell(v));
        }
        line.push('\n');
        if rows_shown >= MAX_ROWS_PER_READ || (out.len() + line.len() > room && rows_shown > 0) {
            cut_at = Some(row);
            break;
        }
        out.push_str(&line);
        rows_shown += 1;
        shown_last = Some(row);
    }
    let summary = format!("{name}: {extent}");
    let Some(next) = cut_at else {
        return (out, summary, false);
    };
    let shown = shown_last.map_or(String::new(), |r| format!("rows {}-{} ", top.0 + 1, r + 1));
    let span = shown_last.map_or(MAX_ROWS_PER_READ, |r| r - top.0 + 1);
    let until = (next + span - 1).min(bottom.0);
    let _ = write!(
        out,
        "\n(Sheet {name:?} is cut: {shown}of {} shown; one Read shows at most {MAX_ROWS_PER_READ} rows and {MAX_TEXT_CHARS} characters. Continue with range=\"{}!{}:{}\".)\n",
        bottom.0 + 1,
        quote_sheet(name),
        cell_name((next, top.1)),
        cell_name((until, bottom.1))
    );
    (out, summary, true)
}

fn quote_sheet(name: &str) -> String {
    if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        name.to_owned()
    } else {
        format!("'{}'", name.replace('\'', "''"))
    }
}

/// A cell's value as shown: numbers without a needless `.0`, dates as
/// ISO dates.
fn cell_text(value: &calamine::Data) -> String {
    use calamine::Data;
    match value {
        Data::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{f:.0}"),
        Data::DateTime(d) if d.is_datetime() => excel_date(d.as_f64()),
        other => other.to_string(),
    }
}

/// An Excel serial date (days since 1899-12-30, the 1900 date system) as
/// `YYYY-MM-DD`, with `HH:MM:SS` when it has a time of day.
pub(super) fn excel_date(serial: f64) -> String {
    if !serial.is_finite() || !(0.0..3_000_000.0).contains(&serial) {
        return serial.to_string();
    }
    // The integer part of a finite serial in range fits in i64.
    #[allow(clippy::cast_possible_truncation)]
    let days = serial.trunc() as i64;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let seconds = ((serial - serial.trunc()) * 86_400.0).round() as u64;
    // Serial 25,569 is 1970-01-01.
    let (y, m, d) = riot_protocol::civil_from_days(days - 25_569);
    let date = format!("{y:04}-{m:02}-{d:02}");
    if seconds == 0 || seconds >= 86_400 {
        date
    } else {
        format!(
            "{date} {:02}:{:02}:{:02}",
            seconds / 3600,
            seconds / 60 % 60,
            seconds % 60
        )
    }
}
