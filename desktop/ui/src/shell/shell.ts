// The desktop shell (desktop/src-tauri): the only module that talks to it.
// Inside Riot's Tauri window the page has `window.__TAURI_INTERNALS__`,
// whose `invoke(cmd, args)` reaches the shell's two commands:
// `pick_folder` (the native folder picker: a path, or null when the
// person cancels) and `notify` (`{title, body, otherSession?}`: a desktop
// notification, shown while the window is not focused, or at any time for
// a session other than the one on screen; whether one was shown). In a
// plain browser there is no shell: no picker, and notify does nothing
// (notify.ts uses the web Notification API there instead).

export interface Shell {
  /** Running inside the desktop shell. */
  readonly desktop: boolean;
  /** The native folder picker; `null` when cancelled or without a shell. */
  pickFolder(): Promise<string | null>;
  /**
   * A notification while the window is not focused — or, with
   * `otherSession`, for a session not on screen even while it is;
   * whether one was shown.
   */
  notify(title: string, body: string, options?: { otherSession?: boolean }): Promise<boolean>;
}

interface TauriInternals {
  invoke(cmd: string, args?: Record<string, unknown>): Promise<unknown>;
}

/** The shell's IPC, when the page runs in it. */
function internalsOf(scope: object): TauriInternals | null {
  const internals = (scope as { __TAURI_INTERNALS__?: unknown }).__TAURI_INTERNALS__;
  if (typeof internals !== "object" || internals === null) return null;
  const invoke = (internals as { invoke?: unknown }).invoke;
  return typeof invoke === "function" ? (internals as TauriInternals) : null;
}

/** What a plain browser has: nothing to pick with, nowhere to notify. */
export const browserShell: Shell = {
  desktop: false,
  pickFolder: async () => null,
  notify: async () => false,
};

/** The shell the page runs in (`scope` is the window). */
export function detectShell(scope: object = globalThis): Shell {
  const internals = internalsOf(scope);
  if (internals === null) return browserShell;
  return {
    desktop: true,
    async pickFolder() {
      const picked = await internals.invoke("pick_folder");
      if (picked === null || typeof picked === "string") return picked;
      throw new Error(`the desktop shell's folder picker answered ${JSON.stringify(picked)}, not a path`);
    },
    async notify(title, body, options) {
      try {
        const args = options?.otherSession === true ? { title, body, otherSession: true } : { title, body };
        return (await internals.invoke("notify", args)) === true;
      } catch {
        // A notification is a courtesy: its failure must not disturb the page.
        return false;
      }
    },
  };
}
