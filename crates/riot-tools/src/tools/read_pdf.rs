//! Read on a PDF: a range of pages (docs/design.md §6.4).
//!
//! The file is parsed with `lopdf` on a blocking thread (parsing is CPU
//! work, and a panic inside the parser of a malformed file becomes a clear
//! error instead of taking the session down). Each page's text is
//! extracted, and a smaller PDF holding only the pages shown is built
//! beside it. The result carries both as a document block: a model that
//! reads documents gets the pages themselves, every other model gets the
//! text. When that PDF cannot be built, or is too large, the result is the
//! text alone.

use std::path::Path;

use base64::Engine as _;
use riot_protocol::{ToolContext, ToolOutcome, ToolResultContent, UiPayload};

/// Pages one Read returns at most.
pub const MAX_PAGES_PER_READ: u32 = 20;
/// A PDF with more pages than this needs a `pages` range.
pub const MAX_PAGES_WITHOUT_RANGE: u32 = 10;
/// PDFs over this size are refused before parsing.
pub const MAX_PDF_BYTES: u64 = 64 * 1024 * 1024;
/// Decompressed content of one page at most (a bound on a zip bomb).
const MAX_PAGE_CONTENT_BYTES: usize = 32 * 1024 * 1024;
/// Characters of extracted text one Read returns at most (as for text
/// files: [`crate::tools::read_limits::MAX_OUTPUT_CHARS`]).
const MAX_TEXT_CHARS: usize = crate::tools::read_limits::MAX_OUTPUT_CHARS - 400;
/// The PDF of the pages read is sent only up to this size. Its base64 form
/// (a third larger) stays well under Anthropic's 32 MB request limit.
pub const MAX_DOCUMENT_BYTES: usize = 20 * 1024 * 1024;
/// Catalog entries that can point at pages or content outside the range
/// kept; they are dropped from the smaller PDF, which needs none of them
/// to show its pages.
const CATALOG_ENTRIES_DROPPED: &[&[u8]] = &[
    b"Outlines",
    b"StructTreeRoot",
    b"MarkInfo",
    b"Names",
    b"Dests",
    b"OpenAction",
    b"AA",
    b"PageLabels",
    b"Threads",
];

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

/// Why a `pages` value is refused; the message is the sentence the model
/// reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PagesError {
    /// Not a page number or a range of them.
    #[error(
        "`pages` must be one page (\"3\") or a range (\"1-5\"), not {pages:?}. Pages are numbered from 1."
    )]
    Malformed { pages: String },
    /// The last page is before the first.
    #[error(
        "`pages` {pages:?} ends before it starts. Give the first page, then the last (\"{}-{}\").",
        .range.last,
        .range.first
    )]
    Backwards { pages: String, range: PageRange },
    /// More pages than one Read returns.
    #[error(
        "`pages` {pages:?} asks for {} pages; one Read returns at most {MAX_PAGES_PER_READ}. Read \"{}-{}\" first, then continue.",
        .range.last - .range.first + 1,
        .range.first,
        .range.first + MAX_PAGES_PER_READ - 1
    )]
    TooMany { pages: String, range: PageRange },
}

/// Parses `"3"` or `"1-5"`.
pub(crate) fn parse_pages(pages: &str) -> Result<PageRange, PagesError> {
    let bad = || PagesError::Malformed {
        pages: pages.to_owned(),
    };
    let number = |s: &str| -> Result<u32, PagesError> {
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
        return Err(PagesError::Backwards {
            pages: pages.to_owned(),
            range,
        });
    }
    if range.last - range.first + 1 > MAX_PAGES_PER_READ {
        return Err(PagesError::TooMany {
            pages: pages.to_owned(),
            range,
        });
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
        /// The last page shown: the range's end unless the text was cut.
        shown_last: u32,
        text: Rendered,
        /// A PDF of exactly the pages shown, when one could be made.
        pdf: Option<Vec<u8>>,
    },
}

/// Why a PDF's pages could not be read; the message follows "could not be
/// read as a PDF: ".
#[derive(Debug, thiserror::Error)]
enum PdfError {
    /// The file does not parse as a PDF.
    #[error(transparent)]
    Load(lopdf::Error),
    /// The file is encrypted.
    #[error("it is encrypted")]
    Encrypted,
    /// One page's text could not be extracted.
    #[error("page {page} could not be read ({source})")]
    Page {
        page: u32,
        #[source]
        source: lopdf::Error,
    },
}

/// Page count, the text of the pages asked for (`None`: the whole document
/// when it is short) and a PDF of the pages shown.
fn extract(bytes: &[u8], display: &str, pages: Option<PageRange>) -> Result<Extracted, PdfError> {
    let mut doc = lopdf::Document::load_mem(bytes).map_err(PdfError::Load)?;
    if doc.is_encrypted() {
        return Err(PdfError::Encrypted);
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
            .map_err(|source| PdfError::Page { page, source })?;
        texts.push((page, text));
    }
    let (text, shown_last) = render(display, total, range, &texts);
    let pdf = if range.first == 1 && shown_last == total {
        (bytes.len() <= MAX_DOCUMENT_BYTES).then(|| bytes.to_vec())
    } else {
        // A panic in lopdf while cutting the file costs the document only:
        // the text is already extracted.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            keep_pages(&mut doc, total, range.first, shown_last, MAX_DOCUMENT_BYTES)
        }))
        .ok()
        .flatten()
    };
    Ok(Extracted::Pages {
        total,
        range,
        shown_last,
        text,
        pdf,
    })
}

/// `doc` cut down to pages `first..=last` and saved, or `None` when that
/// fails, the result does not hold exactly those pages, or it is over
/// `max_bytes`.
fn keep_pages(
    doc: &mut lopdf::Document,
    total: u32,
    first: u32,
    last: u32,
    max_bytes: usize,
) -> Option<Vec<u8>> {
    let others: Vec<u32> = (1..first).chain(last + 1..=total).collect();
    doc.delete_pages(&others);
    if let Ok(catalog) = doc.catalog_mut() {
        for key in CATALOG_ENTRIES_DROPPED {
            catalog.remove(key);
        }
    }
    doc.prune_objects();
    let mut out = Vec::new();
    doc.save_to(&mut out).ok()?;
    if out.len() > max_bytes {
        return None;
    }
    let check = lopdf::Document::load_mem(&out).ok()?;
    let kept = u32::try_from(check.get_pages().len()).ok()?;
    (kept == last - first + 1).then_some(out)
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
        Err(message) => return ToolOutcome::failed(message.to_string()),
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
    let shown = display.clone();
    let extracted = match tokio::task::spawn_blocking(move || extract(&bytes, &shown, range)).await
    {
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
            shown_last,
            text,
            pdf,
        } => {
            let ui_payload = Some(UiPayload::PdfRead {
                path: display,
                first_page: range.first,
                last_page: shown_last,
                total_pages: total,
            });
            let Some(pdf) = pdf else {
                return ToolOutcome::text(text.joined(), ui_payload);
            };
            let mut model_content = vec![
                ToolResultContent::text(text.header),
                ToolResultContent::pdf(
                    base64::engine::general_purpose::STANDARD.encode(pdf),
                    shown_last - range.first + 1,
                    text.pages,
                ),
            ];
            if let Some(note) = text.note {
                model_content.push(ToolResultContent::text(note));
            }
            ToolOutcome::Ok {
                model_content,
                ui_payload,
                side_messages: Vec::new(),
            }
        }
    }
}

/// The text the model reads, in three parts; joined by newlines they are
/// the whole text result.
#[derive(Debug)]
struct Rendered {
    /// Which pages these are, ending in a newline.
    header: String,
    /// Each page's text under its `--- Page N ---` line.
    pages: String,
    /// Where to continue, when pages are left.
    note: Option<String>,
}

impl Rendered {
    fn joined(self) -> String {
        let mut out = self.header;
        out.push('\n');
        out.push_str(&self.pages);
        if let Some(note) = self.note {
            out.push('\n');
            out.push_str(&note);
        }
        out
    }
}

/// The text the model reads; returns it with the last page shown whole.
fn render(display: &str, total: u32, range: PageRange, texts: &[(u32, String)]) -> (Rendered, u32) {
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
        let block = if body.is_empty() {
            block.trim_start_matches('\n').to_owned()
        } else {
            block
        };
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
    let header = if range.first == shown_last {
        format!("{display}: page {} of {total} (PDF text).\n", range.first)
    } else {
        format!(
            "{display}: pages {}-{shown_last} of {total} (PDF text).\n",
            range.first
        )
    };
    let note = if let Some(next) = cut {
        Some(format!(
            "(One Read shows at most {MAX_TEXT_CHARS} characters. Continue with pages=\"{next}-{}\".)",
            range.last
        ))
    } else if shown_last < total {
        Some(format!(
            "(Continue with pages=\"{}-{}\".)",
            shown_last + 1,
            (shown_last + MAX_PAGES_PER_READ).min(total)
        ))
    } else {
        None
    };
    (
        Rendered {
            header,
            pages: body,
            note,
        },
        shown_last,
    )
}

#[cfg(test)]
#[path = "read_pdf_tests.rs"]
mod tests;
