//! Read on a PDF: the text of a range of pages (docs/design.md §6.4).
//!
//! The text is extracted with `lopdf` on a blocking thread (parsing is CPU
//! work, and a panic inside the parser of a malformed file becomes a clear
//! error instead of taking the session down). Pages are sent as text only;
//! no document block is sent to models that could take one.

use std::path::Path;

use riot_protocol::{ToolContext, ToolOutcome, UiPayload};

/// Pages one Read returns at most.
pub const MAX_PAGES_PER_READ: u32 = 20;
/// A PDF with more pages than this needs a `pages` range.
pub const MAX_PAGES_WITHOUT_RANGE: u32 = 10;
/// PDFs over this size are refused before parsing.
pub const MAX_PDF_BYTES: u64 = 64 * 1024 * 1024;
/// Decompressed content of one page at most (a bound on a zip bomb).
const MAX_PAGE_CONTENT_BYTES: usize = 32 * 1024 * 1024;
/// Characters of extracted text one Read returns at most (as for text
/// files: [`crate::tools::read::MAX_OUTPUT_CHARS`]).
const MAX_TEXT_CHARS: usize = crate::tools::read::MAX_OUTPUT_CHARS - 400;

/// Whether Read treats `path` as a PDF (by its extension).
pub(crate) fn is_pdf(path: &str) -> bool {
    path.rsplit_once('.')
        .is_some_and(|(_, ext)| ext.eq_ignore_ascii_case("pdf"))
}

/// A 1-based, inclusive page range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PageRange {
    pub first: u32,
    pub last: u32,
}

/// Parses `"3"` or `"1-5"`; the error is the sentence the model reads.
pub(crate) fn parse_pages(pages: &str) -> Result<PageRange, String> {
    let bad = || {
        format!(
            "`pages` must be one page (\"3\") or a range (\"1-5\"), not {pages:?}. Pages are numbered from 1."
        )
    };
    let number = |s: &str| -> Result<u32, String> {
        let s = s.trim();
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        match s.parse::<u32>() {
            Ok(0) | Err(_) => Err(bad()),
            Ok(n) => Ok(n),
        }
    };
    let range = match pages.split_once('-') {
        None => {
            let n = number(pages)?;
            PageRange { first: n, last: n }
        }
        Some((a, b)) => PageRange {
            first: number(a)?,
            last: number(b)?,
        },
    };
    if range.last < range.first {
        return Err(format!(
            "`pages` {pages:?} ends before it starts. Give the first page, then the last (\"{}-{}\").",
            range.last, range.first
        ));
    }
    if range.last - range.first + 1 > MAX_PAGES_PER_READ {
        return Err(format!(
            "`pages` {pages:?} asks for {} pages; one Read returns at most {MAX_PAGES_PER_READ}. Read \"{}-{}\" first, then continue.",
            range.last - range.first + 1,
            range.first,
            range.first + MAX_PAGES_PER_READ - 1
        ));
    }
    Ok(range)
}

/// What the blocking extraction found.
enum Extracted {
    /// The PDF has `total` pages and needs a range to be read.
    NeedsRange { total: u32 },
    /// The range starts past the last page.
    PastEnd { total: u32 },
    Pages {
        total: u32,
        range: PageRange,
        /// Each page's number and text.
        texts: Vec<(u32, String)>,
    },
}

/// Page count and the text of the pages asked for (`None`: the whole
/// document when it is short).
fn extract(bytes: &[u8], pages: Option<PageRange>) -> Result<Extracted, String> {
    let doc = lopdf::Document::load_mem(bytes).map_err(|e| e.to_string())?;
    if doc.is_encrypted() {
        return Err("it is encrypted".to_owned());
    }
    let numbers: Vec<u32> = doc.get_pages().keys().copied().collect();
    let total = u32::try_from(numbers.len()).unwrap_or(u32::MAX);
    let range = match pages {
        Some(r) if r.first > total => return Ok(Extracted::PastEnd { total }),
        Some(r) => PageRange {
            first: r.first,
            last: r.last.min(total),
        },
        None if total > MAX_PAGES_WITHOUT_RANGE => return Ok(Extracted::NeedsRange { total }),
        None => PageRange {
            first: 1,
            last: total,
        },
    };
    let mut texts = Vec::new();
    for page in range.first..=range.last {
        let text = doc
            .extract_text_with_limit(&[page], MAX_PAGE_CONTENT_BYTES)
            .map_err(|e| format!("page {page} could not be read ({e})"))?;
        texts.push((page, text));
    }
    Ok(Extracted::Pages {
        total,
        range,
        texts,
    })
}

/// Read's answer for a PDF at `path` (already known to be a file of
/// `len` bytes).
pub(crate) async fn read(
    ctx: &ToolContext,
    path: &Path,
    display: String,
    len: u64,
    pages: Option<&str>,
) -> ToolOutcome {
    let range = match pages.map(parse_pages).transpose() {
        Ok(r) => r,
        Err(message) => return ToolOutcome::failed(message),
    };
    if len > MAX_PDF_BYTES {
        return ToolOutcome::failed(format!(
            "{display} is {} MB, over the {} MB limit for PDFs. Do not read it; ask the person for the part you need.",
            len / (1024 * 1024),
            MAX_PDF_BYTES / (1024 * 1024)
        ));
    }
    let bytes = match ctx.env.fs.read(path).await {
        Ok(b) => b,
        Err(e) => return ToolOutcome::failed(format!("{display} could not be read ({e}).")),
    };
    let extracted = match tokio::task::spawn_blocking(move || extract(&bytes, range)).await {
        Ok(Ok(x)) => x,
        Ok(Err(reason)) => {
            return ToolOutcome::failed(format!(
                "{display} could not be read as a PDF: {reason}. Check that it is a valid, unencrypted PDF."
            ));
        }
        Err(_) => {
            return ToolOutcome::failed(format!(
                "{display} could not be read as a PDF: the file is malformed. Check that it is a valid, unencrypted PDF."
            ));
        }
    };
    match extracted {
        Extracted::NeedsRange { total } => ToolOutcome::failed(format!(
            "{display} is a PDF of {total} pages, too many to read at once. Read a range with `pages` (e.g. pages=\"1-{}\"); at most {MAX_PAGES_PER_READ} pages a call.",
            MAX_PAGES_PER_READ.min(total)
        )),
        Extracted::PastEnd { total } => ToolOutcome::failed(format!(
            "`pages` starts past the end: {display} has {total} page{}. Use pages between 1 and {total}.",
            if total == 1 { "" } else { "s" }
        )),
        Extracted::Pages {
            total,
            range,
            texts,
        } => {
            let (out, shown_last) = render(&display, total, range, &texts);
            ToolOutcome::text(
                out,
                Some(UiPayload::PdfRead {
                    path: display,
                    first_page: range.first,
                    last_page: shown_last,
                    total_pages: total,
                }),
            )
        }
    }
}

/// The text the model reads; returns it with the last page shown whole.
fn render(display: &str, total: u32, range: PageRange, texts: &[(u32, String)]) -> (String, u32) {
    let mut body = String::new();
    let mut chars = 0usize;
    let mut shown_last = range.first;
    let mut cut = None;
    for (page, text) in texts {
        let text = text.trim_end();
        let text = if text.trim().is_empty() {
            "(no text on this page: it may be a scanned image)"
        } else {
            text
        };
        let block = format!("\n--- Page {page} ---\n{text}\n");
        let n = block.chars().count();
        if chars + n > MAX_TEXT_CHARS && *page > range.first {
            cut = Some(*page);
            break;
        }
        if n > MAX_TEXT_CHARS {
            body.extend(block.chars().take(MAX_TEXT_CHARS));
            body.push_str("\n… [page cut]\n");
        } else {
            body.push_str(&block);
        }
        chars += n;
        shown_last = *page;
    }
    let mut out = if range.first == shown_last {
        format!("{display}: page {} of {total} (PDF text).\n", range.first)
    } else {
        format!(
            "{display}: pages {}-{shown_last} of {total} (PDF text).\n",
            range.first
        )
    };
    out.push_str(&body);
    if let Some(next) = cut {
        out.push_str(&format!(
            "\n(One Read shows at most {MAX_TEXT_CHARS} characters. Continue with pages=\"{next}-{}\".)",
            range.last
        ));
    } else if shown_last < total {
        out.push_str(&format!(
            "\n(Continue with pages=\"{}-{}\".)",
            shown_last + 1,
            (shown_last + MAX_PAGES_PER_READ).min(total)
        ));
    }
    (out, shown_last)
}

#[cfg(test)]
#[path = "read_pdf_tests.rs"]
mod tests;
