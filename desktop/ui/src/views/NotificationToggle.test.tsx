import { fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { NotificationPreference } from "../shell";
import { LOCAL_SWITCH_KEY } from "../shell/notify";
import { NotificationToggle } from "./NotificationToggle";

function memoryStorage() {
  const items = new Map<string, string>();
  return { getItem: (k: string) => items.get(k) ?? null, setItem: (k: string, v: string) => void items.set(k, v), items };
}

describe("the Notify switch", () => {
  it("turns notifications off and on in this browser, asking for permission when turned on", () => {
    const storage = memoryStorage();
    const preference = new NotificationPreference(storage);
    let asked = 0;
    render(<NotificationToggle preference={preference} onTurnOn={() => asked++} />);
    const box = screen.getByRole("checkbox", { name: "Notify" }) as HTMLInputElement;
    expect(box.checked).toBe(true);
    fireEvent.click(box);
    expect(box.checked).toBe(false);
    expect(preference.enabled()).toBe(false);
    expect(storage.items.get(LOCAL_SWITCH_KEY)).toBe("off");
    expect(asked).toBe(0);
    fireEvent.click(box);
    expect(box.checked).toBe(true);
    expect(asked).toBe(1);
  });

  it("shows Riot's notifications.desktop and leaves it to Riot's settings", () => {
    const preference = new NotificationPreference(memoryStorage());
    preference.setFromRiot(false);
    render(<NotificationToggle preference={preference} />);
    const box = screen.getByRole("checkbox", { name: "Notify" }) as HTMLInputElement;
    expect(box.checked).toBe(false);
    expect(box.disabled).toBe(true);
    expect(box.closest("label")?.getAttribute("title")).toBe("Set by notifications.desktop in Riot's settings");
  });
});
