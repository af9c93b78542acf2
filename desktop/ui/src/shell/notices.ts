// What the desktop notifications say, and the store hooks that send them
// through the shell: a turn ended (the session is idle), or a permission
// question waits for an answer.

import type { StoreHooks, TurnOutcome } from "../state/store";
import type { Shell } from "./index";

export interface Notice {
  title: string;
  body: string;
}

function oneLine(text: string): string {
  return (text.split("\n").find((line) => line.trim() !== "") ?? "").trim();
}

/** "TITLE — done" (or "— stopped", "— failed"); `label` is the session's title, else its directory. */
export function turnEndedNotice(label: string, outcome: TurnOutcome): Notice {
  return { title: "Riot", body: `${oneLine(label)} — ${outcome}` };
}

/** The question's tool call, in its one-line title. */
export function questionNotice(toolTitle: string): Notice {
  return {
    title: "Riot needs your answer",
    body: oneLine(toolTitle) || "A tool is waiting for your permission.",
  };
}

/** Store hooks that notify through `shell` (nothing happens without one). */
export function shellHooks(shell: Shell): StoreHooks {
  if (!shell.desktop) return {};
  return {
    turnEnded: ({ label, outcome }) => {
      const notice = turnEndedNotice(label, outcome);
      void shell.notify(notice.title, notice.body);
    },
    question: ({ title }) => {
      const notice = questionNotice(title);
      void shell.notify(notice.title, notice.body);
    },
  };
}
