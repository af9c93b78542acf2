use riot_protocol::file_state::content_hash;
use std::path::Path;

use riot_protocol::{FileState, ToolOutcome};

use super::*;
use crate::testing::{TempProject, text_of};

fn input(path: &str, offset: Option<u64>, limit: Option<u64>) -> ReadInput {
    ReadInput {
        file_path: path.into(),
        offset,
        limit,
        pages: None,
        range: None,
    }
}

#[tokio::test]
async fn shows_numbered_lines_cat_n_style_and_records_a_full_view() {
    let p = TempProject::new();
    p.write("a.txt", "first\n\tsecond\n");
    let out = Read.call(input("a.txt", None, None), &p.ctx()).await;
    assert_eq!(text_of(&out), "     1\tfirst\n     2\t\tsecond");
    let state = p.env.file_state.get(&p.path("a.txt")).unwrap();
    assert_eq!(state.view, FileView::Full);
    assert_eq!(state.content_hash, content_hash(b"first\n\tsecond\n"));
    let ToolOutcome::Ok { ui_payload, .. } = out else {
        panic!("read failed")
    };
    assert_eq!(
        ui_payload,
        Some(UiPayload::FileRead {
            path: "a.txt".into(),
            start_line: 1,
            lines: 2,
            total_lines: 2,
            truncated: false
        })
    );
}

#[tokio::test]
async fn crlf_and_bom_are_not_shown_as_content() {
    let p = TempProject::new();
    p.write("w.txt", b"\xef\xbb\xbfone\r\ntwo\r\n");
    let out = Read.call(input("w.txt", None, None), &p.ctx()).await;
    assert_eq!(text_of(&out), "     1\tone\n     2\ttwo");
}

#[tokio::test]
async fn a_range_states_the_cut_and_ranges_accumulate() {
    let p = TempProject::new();
    let body: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    p.write("r.txt", &body);
    let out = Read.call(input("r.txt", Some(3), Some(2)), &p.ctx()).await;
    assert_eq!(
        text_of(&out),
        "     3\tline 3\n     4\tline 4\n\n(Showing lines 3-4 of 10. Continue with offset=5.)"
    );
    Read.call(input("r.txt", Some(5), Some(3)), &p.ctx()).await;
    let state: FileState = p.env.file_state.get(&p.path("r.txt")).unwrap();
    assert_eq!(
        state.view,
        FileView::Partial {
            ranges: vec![(3, 7)]
        }
    );
    let past = Read.call(input("r.txt", Some(11), None), &p.ctx()).await;
    assert_eq!(
        text_of(&past),
        "`offset` 11 is past the end: r.txt has 10 lines. Use an offset between 1 and 10."
    );
}

#[tokio::test]
async fn binary_and_invalid_utf8_are_refused_and_not_recorded() {
    let p = TempProject::new();
    p.write("bin.dat", b"ab\0cd");
    p.write("latin1.txt", b"caf\xe9\n");
    let bin = Read.call(input("bin.dat", None, None), &p.ctx()).await;
    assert!(bin.is_failed());
    assert!(
        text_of(&bin).contains("binary file (it contains a NUL byte at offset 2)"),
        "{}",
        text_of(&bin)
    );
    let latin = Read.call(input("latin1.txt", None, None), &p.ctx()).await;
    assert!(
        text_of(&latin).contains("is not valid UTF-8 (invalid byte sequence at byte offset 3)")
    );
    assert!(
        p.env.file_state.get(&p.path("latin1.txt")).is_none(),
        "a refused file is not 'read'"
    );
}

#[tokio::test]
async fn large_files_need_a_range() {
    let p = TempProject::new();
    let big = "x".repeat(100) + "\n";
    p.write("big.txt", big.repeat(3000)); // ~300 KB
    let whole = Read.call(input("big.txt", None, None), &p.ctx()).await;
    assert!(
        text_of(&whole).contains("over the 256 KB limit"),
        "{}",
        text_of(&whole)
    );
    let ranged = Read
        .call(input("big.txt", Some(1), Some(2)), &p.ctx())
        .await;
    assert!(!ranged.is_failed());
    assert!(text_of(&ranged).ends_with("(Showing lines 1-2 of 3000. Continue with offset=3.)"));
}

#[tokio::test]
async fn missing_files_directories_and_empty_files_say_what_they_are() {
    let p = TempProject::new();
    p.write("dir/inner.txt", "");
    let missing = Read.call(input("nope.txt", None, None), &p.ctx()).await;
    assert_eq!(
        text_of(&missing),
        "nope.txt does not exist. Check the path; Glob finds files by name."
    );
    let dir = Read.call(input("dir", None, None), &p.ctx()).await;
    assert!(text_of(&dir).starts_with("dir is a directory"));
    let empty = Read
        .call(input("dir/inner.txt", None, None), &p.ctx())
        .await;
    assert_eq!(
        text_of(&empty),
        "dir/inner.txt exists but is empty (0 lines)."
    );
}

#[tokio::test]
async fn zero_offset_and_limit_are_rejected_before_running() {
    let p = TempProject::new();
    let e = Read
        .validate_input(&input("a", Some(0), None), &p.ctx())
        .await
        .unwrap_err();
    assert!(e.message.contains("1-based"));
    let e = Read
        .validate_input(&input("a", None, Some(0)), &p.ctx())
        .await
        .unwrap_err();
    assert!(e.message.contains("at least 1"));
}

/// One big file in memory whose whole-file `read` fails the test: Read
/// must stream it through `read_range`. Records the largest range asked.
#[derive(Debug)]
struct StreamOnlyFs {
    path: std::path::PathBuf,
    bytes: Vec<u8>,
    largest_range: std::sync::atomic::AtomicUsize,
    ranges: std::sync::atomic::AtomicUsize,
}

/// Files above this size must never be read whole.
const WHOLE_READ_LIMIT: usize = 1024 * 1024;

impl StreamOnlyFs {
    fn new(path: &str, bytes: Vec<u8>) -> Self {
        Self {
            path: path.into(),
            bytes,
            largest_range: Default::default(),
            ranges: Default::default(),
        }
    }

    fn check(&self, path: &std::path::Path) -> std::io::Result<()> {
        if path == self.path {
            Ok(())
        } else {
            Err(std::io::ErrorKind::NotFound.into())
        }
    }
}

#[async_trait::async_trait]
impl riot_protocol::FileSystem for StreamOnlyFs {
    async fn read(&self, path: &std::path::Path) -> std::io::Result<Vec<u8>> {
        self.check(path)?;
        assert!(
            self.bytes.len() <= WHOLE_READ_LIMIT,
            "the whole-file `read` was called for a {}-byte file",
            self.bytes.len()
        );
        Ok(self.bytes.clone())
    }
    async fn read_range(
        &self,
        path: &std::path::Path,
        offset: u64,
        len: usize,
    ) -> std::io::Result<Vec<u8>> {
        use std::sync::atomic::Ordering;
        self.check(path)?;
        self.largest_range.fetch_max(len, Ordering::SeqCst);
        self.ranges.fetch_add(1, Ordering::SeqCst);
        let start = (offset as usize).min(self.bytes.len());
        let end = start.saturating_add(len).min(self.bytes.len());
        Ok(self.bytes[start..end].to_vec())
    }
    async fn metadata(&self, path: &std::path::Path) -> std::io::Result<riot_protocol::FileMeta> {
        self.check(path)?;
        Ok(riot_protocol::FileMeta {
            kind: riot_protocol::FileKind::File,
            len: self.bytes.len() as u64,
            modified_ms: Some(7),
            mode: None,
        })
    }
    async fn symlink_metadata(
        &self,
        path: &std::path::Path,
    ) -> std::io::Result<riot_protocol::FileMeta> {
        self.metadata(path).await
    }
    async fn write_atomic(&self, _: &std::path::Path, _: &[u8]) -> std::io::Result<()> {
        Err(std::io::ErrorKind::PermissionDenied.into())
    }
    async fn create_dir_all(&self, _: &std::path::Path) -> std::io::Result<()> {
        Err(std::io::ErrorKind::PermissionDenied.into())
    }
    async fn remove_file(&self, _: &std::path::Path) -> std::io::Result<()> {
        Err(std::io::ErrorKind::PermissionDenied.into())
    }
    async fn canonicalize(&self, path: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
        self.check(path)?;
        Ok(path.to_path_buf())
    }
    async fn read_dir(&self, _: &std::path::Path) -> std::io::Result<Vec<riot_protocol::DirEntry>> {
        Err(std::io::ErrorKind::NotFound.into())
    }
}

fn stream_only_ctx(fs: std::sync::Arc<StreamOnlyFs>) -> ToolContext {
    let env = riot_protocol::ToolEnv::new(
        "/project".into(),
        "/project/.riot-spill".into(),
        fs,
        std::sync::Arc::new(crate::testing::NullProc),
        std::sync::Arc::new(crate::testing::FixedClock::new()),
        std::sync::Arc::new(riot_protocol::SequentialIds::default()),
    );
    crate::testing::context(std::sync::Arc::new(env))
}

/// `n` lines of `width` characters: `000001 xxx…`.
fn numbered_body(n: usize, width: usize) -> String {
    let mut body = String::with_capacity(n * (width + 1));
    for i in 1..=n {
        let label = format!("{i:06} ");
        body.push_str(&label);
        body.push_str(&"x".repeat(width - label.len()));
        body.push('\n');
    }
    body
}

#[tokio::test]
async fn a_huge_limit_on_a_large_file_is_cut_at_the_output_cap_with_where_to_continue() {
    // ~24 MB on disk: 240,000 lines of 99 characters and a newline.
    let p = TempProject::new();
    let body = numbered_body(240_000, 99);
    p.write("big.log", &body);
    let out = Read
        .call(input("big.log", None, Some(100_000_000)), &p.ctx())
        .await;
    let text = text_of(&out);
    // A shown line is 6 + 1 + 99 characters, with a newline between: n
    // lines take 107n - 1, and 932 is the most that fit in the 99,800 of
    // MAX_OUTPUT_CHARS - NOTE_ROOM.
    let shown = (MAX_OUTPUT_CHARS - NOTE_ROOM + 1) / 107;
    assert_eq!(shown, 932);
    assert!(text.starts_with("     1\t000001 xxx"), "{}", &text[..40]);
    let note = "\n\n(Showing lines 1-932 of 240000: one Read shows at most 100000 characters. Continue with offset=933.)";
    assert!(
        text.ends_with(&format!("   932\t000932 {}{note}", "x".repeat(92))),
        "{}",
        &text[text.len() - 300..]
    );
    assert!(text.chars().count() <= MAX_OUTPUT_CHARS);
    let state = p.env.file_state.get(&p.path("big.log")).unwrap();
    assert_eq!(
        state.content_hash,
        content_hash(body.as_bytes()),
        "the whole file is hashed for Edit's freshness check"
    );
    assert_eq!(
        state.view,
        FileView::Partial {
            ranges: vec![(1, 932)]
        }
    );
    let ToolOutcome::Ok { ui_payload, .. } = out else {
        panic!("read failed")
    };
    assert_eq!(
        ui_payload,
        Some(UiPayload::FileRead {
            path: "big.log".into(),
            start_line: 1,
            lines: 932,
            total_lines: 240_000,
            truncated: true
        })
    );

    // The continuation reads on from there, and the ranges add up.
    let next = Read
        .call(input("big.log", Some(933), Some(100_000_000)), &p.ctx())
        .await;
    let next = text_of(&next);
    assert!(next.starts_with("   933\t000933 xxx"), "{}", &next[..40]);
    assert!(next.ends_with(
        "\n\n(Showing lines 933-1864 of 240000: one Read shows at most 100000 characters. Continue with offset=1865.)"
    ));
    let state = p.env.file_state.get(&p.path("big.log")).unwrap();
    assert_eq!(
        state.view,
        FileView::Partial {
            ranges: vec![(1, 1864)]
        }
    );
}

#[tokio::test]
async fn a_large_file_is_streamed_in_chunks_never_read_whole() {
    let body = numbered_body(60_000, 99); // 6 MB
    let fs = std::sync::Arc::new(StreamOnlyFs::new(
        "/project/big.txt",
        body.clone().into_bytes(),
    ));
    let ctx = stream_only_ctx(std::sync::Arc::clone(&fs));
    let out = Read
        .call(input("big.txt", Some(59_999), Some(u64::MAX)), &ctx)
        .await;
    assert_eq!(
        text_of(&out),
        format!(
            " 59999\t059999 {x}\n 60000\t060000 {x}\n\n(Showing lines 59999-60000 of 60000: the end of the file.)",
            x = "x".repeat(92)
        )
    );
    let largest = fs.largest_range.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(largest, crate::tools::read_scan::CHUNK_BYTES);
    // 6,000,000 bytes in 256 KiB chunks: 23 with data, one empty at the end.
    assert_eq!(fs.ranges.load(std::sync::atomic::Ordering::SeqCst), 24);
    let state = ctx
        .env
        .file_state
        .get(Path::new("/project/big.txt"))
        .unwrap();
    assert_eq!(state.content_hash, content_hash(body.as_bytes()));
    assert_eq!(state.mtime_ms, Some(7));
}

#[tokio::test]
async fn text_checks_hold_across_chunk_boundaries() {
    use crate::tools::read_scan::CHUNK_BYTES;
    let p = TempProject::new();
    // A BOM, a first line up to the byte before the boundary, then a
    // two-byte character split across the first two chunks, CRLF endings.
    let mut bytes = b"\xef\xbb\xbf".to_vec();
    bytes.extend(std::iter::repeat_n(b'a', CHUNK_BYTES - 3 - 3));
    bytes.extend(b"\r\n");
    assert_eq!(bytes.len(), CHUNK_BYTES - 1);
    bytes.extend("é is split\r\nlast".as_bytes());
    p.write("split.txt", &bytes);
    let out = Read.call(input("split.txt", Some(2), None), &p.ctx()).await;
    assert_eq!(
        text_of(&out),
        "     2\té is split\n     3\tlast\n\n(Showing lines 2-3 of 3: the end of the file.)"
    );
    let first = Read.call(input("split.txt", None, Some(1)), &p.ctx()).await;
    let expected_cut = format!(
        "     1\t{}… [line cut: {} characters, first 2000 shown]\n\n(Showing lines 1-1 of 3. Continue with offset=2.)",
        "a".repeat(2000),
        CHUNK_BYTES - 6
    );
    assert_eq!(text_of(&first), expected_cut, "no BOM, no \\r in the count");
    assert_eq!(
        p.env
            .file_state
            .get(&p.path("split.txt"))
            .unwrap()
            .content_hash,
        content_hash(&bytes)
    );

    // Invalid UTF-8 in the second chunk is refused with its file offset…
    let mut bad = vec![b'a'; CHUNK_BYTES + 10];
    bad[CHUNK_BYTES + 4] = 0xff;
    p.write("bad.txt", &bad);
    let out = Read.call(input("bad.txt", None, Some(1)), &p.ctx()).await;
    assert!(
        text_of(&out).contains(&format!(
            "invalid byte sequence at byte offset {}",
            CHUNK_BYTES + 4
        )),
        "{}",
        text_of(&out)
    );
    // …a character cut off by the end of the file too…
    p.write("cut.txt", b"ok\n\xc3");
    let out = Read.call(input("cut.txt", None, None), &p.ctx()).await;
    assert!(text_of(&out).contains("invalid byte sequence at byte offset 3"));
    // …and a NUL after it still makes the file binary, as `decode` says.
    bad[CHUNK_BYTES + 8] = 0;
    p.write("bad.txt", &bad);
    let out = Read.call(input("bad.txt", None, Some(1)), &p.ctx()).await;
    assert!(
        text_of(&out).contains(&format!(
            "binary file (it contains a NUL byte at offset {})",
            CHUNK_BYTES + 8
        )),
        "{}",
        text_of(&out)
    );
}
