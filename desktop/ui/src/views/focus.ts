// Keyboard focus for dialogs and shortcuts: what a key press may be taken
// for, and a dialog that holds the focus while it is open.

import { useEffect, type RefObject } from "react";

const FOCUSABLE = [
  "a[href]",
  "button:not([disabled])",
  "input:not([disabled])",
  "select:not([disabled])",
  "textarea:not([disabled])",
  "summary",
  '[tabindex]:not([tabindex="-1"])',
].join(",");

/** The elements of `root` that Tab reaches, in order. */
export function focusables(root: HTMLElement): HTMLElement[] {
  return [...root.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => !el.closest("[inert]"));
}

const TEXT_INPUTS = new Set(["text", "search", "url", "email", "password", "number", "tel", ""]);

/** Keys typed in `target` are text (or a choice in a menu), never a shortcut. */
export function isTextEntry(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable || target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement) {
    return true;
  }
  return target instanceof HTMLInputElement && TEXT_INPUTS.has(target.type);
}

/** A key with Ctrl, Alt or Meta belongs to the browser or the system. */
export function hasModifier(e: KeyboardEvent): boolean {
  return e.ctrlKey || e.altKey || e.metaKey;
}

/** `dialog` is the modal dialog in front (the last one in the page), so keys are for it. */
export function inFront(dialog: Element | null): boolean {
  const dialogs = document.querySelectorAll('[aria-modal="true"]');
  return dialog !== null && dialogs[dialogs.length - 1] === dialog;
}

/**
 * While mounted, the dialog `ref` holds the focus: it takes it (on
 * `initial()`, else the dialog itself), Tab and Shift+Tab go round inside
 * it, and when it closes the focus goes back where it was.
 */
export function useModalFocus(ref: RefObject<HTMLElement | null>, initial?: () => HTMLElement | null): void {
  useEffect(() => {
    const dialog = ref.current;
    if (dialog === null) return;
    const before = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    (initial?.() ?? dialog).focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Tab" || hasModifier(e) || !inFront(dialog)) return;
      const order = focusables(dialog);
      const first = order[0];
      const last = order[order.length - 1];
      if (first === undefined || last === undefined) {
        e.preventDefault();
        dialog.focus();
        return;
      }
      const at = document.activeElement;
      const inside = at instanceof Node && dialog.contains(at) && at !== dialog;
      if (!inside) {
        e.preventDefault();
        (e.shiftKey ? last : first).focus();
      } else if (e.shiftKey && at === first) {
        e.preventDefault();
        last.focus();
      } else if (!e.shiftKey && at === last) {
        e.preventDefault();
        first.focus();
      }
    };
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("keydown", onKey);
      // Back to where the person was, unless they moved on meanwhile.
      const now = document.activeElement;
      const lost = now === null || now === document.body || dialog.contains(now);
      if (lost && before !== null && before.isConnected) before.focus();
    };
    // Once per dialog: `initial` is read when it opens.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [ref]);
}
