import { useSyncExternalStore } from "react";

import type { NotificationPreference } from "../shell";

/**
 * The top bar's switch for notifications. It is Riot's
 * `notifications.desktop` when Riot reports that setting (shown, not
 * changed here), else a switch kept in this browser. `onTurnOn` runs when
 * the person turns it on (a browser asks for its permission then).
 */
export function NotificationToggle({
  preference,
  onTurnOn,
}: {
  preference: NotificationPreference;
  onTurnOn?: (() => void) | undefined;
}) {
  const enabled = useSyncExternalStore(preference.subscribe, () => preference.enabled());
  const byRiot = useSyncExternalStore(preference.subscribe, () => preference.byRiot);
  return (
    <label
      className="notify-toggle"
      title={
        byRiot
          ? "Set by notifications.desktop in Riot's settings"
          : "Notify when a session you are not looking at finishes or waits for a permission"
      }
    >
      <input
        type="checkbox"
        checked={enabled}
        disabled={byRiot}
        onChange={(e) => {
          preference.setLocal(e.target.checked);
          if (e.target.checked) onTurnOn?.();
        }}
      />
      Notify
    </label>
  );
}
