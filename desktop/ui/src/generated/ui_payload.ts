// Generated from schemas/ui_payload.json by scripts/generate-types.mjs; do not edit.
// Regenerate with `npm run generate` once schemas/ is current (see the script's header).

/**
 * What a tool shows people about a finished call, or about a call a
 * permission question asks about (`PermissionRequestDetail::preview`).
 */
export type UiPayload =
  | {
      type: "file_read";
      path: string;
      /**
       * First line shown, 1-based.
       */
      start_line: number;
      /**
       * Number of lines shown.
       */
      lines: number;
      /**
       * Lines in the whole file.
       */
      total_lines: number;
      truncated: boolean;
    }
  | {
      type: "image_read";
      path: string;
      media_type: string;
      bytes: number;
    }
  | {
      type: "pdf_read";
      path: string;
      /**
       * First page read, 1-based.
       */
      first_page: number;
      /**
       * Last page read.
       */
      last_page: number;
      /**
       * Pages in the document.
       */
      total_pages: number;
    }
  | {
      type: "document_read";
      path: string;
      /**
       * What was read, in a few words: "12 paragraphs, 1 table",
       * "Sales: A1:C40", "slides 1-2 of 2".
       */
      summary: string;
    }
  | {
      type: "notebook_read";
      path: string;
      cells: NotebookCell[];
    }
  | {
      type: "file_diff";
      path: string;
      /**
       * The file did not exist before.
       */
      created: boolean;
      hunks: DiffHunk[];
    }
  | {
      type: "notebook_cell_diff";
      path: string;
      /**
       * The cell's id (an inserted cell's new id).
       */
      cell_id: string;
      hunks: DiffHunk[];
    }
  | {
      type: "command";
      command: string;
      exit_code?: number | null;
      stdout: string;
      stderr: string;
      truncated: boolean;
      timed_out: boolean;
      background_id?: string | null;
    }
  | {
      type: "file_list";
      pattern: string;
      paths: string[];
      /**
       * Matches before the cap.
       */
      total: number;
      truncated: boolean;
    }
  | {
      type: "search_results";
      pattern: string;
      matches: SearchMatch[];
      total: number;
      truncated: boolean;
    }
  | {
      type: "todos";
      todos: Todo[];
    }
  | {
      type: "text";
      text: string;
    }
  | {
      type: "web_page";
      url: string;
      status: number;
      /**
       * Bytes downloaded (at most the download limit).
       */
      bytes: number;
      /**
       * The `Content-Type`, if the server sent one.
       */
      content_type?: string | null;
      /**
       * The HTML page's `<title>`.
       */
      title?: string | null;
      /**
       * A redirect to another host that was not followed.
       */
      redirect?: string | null;
      /**
       * The download stopped at the size limit.
       */
      truncated: boolean;
      /**
       * Served from the 15-minute cache.
       */
      cached: boolean;
    }
  | {
      type: "web_results";
      query: string;
      results: WebResult[];
    }
  | {
      type: "diagnostics";
      /**
       * The commands that ran, in order.
       */
      checkers: string[];
      diagnostics: Diagnostic[];
      /**
       * Diagnostics before the cap (and before the `paths` filter's
       * cap, not before the filter).
       */
      total: number;
      truncated: boolean;
    };
/**
 * Whether a diff line is kept, added or removed.
 */
export type DiffLineKind = "context" | "added" | "removed";
/**
 * Progress of a todo.
 */
export type TodoStatus = "pending" | "in_progress" | "completed";
/**
 * How serious a diagnostic is.
 */
export type Severity = "error" | "warning" | "info" | "hint";

/**
 * One cell of a notebook, as Read showed it.
 */
export interface NotebookCell {
  /**
   * The id NotebookEdit takes (`cell-N` for a cell without one).
   */
  id: string;
  /**
   * `code`, `markdown` or `raw`.
   */
  cell_type: string;
  /**
   * Lines of source.
   */
  lines: number;
  /**
   * Outputs the cell holds.
   */
  outputs: number;
}
/**
 * One hunk of a unified diff.
 */
export interface DiffHunk {
  old_start: number;
  old_lines: number;
  new_start: number;
  new_lines: number;
  lines: DiffLine[];
}
/**
 * One line of a diff hunk, without its line terminator.
 */
export interface DiffLine {
  kind: DiffLineKind;
  text: string;
}
/**
 * A search hit: a file, or a line in a file (`content` mode), or a count.
 */
export interface SearchMatch {
  path: string;
  line?: number | null;
  text?: string | null;
  count?: number | null;
}
/**
 * One entry of the todo list (docs/interfaces.md: TodoWrite).
 */
export interface Todo {
  content: string;
  status: TodoStatus;
  activeForm?: string | null;
}
/**
 * One web search result.
 */
export interface WebResult {
  title: string;
  url: string;
  snippet: string;
}
/**
 * One finding of a checker or language server.
 */
export interface Diagnostic {
  /**
   * The file, relative to the project when it is inside it.
   */
  path: string;
  /**
   * 1-based; 0 when the checker named no line.
   */
  line: number;
  /**
   * 1-based; 0 when the checker named no column.
   */
  column: number;
  severity: Severity;
  /**
   * The checker's code for it (`E0308`, `reportUndefinedVariable`).
   */
  code?: string | null;
  message: string;
  /**
   * Who said it (`cargo`, `pyright`, a language server's name).
   */
  source: string;
}
