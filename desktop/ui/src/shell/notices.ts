// What the desktop notifications say (notify.ts decides when to send
// them): a turn ended (the session is idle), or a permission question
// waits for an answer.

import type { TurnOutcome } from "../state/store";

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
