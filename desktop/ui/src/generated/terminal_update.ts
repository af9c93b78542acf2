// Generated from schemas/terminal_update.json by scripts/generate-types.mjs; do not edit.
// Regenerate with `npm run generate` once schemas/ is current (see the script's header).

/**
 * What faces are told about terminals as it happens.
 */
export type TerminalUpdate =
  | {
      type: "opened";
      name: string;
      command: string;
      size: TerminalSize;
    }
  | {
      type: "screen";
      name: string;
      /**
       * Every row, trailing spaces removed.
       */
      rows: string[];
      cursor_row: number;
      cursor_col: number;
      full_screen: boolean;
      /**
       * The rows that scrolled off the top of the (main) screen since
       * the last screen, oldest first: a face keeps them as scrollback.
       */
      scrolled?: string[];
    }
  | {
      type: "resized";
      name: string;
      size: TerminalSize;
    }
  | {
      type: "exited";
      name: string;
      exit: TerminalExit;
    }
  | {
      type: "closed";
      name: string;
    };

/**
 * Rows and columns of a terminal.
 */
export interface TerminalSize {
  rows: number;
  cols: number;
}
/**
 * How a terminal's program ended.
 */
export interface TerminalExit {
  /**
   * `None` when a signal ended it.
   */
  code?: number | null;
  signal?: number | null;
}
