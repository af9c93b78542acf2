// Generated from schemas/agent_event.json by scripts/generate-types.mjs; do not edit.
// Regenerate with `npm run generate` once schemas/ is current (see the script's header).

/**
 * One event of a session's stream. Serialized internally tagged with a
 * snake_case `"type"` (docs/interfaces.md: `--output-format events`).
 */
export type AgentEvent =
  | {
      type: "request_start";
      turn: number;
      model: string;
      after?: Transition | null;
    }
  | {
      type: "delta";
      delta: StreamDelta;
    }
  | {
      type: "message";
      message: Message;
    }
  | {
      type: "tool_started";
      tool_use_id: ToolUseId;
      name: string;
      describe: string;
    }
  | {
      type: "progress";
      tool_use_id: ToolUseId;
      payload: ProgressPayload;
    }
  | {
      type: "permission_request";
      request_id: RequestId;
      detail: PermissionRequestDetail;
    }
  | {
      type: "permission_resolved";
      request_id: RequestId;
      outcome: PermissionOutcome;
    }
  | {
      type: "compacting";
      strategy: CompactionStrategy;
    }
  | {
      type: "compacted";
      before: number;
      after: number;
      strategy: CompactionStrategy;
    }
  | {
      type: "prompt_withdrawn";
      message_id: MessageId;
    }
  | {
      type: "retrying";
      attempt: number;
      delay_ms: number;
      reason: string;
    }
  | {
      type: "usage";
      model: string;
      usage: Usage;
    }
  | {
      type: "done";
      reason: TerminalReason;
    };
/**
 * Why the loop went around again (docs/design.md §4, §5).
 */
export type Transition =
  | "next_turn"
  | "reactive_compact_retry"
  | "output_limit_escalation"
  | "output_limit_continue"
  | "stop_hook_retry"
  | "fallback_model";
/**
 * A fragment of a streaming reply, for live display only; the finished
 * blocks arrive in the `Message` event.
 */
export type StreamDelta =
  | {
      type: "text";
      text: string;
    }
  | {
      type: "thinking";
      text: string;
    }
  | {
      type: "tool_input";
      tool_use_id: ToolUseId;
      name: string;
      partial_json: string;
    };
/**
 * Pairs an assistant `tool_use` block with its `tool_result`.
 */
export type ToolUseId = string;
/**
 * One message of a conversation.
 */
export type Message = UserMessage | AssistantMessage | SystemMessage;
/**
 * Live progress of a running tool, forwarded as `AgentEvent::Progress`.
 */
export type ProgressPayload =
  | {
      type: "output";
      stream: OutputStream;
      text: string;
    }
  | {
      type: "status";
      text: string;
    };
/**
 * Which pipe output came from.
 */
export type OutputStream = "stdout" | "stderr";
/**
 * A pending question to the person (a permission request).
 */
export type RequestId = string;
/**
 * Why a decision was made. Every decision carries one, because faces, logs
 * and the chain itself depend on it (§9.2). Serialized as
 * `{"kind": "...", "detail": "...", ...}` (docs/interfaces.md: `permissions check`).
 */
export type DecisionReason =
  | {
      kind: "rule";
      detail: string;
      rule: string;
      behavior: RuleBehavior;
      source: RuleSource;
    }
  | {
      kind: "mode";
      detail: string;
      mode: PermissionMode;
    }
  | {
      kind: "safety";
      detail: string;
    }
  | {
      kind: "unverifiable";
      detail: string;
    }
  | {
      kind: "consent";
      detail: string;
    }
  | {
      kind: "classifier";
      detail: string;
    }
  | {
      kind: "hook";
      detail: string;
      hook: string;
    }
  | {
      kind: "sandbox";
      detail: string;
    }
  | {
      kind: "no_answer";
      detail: string;
      asked: DecisionReason;
    }
  | {
      kind: "user";
      detail: string;
    };
/**
 * What a rule does when it matches.
 */
export type RuleBehavior = "allow" | "ask" | "deny";
/**
 * Where a rule came from. Source priority only picks which rule is quoted
 * as the reason; it never decides between deny, ask and allow (§9.2).
 */
export type RuleSource = "user" | "project" | "local" | "cli_flag" | "session";
/**
 * The session's permission mode (docs/design.md §9.1).
 */
export type PermissionMode =
  "default" | "accept-edits" | "plan" | "auto" | "bypass" | "dont-ask" | "unattended";
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
 * How a permission question ended.
 */
export type PermissionOutcome =
  | {
      outcome: "allow_once";
    }
  | {
      outcome: "allow_always";
      rule: string;
    }
  | {
      outcome: "reject_once";
      feedback?: string | null;
    }
  | {
      outcome: "reject_always";
      rule: string;
    }
  | {
      outcome: "timed_out";
    }
  | {
      outcome: "cancelled";
    };
/**
 * How context was reduced (docs/design.md §10).
 */
export type CompactionStrategy = "clear_tool_results" | "summary";
/**
 * One message in a conversation.
 */
export type MessageId = string;
/**
 * Why a turn ended. The one mapping to exit codes and ACP stop reasons is
 * [`TerminalReason::exit_code`] and [`TerminalReason::acp_stop_reason`].
 */
export type TerminalReason =
  | {
      type: "completed";
    }
  | {
      type: "max_turns";
    }
  | {
      type: "aborted";
      by: AbortSource;
    }
  | {
      type: "stop_hook_prevented";
    }
  | {
      type: "refusal";
    }
  | {
      type: "error";
      error: AgentError;
    };
/**
 * Who stopped the turn.
 */
export type AbortSource = "user" | "user_interjection" | "shutdown";
/**
 * The class of a turn-ending error.
 */
export type ErrorKind =
  | ("auth" | "rate_limit" | "payment" | "overloaded" | "invalid_request" | "network" | "other")
  | "output_limit"
  | "context_overflow"
  | "usage"
  | "internal";

/**
 * A user-role message: the person's text, tool results, attachments.
 */
export interface UserMessage {
  role: "user";
}
/**
 * A model reply.
 */
export interface AssistantMessage {
  role: "assistant";
}
/**
 * A note for people; never sent to a model.
 */
export interface SystemMessage {
  role: "system";
}
/**
 * What the permission dialog shows (docs/design.md §9: the tool, the
 * resolved absolute path or the full command, the reason, the choices).
 */
export interface PermissionRequestDetail {
  tool_use_id: ToolUseId;
  tool_name: string;
  /**
   * The tool's one-line `describe`.
   */
  describe: string;
  input: unknown;
  /**
   * Resolved absolute path for file tools.
   */
  path?: string | null;
  /**
   * The full command for shell tools.
   */
  command?: string | null;
  reason: DecisionReason;
  message: string;
  /**
   * The rule "allow always" would add, when one can be offered.
   */
  suggested_rule?: string | null;
  /**
   * What the call will do, built by the tool against the files as they
   * are when it asks (`Tool::preview`): an edit's or a write's diff
   * (a new file's whole content as added lines), a notebook cell before
   * and after. Every face shows this one payload; `None` when the
   * input says it all (a command, a URL, MCP arguments).
   */
  preview?: UiPayload | null;
}
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
/**
 * Token counts of a model request. `input_tokens` excludes tokens read
 * from or written to the cache (docs/interfaces.md: the `usage` object).
 */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  /**
   * Web searches the provider ran for the request (its server-side
   * web search), priced per search.
   */
  web_searches?: number;
}
/**
 * An error that ended a turn, already worded for people.
 */
export interface AgentError {
  kind: ErrorKind;
  message: string;
}
