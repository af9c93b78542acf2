// The page as the view tests open it: the App over a Store attached to a
// strict fake riot serve, frames batched on microtasks, a new session
// open in PROJECT.

import { act, fireEvent, render, screen } from "@testing-library/react";

import { connectToRiot, endpointFromPage } from "../bridge";
import type { FakeRiot } from "../bridge/testing/fake-riot";
import type { FrameScheduler } from "../state/frame-batcher";
import { Store } from "../state/store";
import { App } from "./App";

export const PROJECT = "/home/me/project";

/** Frames run on the next microtask: a batch lands before the test goes on. */
export const microtaskFrames: FrameScheduler = {
  schedule(run) {
    let live = true;
    queueMicrotask(() => live && run());
    return () => {
      live = false;
    };
  },
};

/** The App connected to `riot`, with a new session open; the store and that session's id. */
export async function pageWithSession(riot: FakeRiot): Promise<{ store: Store; id: string }> {
  const store = new Store(PROJECT, microtaskFrames);
  render(<App store={store} />);
  const connection = await connectToRiot(endpointFromPage("http://127.0.0.1:1/?token=t"), store.events, riot.connect);
  await act(() => store.attach(connection));
  fireEvent.click(screen.getByRole("button", { name: "New session" }));
  await screen.findByRole("textbox", { name: "Message" });
  return { store, id: store.getState().currentId! };
}
