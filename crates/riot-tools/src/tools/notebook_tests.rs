use riot_protocol::{Tool, ToolOutcome};

use super::*;
use crate::freshness::code;
use crate::testing::{TempProject, text_of};
use crate::tools::read::{Read, ReadInput};

const INTRO: &str = r##"  {
   "cell_type": "markdown",
   "id": "intro",
   "metadata": {},
   "source": [
    "# Title\n",
    "Some text"
   ]
  }"##;

const C1: &str = r##"  {
   "cell_type": "code",
   "execution_count": 1,
   "id": "c1",
   "metadata": {
    "tags": []
   },
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "hello\n"
     ]
    },
    {
     "data": {
      "image/png": "iVBORw0KGgo=",
      "text/plain": [
       "<Figure>"
      ]
     },
     "metadata": {},
     "output_type": "display_data"
    }
   ],
   "source": [
    "print('héllo')"
   ]
  }"##;

const C2: &str = r##"  {
   "cell_type": "code",
   "execution_count": null,
   "id": "c2",
   "metadata": {},
   "outputs": [],
   "source": []
  }"##;

const TAIL: &str = r##"
 ],
 "metadata": {
  "kernelspec": {
   "display_name": "Python 3",
   "language": "python",
   "name": "python3"
  },
  "language_info": {
   "name": "python"
  }
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
"##;

/// A notebook as Jupyter writes it (one-space indent, sorted keys).
fn notebook(cells: &[&str]) -> String {
    format!("{{\n \"cells\": [\n{}{TAIL}", cells.join(",\n"))
}

fn read_input(path: &str) -> ReadInput {
    ReadInput {
        file_path: path.into(),
        offset: None,
        limit: None,
        pages: None,
        range: None,
    }
}

fn edit(cell_id: &str, source: &str, kind: Option<CellType>, mode: EditMode) -> NotebookEditInput {
    NotebookEditInput {
        notebook_path: "n.ipynb".into(),
        cell_id: cell_id.into(),
        new_source: source.into(),
        cell_type: kind,
        edit_mode: Some(mode),
    }
}

/// A project with the notebook, read.
async fn project(text: &str) -> TempProject {
    let p = TempProject::new();
    p.write("n.ipynb", text);
    let out = Read.call(read_input("n.ipynb"), &p.ctx()).await;
    assert!(matches!(out, ToolOutcome::Ok { .. }), "{}", text_of(&out));
    p
}

async fn run(p: &TempProject, input: NotebookEditInput) -> ToolOutcome {
    let ctx = p.ctx();
    if let Err(e) = NotebookEdit.validate_input(&input, &ctx).await {
        return ToolOutcome::failed(e.message);
    }
    NotebookEdit.call(input, &ctx).await
}

fn file(p: &TempProject) -> String {
    String::from_utf8(p.read("n.ipynb")).unwrap()
}

#[tokio::test]
async fn read_shows_each_cell_with_its_id_type_source_and_text_outputs() {
    let p = TempProject::new();
    p.write("n.ipynb", notebook(&[INTRO, C1, C2]));
    let out = Read.call(read_input("n.ipynb"), &p.ctx()).await;
    assert_eq!(
        text_of(&out),
        "n.ipynb: Jupyter notebook, 3 cells (python).\n\
         \n<cell id=\"intro\" type=\"markdown\">\n# Title\nSome text\n</cell>\n\
         \n<cell id=\"c1\" type=\"code\">\nprint('héllo')\n</cell>\n\
         <output>\nhello\n</output>\n\
         <output>\n[image output 1: image/png]\n<Figure>\n</output>\n\
         \n<cell id=\"c2\" type=\"code\">\n</cell>\n\n\
         Image output 1 (cell c1) is not shown: it is not a valid image/png image (unexpected end of file); the file may be corrupt or truncated."
    );
    let ToolOutcome::Ok { ui_payload, .. } = out else {
        panic!("read failed")
    };
    let cell = |id: &str, kind: &str, lines, outputs| riot_protocol::NotebookCell {
        id: id.into(),
        cell_type: kind.into(),
        lines,
        outputs,
    };
    assert_eq!(
        ui_payload,
        Some(riot_protocol::UiPayload::NotebookRead {
            path: "n.ipynb".into(),
            cells: vec![
                cell("intro", "markdown", 2, 0),
                cell("c1", "code", 1, 2),
                cell("c2", "code", 0, 0),
            ],
        })
    );
    // Read with a range shows the raw JSON lines instead.
    let raw = ReadInput {
        offset: Some(1),
        limit: Some(2),
        ..read_input("n.ipynb")
    };
    let out = Read.call(raw, &p.ctx()).await;
    assert!(
        text_of(&out).starts_with("     1\t{\n     2\t \"cells\": ["),
        "{}",
        text_of(&out)
    );
}

#[tokio::test]
async fn replace_rewrites_only_the_cell_and_clears_its_stale_outputs() {
    let original = notebook(&[INTRO, C1, C2]);
    let p = project(&original).await;
    let out = run(&p, edit("c1", "x = 1\nprint(x)\n", None, EditMode::Replace)).await;
    assert_eq!(
        text_of(&out),
        "Edited n.ipynb: replaced the source of cell c1."
    );
    let new_c1 = r##"  {
   "cell_type": "code",
   "execution_count": null,
   "id": "c1",
   "metadata": {
    "tags": []
   },
   "outputs": [],
   "source": [
    "x = 1\n",
    "print(x)\n"
   ]
  }"##;
    assert_eq!(file(&p), notebook(&[INTRO, new_c1, C2]));
    // The notebook is known as written: a second edit needs no new Read.
    let out = run(
        &p,
        edit(
            "intro",
            "# New title",
            Some(CellType::Markdown),
            EditMode::Replace,
        ),
    )
    .await;
    assert!(matches!(out, ToolOutcome::Ok { .. }), "{}", text_of(&out));
    let new_intro = "  {\n   \"cell_type\": \"markdown\",\n   \"id\": \"intro\",\n   \"metadata\": {},\n   \"source\": [\n    \"# New title\"\n   ]\n  }";
    assert_eq!(file(&p), notebook(&[new_intro, new_c1, C2]));
}

#[tokio::test]
async fn replace_with_another_type_drops_what_only_code_cells_carry() {
    let p = project(&notebook(&[INTRO, C1, C2])).await;
    let out = run(
        &p,
        edit("c2", "Notes", Some(CellType::Markdown), EditMode::Replace),
    )
    .await;
    assert!(matches!(out, ToolOutcome::Ok { .. }), "{}", text_of(&out));
    let md = "  {\n   \"cell_type\": \"markdown\",\n   \"id\": \"c2\",\n   \"metadata\": {},\n   \"source\": [\n    \"Notes\"\n   ]\n  }";
    assert_eq!(file(&p), notebook(&[INTRO, C1, md]));
}

#[tokio::test]
async fn insert_after_a_cell_and_at_the_top() {
    let p = project(&notebook(&[INTRO, C2])).await;
    let out = run(
        &p,
        edit("intro", "y = 2", Some(CellType::Code), EditMode::Insert),
    )
    .await;
    let text = text_of(&out);
    let id = text
        .strip_prefix("Edited n.ipynb: inserted code cell ")
        .and_then(|t| t.strip_suffix(" after cell intro."))
        .unwrap_or_else(|| panic!("{text}"))
        .to_owned();
    assert_eq!(id.len(), 8, "{id}");
    let new = format!(
        "  {{\n   \"cell_type\": \"code\",\n   \"execution_count\": null,\n   \"id\": \"{id}\",\n   \"metadata\": {{}},\n   \"outputs\": [],\n   \"source\": [\n    \"y = 2\"\n   ]\n  }}"
    );
    assert_eq!(file(&p), notebook(&[INTRO, &new, C2]));

    let out = run(
        &p,
        edit("", "Top", Some(CellType::Markdown), EditMode::Insert),
    )
    .await;
    let text = text_of(&out);
    let top_id = text
        .strip_prefix("Edited n.ipynb: inserted markdown cell ")
        .and_then(|t| t.strip_suffix(" at the top."))
        .unwrap_or_else(|| panic!("{text}"))
        .to_owned();
    assert_ne!(top_id, id);
    let top = format!(
        "  {{\n   \"cell_type\": \"markdown\",\n   \"id\": \"{top_id}\",\n   \"metadata\": {{}},\n   \"source\": [\n    \"Top\"\n   ]\n  }}"
    );
    assert_eq!(file(&p), notebook(&[&top, INTRO, &new, C2]));
}

#[tokio::test]
async fn insert_needs_a_cell_type() {
    let p = project(&notebook(&[INTRO])).await;
    let out = run(&p, edit("intro", "y", None, EditMode::Insert)).await;
    assert_eq!(
        text_of(&out),
        "Inserting a cell needs `cell_type` (\"code\" or \"markdown\")."
    );
    assert_eq!(file(&p), notebook(&[INTRO]));
}

#[tokio::test]
async fn delete_the_middle_the_last_and_the_only_cell() {
    let p = project(&notebook(&[INTRO, C1, C2])).await;
    let out = run(&p, edit("c1", "", None, EditMode::Delete)).await;
    assert_eq!(text_of(&out), "Edited n.ipynb: deleted cell c1.");
    assert_eq!(file(&p), notebook(&[INTRO, C2]));
    run(&p, edit("c2", "", None, EditMode::Delete)).await;
    assert_eq!(file(&p), notebook(&[INTRO]));
    run(&p, edit("intro", "", None, EditMode::Delete)).await;
    let empty = format!("{{\n \"cells\": []{}", &TAIL["\n ]".len()..]);
    assert_eq!(file(&p), empty);
    // And a cell goes back into the empty list laid out as Jupyter would.
    let out = run(
        &p,
        edit("", "# Again", Some(CellType::Markdown), EditMode::Insert),
    )
    .await;
    let text = text_of(&out);
    let id = text
        .strip_prefix("Edited n.ipynb: inserted markdown cell ")
        .and_then(|t| t.strip_suffix(" at the top."))
        .unwrap_or_else(|| panic!("{text}"))
        .to_owned();
    let cell = format!(
        "  {{\n   \"cell_type\": \"markdown\",\n   \"id\": \"{id}\",\n   \"metadata\": {{}},\n   \"source\": [\n    \"# Again\"\n   ]\n  }}"
    );
    assert_eq!(file(&p), notebook(&[&cell]));
}

#[tokio::test]
async fn a_notebook_not_read_or_changed_since_is_refused() {
    let p = TempProject::new();
    let original = notebook(&[INTRO, C1]);
    p.write("n.ipynb", &original);
    let input = edit("c1", "z", None, EditMode::Replace);
    let err = NotebookEdit
        .validate_input(&input, &p.ctx())
        .await
        .unwrap_err();
    assert_eq!(err.code, Some(code::NOT_READ), "{}", err.message);

    Read.call(read_input("n.ipynb"), &p.ctx()).await;
    let changed = notebook(&[INTRO, C1, C2]);
    p.write("n.ipynb", &changed);
    let err = NotebookEdit
        .validate_input(&input, &p.ctx())
        .await
        .unwrap_err();
    assert_eq!(err.code, Some(code::CHANGED_SINCE_READ), "{}", err.message);
    // call checks again, by content, and writes nothing.
    let out = NotebookEdit.call(input, &p.ctx()).await;
    assert!(matches!(out, ToolOutcome::Failed { .. }));
    assert!(text_of(&out).contains("has changed on disk since you last read it"));
    assert_eq!(file(&p), changed);
}

#[tokio::test]
async fn an_unknown_cell_names_the_cells_there_are() {
    let p = project(&notebook(&[INTRO, C1])).await;
    let out = run(&p, edit("nope", "z", None, EditMode::Replace)).await;
    assert_eq!(
        text_of(&out),
        "n.ipynb has no cell with id \"nope\". Its cells are: intro, c1. Read it again to see them."
    );
}

#[tokio::test]
async fn cells_without_ids_are_known_by_their_index() {
    // nbformat 4.4: no ids; a compact file on one line.
    let text = r#"{"cells":[{"cell_type":"code","execution_count":null,"metadata":{},"outputs":[],"source":["a"]},{"cell_type":"markdown","metadata":{},"source":"b"}],"metadata":{},"nbformat":4,"nbformat_minor":4}"#;
    let p = project(text).await;
    let out = Read.call(read_input("n.ipynb"), &p.ctx()).await;
    assert!(
        text_of(&out).contains("<cell id=\"cell-1\" type=\"markdown\">\nb\n</cell>"),
        "{}",
        text_of(&out)
    );
    let out = run(&p, edit("cell-1", "c\nd", None, EditMode::Replace)).await;
    assert!(matches!(out, ToolOutcome::Ok { .. }), "{}", text_of(&out));
    assert_eq!(
        file(&p),
        r#"{"cells":[{"cell_type":"code","execution_count":null,"metadata":{},"outputs":[],"source":["a"]},{"cell_type":"markdown","metadata":{},"source":["c\n","d"]}],"metadata":{},"nbformat":4,"nbformat_minor":4}"#
    );
}

#[tokio::test]
async fn a_file_that_is_not_a_notebook_is_a_clear_error() {
    let p = TempProject::new();
    p.write("n.ipynb", "{\"cells\": 3}");
    let out = Read.call(read_input("n.ipynb"), &p.ctx()).await;
    assert_eq!(
        text_of(&out),
        "n.ipynb is not a valid Jupyter notebook: it has no `cells` list. Read its raw text with `offset` and `limit`."
    );
}

/// A PNG of `w`x`h` as nbformat stores it: base64 wrapped over lines.
fn png_output(w: u32, h: u32) -> (Vec<u8>, String) {
    use base64::Engine as _;
    let img = image::GrayImage::from_fn(w, h, |x, _| image::Luma([(x % 256) as u8]));
    let mut bytes = Vec::new();
    image::DynamicImage::ImageLuma8(img)
        .write_to(
            &mut std::io::Cursor::new(&mut bytes),
            image::ImageFormat::Png,
        )
        .unwrap();
    let b64 = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let lines: Vec<String> = b64
        .as_bytes()
        .chunks(76)
        .map(|c| format!("{}\n", std::str::from_utf8(c).unwrap()))
        .collect();
    (bytes, serde_json::to_string(&lines).unwrap())
}

#[tokio::test]
async fn image_outputs_reach_the_model_as_images_after_the_cells() {
    let (small, small_json) = png_output(40, 30);
    let (_, big_json) = png_output(3000, 1000);
    let cell = format!(
        r#"  {{
   "cell_type": "code",
   "execution_count": 1,
   "id": "plot",
   "metadata": {{}},
   "outputs": [
    {{"data": {{"image/png": {small_json}, "text/plain": ["<Figure 40x30>"]}}, "metadata": {{}}, "output_type": "display_data"}},
    {{"data": {{"image/svg+xml": ["<svg/>"], "image/png": {big_json}}}, "metadata": {{}}, "output_type": "execute_result", "execution_count": 1}}
   ],
   "source": ["plot()"]
  }}"#
    );
    let p = TempProject::new();
    p.write("n.ipynb", notebook(&[&cell]));
    let out = Read.call(read_input("n.ipynb"), &p.ctx()).await;
    let ToolOutcome::Ok { model_content, .. } = &out else {
        panic!("{}", text_of(&out))
    };
    let texts: Vec<&str> = model_content
        .iter()
        .filter_map(|c| match c {
            riot_protocol::ToolResultContent::Text { text } => Some(text.as_str()),
            riot_protocol::ToolResultContent::Image { .. }
            | riot_protocol::ToolResultContent::Document { .. } => None,
        })
        .collect();
    assert!(
        texts[0].contains("<output>\n[image output 1: image/png]\n<Figure 40x30>\n</output>"),
        "{}",
        texts[0]
    );
    // The SVG is named, not sent; the PNG beside it is.
    assert!(
        texts[0].contains("[image output 2: image/png]\n[image output: image/svg+xml]")
            || texts[0].contains("[image output: image/svg+xml]\n[image output 2: image/png]"),
        "{}",
        texts[0]
    );
    assert_eq!(texts[1], "Image output 1 (cell plot): 40x30 px.");
    assert_eq!(
        texts[2],
        "Image output 2 (cell plot): 3000x1000 px, downscaled to 1568x523 px."
    );
    let images: Vec<&riot_protocol::ImageSource> = model_content
        .iter()
        .filter_map(|c| match c {
            riot_protocol::ToolResultContent::Image { source } => Some(source),
            riot_protocol::ToolResultContent::Text { .. }
            | riot_protocol::ToolResultContent::Document { .. } => None,
        })
        .collect();
    assert_eq!(images.len(), 2);
    use base64::Engine as _;
    // The small one goes as it was; the big one arrives downscaled.
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(&images[0].data)
            .unwrap(),
        small
    );
    let big = image::load_from_memory(
        &base64::engine::general_purpose::STANDARD
            .decode(&images[1].data)
            .unwrap(),
    )
    .unwrap();
    assert_eq!((big.width(), big.height()), (1568, 523));
    // The order: the cells' text, then each image after its line.
    assert!(matches!(
        model_content.as_slice(),
        [
            riot_protocol::ToolResultContent::Text { .. },
            riot_protocol::ToolResultContent::Text { .. },
            riot_protocol::ToolResultContent::Image { .. },
            riot_protocol::ToolResultContent::Text { .. },
            riot_protocol::ToolResultContent::Image { .. },
        ]
    ));
}

/// The hunk lines of a cell preview as `(mark, text)`.
fn cell_lines(preview: Option<UiPayload>) -> (String, Vec<(char, String)>) {
    let Some(UiPayload::NotebookCellDiff { cell_id, hunks, .. }) = preview else {
        panic!("no cell preview: {preview:?}");
    };
    let lines = hunks
        .iter()
        .flat_map(|h| &h.lines)
        .map(|l| {
            let mark = match l.kind {
                riot_protocol::DiffLineKind::Context => ' ',
                riot_protocol::DiffLineKind::Added => '+',
                riot_protocol::DiffLineKind::Removed => '-',
            };
            (mark, l.text.clone())
        })
        .collect();
    (cell_id, lines)
}

#[tokio::test]
async fn the_question_previews_the_cell_before_and_after_and_changes_nothing() {
    let original = notebook(&[INTRO, C1, C2]);
    let p = project(&original).await;
    let ctx = p.ctx();
    let replace = edit("intro", "# Title\nOther text", None, EditMode::Replace);
    let (id, lines) = cell_lines(NotebookEdit.preview(&replace, &ctx).await);
    assert_eq!(id, "intro");
    assert_eq!(
        lines,
        [
            (' ', "# Title".to_owned()),
            ('-', "Some text".to_owned()),
            ('+', "Other text".to_owned()),
        ]
    );
    let delete = edit("c1", "", None, EditMode::Delete);
    let (id, lines) = cell_lines(NotebookEdit.preview(&delete, &ctx).await);
    assert_eq!(id, "c1");
    assert_eq!(lines, [('-', "print('héllo')".to_owned())]);
    let insert = edit("c2", "a = 1\nb = 2", Some(CellType::Code), EditMode::Insert);
    let (id, lines) = cell_lines(NotebookEdit.preview(&insert, &ctx).await);
    assert_eq!(id.len(), 8, "the new cell's own id: {id}");
    assert_eq!(
        lines,
        [('+', "a = 1".to_owned()), ('+', "b = 2".to_owned())]
    );
    // A call that would be refused has nothing to preview; nothing was written.
    assert!(
        NotebookEdit
            .preview(&edit("nope", "x", None, EditMode::Replace), &ctx)
            .await
            .is_none()
    );
    assert_eq!(file(&p), original);
}
