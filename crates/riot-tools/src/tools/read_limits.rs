//! How much one Read shows, shared by Read and the readers of each kind
//! of file it hands off to (notebooks, office documents, PDFs, the text
//! scanner), which sit below it.

/// Lines shown when no `limit` is given.
pub const DEFAULT_LIMIT: u64 = 2000;
/// Files over this size need an explicit range.
pub const MAX_WHOLE_FILE_BYTES: u64 = 256 * 1024;
/// Longer lines are cut in the output (the file is untouched).
pub const MAX_LINE_CHARS: usize = 2000;
/// Characters one Read returns at most, whatever `limit` asks: the file is
/// read in chunks and the range is cut here, with a note saying where to
/// continue. Half the aggregate budget of one message's results
/// (`scheduler::budget::MESSAGE_BUDGET_CHARS`), so a Read alone is never
/// spilled to a file (Read's own budget is unlimited: Read → spill file →
/// Read would loop).
pub const MAX_OUTPUT_CHARS: usize = 100_000;
