import type { AnyMessage } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";

import { FrameError, parseFrame, SocketClosedError, socketStream } from "./socket";
import { socketPair } from "./testing/fake-socket";

const ping: AnyMessage = { jsonrpc: "2.0", id: 1, method: "ping", params: {} };

describe("parseFrame", () => {
  it("takes one JSON-RPC 2.0 message", () => {
    expect(parseFrame(JSON.stringify(ping))).toEqual(ping);
  });

  it.each([
    ["a binary frame", new Uint8Array([123, 125])],
    ["text that is not JSON", "{oops"],
    ["a batch (ACP has none)", JSON.stringify([ping])],
    ["a JSON value that is no message", "42"],
    ["a message without jsonrpc 2.0", JSON.stringify({ id: 1, method: "ping" })],
  ])("rejects %s", (_, frame) => {
    expect(() => parseFrame(frame)).toThrow(FrameError);
  });
});

async function read(stream: ReadableStream<AnyMessage>) {
  const reader = stream.getReader();
  const { value } = await reader.read();
  reader.releaseLock();
  return value;
}

describe("socketStream", () => {
  it("sends each message as one text frame, once the socket is open", async () => {
    const { client, server } = socketPair();
    const stream = socketStream(client);
    const writer = stream.writable.getWriter();
    // Written while still connecting: held until open, not dropped.
    await writer.write(ping);
    expect(server.readyState).toBe(1);
    expect(client.sent).toEqual([JSON.stringify(ping)]);
  });

  it("reads each text frame as one message", async () => {
    const { client, server } = socketPair();
    const stream = socketStream(client);
    await new Promise((r) => setTimeout(r, 0));
    server.send(JSON.stringify(ping));
    expect(await read(stream.readable)).toEqual(ping);
  });

  it("ends the readable side when the socket closes normally", async () => {
    const { client, server } = socketPair();
    const stream = socketStream(client);
    await new Promise((r) => setTimeout(r, 0));
    server.close(1000);
    const reader = stream.readable.getReader();
    expect(await reader.read()).toEqual({ done: true, value: undefined });
  });

  it("fails the readable side with the close code when the socket drops", async () => {
    const { client, server } = socketPair();
    const stream = socketStream(client);
    await new Promise((r) => setTimeout(r, 0));
    server.close(1011, "server error");
    await expect(stream.readable.getReader().read()).rejects.toMatchObject({
      name: "SocketClosedError",
      code: 1011,
      reason: "server error",
    });
  });

  it("closes the connection on a malformed frame instead of skipping it", async () => {
    const { client } = socketPair();
    const stream = socketStream(client);
    await new Promise((r) => setTimeout(r, 0));
    client.receive("not json");
    await expect(stream.readable.getReader().read()).rejects.toBeInstanceOf(FrameError);
    expect(client.readyState).toBe(3);
  });

  it("refuses to write once the socket is closed", async () => {
    const { client, server } = socketPair();
    const stream = socketStream(client);
    await new Promise((r) => setTimeout(r, 0));
    server.close(1000);
    await expect(stream.writable.getWriter().write(ping)).rejects.toBeInstanceOf(SocketClosedError);
  });
});
