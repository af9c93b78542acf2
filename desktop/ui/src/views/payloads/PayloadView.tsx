import type { ShownImage } from "../../state/conversation";
import { imageUrl } from "../../state/images";
import { CommandView } from "./CommandView";
import { DiagnosticsView } from "./DiagnosticsView";
import { CellDiffView, DiffView } from "./DiffView";
import { asUiPayload, type PayloadOf } from "./payload";
import { FileListView, SearchResultsView } from "./SearchViews";
import { TodosView } from "./TodosView";
import { WebPageView, WebResultsView } from "./WebViews";

function FileReadView({ payload }: { payload: PayloadOf<"file_read"> }) {
  const last = payload.start_line + payload.lines - 1;
  const range =
    payload.lines === 0
      ? "no lines"
      : payload.start_line === 1 && payload.lines === payload.total_lines
        ? `all ${payload.total_lines} lines`
        : `lines ${payload.start_line}–${last} of ${payload.total_lines}`;
  return (
    <div className="payload payload-read">
      <div className="payload-head">
        <code className="payload-path">{payload.path}</code>
        <span className="badge" data-testid="read-range">
          {range}
        </span>
        {payload.truncated && <span className="badge badge-warning">truncated</span>}
      </div>
    </div>
  );
}

/** A Read of an image: its path, type and size, and the image as the model got it when Riot sends it along. */
function ImageReadView({ payload, images }: { payload: PayloadOf<"image_read">; images: readonly ShownImage[] }) {
  return (
    <div className="payload payload-read">
      <div className="payload-head">
        <code className="payload-path">{payload.path}</code>
        <span className="badge">
          {payload.media_type}, {payload.bytes.toLocaleString("en")} bytes
        </span>
      </div>
      {images.length > 0 && (
        <div className="payload-image">
          {images.map((image, i) => (
            <img key={i} className="thumbnail" src={imageUrl(image)} alt={payload.path} />
          ))}
        </div>
      )}
    </div>
  );
}

function NotebookReadView({ payload }: { payload: PayloadOf<"notebook_read"> }) {
  const n = payload.cells.length;
  return (
    <div className="payload payload-read">
      <div className="payload-head">
        <code className="payload-path">{payload.path}</code>
        <span className="badge" data-testid="read-range">
          {n === 1 ? "1 cell" : `${n} cells`}
        </span>
      </div>
      <ol className="payload-cells">
        {payload.cells.map((c) => (
          <li key={c.id}>
            <code>{c.id}</code> {c.cell_type}, {c.lines === 1 ? "1 line" : `${c.lines} lines`}
            {c.outputs > 0 && (c.outputs === 1 ? ", 1 output" : `, ${c.outputs} outputs`)}
          </li>
        ))}
      </ol>
    </div>
  );
}

function PdfReadView({ payload }: { payload: PayloadOf<"pdf_read"> }) {
  const range =
    payload.first_page === payload.last_page
      ? `page ${payload.first_page} of ${payload.total_pages}`
      : `pages ${payload.first_page}–${payload.last_page} of ${payload.total_pages}`;
  return (
    <div className="payload payload-read">
      <div className="payload-head">
        <code className="payload-path">{payload.path}</code>
        <span className="badge" data-testid="read-range">
          {range}
        </span>
      </div>
    </div>
  );
}

function DocumentReadView({ payload }: { payload: PayloadOf<"document_read"> }) {
  return (
    <div className="payload payload-read">
      <div className="payload-head">
        <code className="payload-path">{payload.path}</code>
        <span className="badge" data-testid="read-range">
          {payload.summary}
        </span>
      </div>
    </div>
  );
}

/**
 * Renders a tool call's `rawOutput` by its kind; `null` when it is not a
 * payload this UI knows. `images` are the image blocks of the call's
 * content (what the model was shown).
 */
export function PayloadView({ raw, images = [] }: { raw: unknown; images?: readonly ShownImage[] }) {
  const payload = asUiPayload(raw);
  if (payload === null) return null;
  switch (payload.type) {
    case "file_read":
      return <FileReadView payload={payload} />;
    case "image_read":
      return <ImageReadView payload={payload} images={images} />;
    case "notebook_read":
      return <NotebookReadView payload={payload} />;
    case "pdf_read":
      return <PdfReadView payload={payload} />;
    case "document_read":
      return <DocumentReadView payload={payload} />;
    case "file_diff":
      return <DiffView payload={payload} />;
    case "notebook_cell_diff":
      return <CellDiffView payload={payload} />;
    case "command":
      return <CommandView payload={payload} />;
    case "file_list":
      return <FileListView payload={payload} />;
    case "search_results":
      return <SearchResultsView payload={payload} />;
    case "todos":
      return (
        <div className="payload payload-todos">
          <TodosView todos={payload.todos} />
        </div>
      );
    case "text":
      return <pre className="payload payload-text output">{payload.text}</pre>;
    case "web_page":
      return <WebPageView payload={payload} />;
    case "web_results":
      return <WebResultsView payload={payload} />;
    case "diagnostics":
      return <DiagnosticsView payload={payload} />;
  }
}
