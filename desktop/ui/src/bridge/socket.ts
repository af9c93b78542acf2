// ACP over a WebSocket, as `riot serve` speaks it (crates/riot-acp/src/ws.rs):
// one JSON-RPC message per text frame, nothing else. This adapter turns a
// socket into the SDK's `Stream` of messages. It is strict on purpose: a
// frame that is not exactly one JSON-RPC message ends the connection
// instead of being skipped, so a protocol bug shows up where it happens.

import type { AnyMessage, Stream } from "@agentclientprotocol/sdk";

/** The part of the browser's `WebSocket` the adapter uses (tests pass a fake). */
export interface SocketLike extends EventTarget {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

/** `WebSocket.OPEN`, spelled out so the adapter runs where `WebSocket` is not global. */
const OPEN = 1;
/** Close codes (RFC 6455 §7.4.1). */
const NORMAL = 1000;
const PROTOCOL_ERROR = 1002;
const UNSUPPORTED_DATA = 1003;

/** The connection to Riot ended, or never opened. */
export class SocketClosedError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
  ) {
    super(
      reason
        ? `the connection to Riot closed (${code}: ${reason})`
        : `the connection to Riot closed (${code})`,
    );
    this.name = "SocketClosedError";
  }
}

/** A frame that is not one JSON-RPC message. */
export class FrameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FrameError";
  }
}

/** Parses one text frame; throws `FrameError` unless it is one JSON-RPC 2.0 message. */
export function parseFrame(data: unknown): AnyMessage {
  if (typeof data !== "string") {
    throw new FrameError("a binary frame arrived; ACP over WebSocket uses text frames");
  }
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new FrameError(`a frame is not JSON: ${data.slice(0, 80)}`);
  }
  // ACP has no JSON-RPC batches: an array is not a message.
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new FrameError(`a frame is not a JSON-RPC message: ${data.slice(0, 80)}`);
  }
  if ((value as { jsonrpc?: unknown }).jsonrpc !== "2.0") {
    throw new FrameError(`a frame is not JSON-RPC 2.0: ${data.slice(0, 80)}`);
  }
  return value as AnyMessage;
}

function closeEventOf(event: Event): { code: number; reason: string } {
  const e = event as Partial<CloseEvent>;
  return { code: typeof e.code === "number" ? e.code : 1006, reason: e.reason ?? "" };
}

/**
 * The SDK's message stream over `socket`. Writes wait for the socket to
 * open; the readable side ends when the socket closes normally and errors
 * when it closes otherwise or a frame is malformed (then the socket is
 * closed too).
 */
export function socketStream(socket: SocketLike): Stream {
  let ended = false;

  const opened = new Promise<void>((resolve, reject) => {
    if (socket.readyState === OPEN) {
      resolve();
      return;
    }
    socket.addEventListener("open", () => resolve(), { once: true });
    socket.addEventListener(
      "close",
      (event) => {
        const { code, reason } = closeEventOf(event);
        reject(new SocketClosedError(code, reason));
      },
      { once: true },
    );
  });
  // A failed open is reported through the readable side; do not warn twice.
  opened.catch(() => {});

  const readable = new ReadableStream<AnyMessage>({
    start(controller) {
      const fail = (error: Error, code: number) => {
        if (ended) return;
        ended = true;
        controller.error(error);
        socket.close(code, error.message.slice(0, 120));
      };
      socket.addEventListener("message", (event) => {
        if (ended) return;
        try {
          controller.enqueue(parseFrame((event as MessageEvent).data));
        } catch (e) {
          const error = e instanceof Error ? e : new FrameError(String(e));
          fail(error, typeof (event as MessageEvent).data === "string" ? PROTOCOL_ERROR : UNSUPPORTED_DATA);
        }
      });
      socket.addEventListener("close", (event) => {
        if (ended) return;
        ended = true;
        const { code, reason } = closeEventOf(event);
        if (code === NORMAL) {
          controller.close();
        } else {
          controller.error(new SocketClosedError(code, reason));
        }
      });
    },
    cancel() {
      ended = true;
      socket.close(NORMAL, "client closed");
    },
  });

  const writable = new WritableStream<AnyMessage>({
    async write(message) {
      await opened;
      if (socket.readyState !== OPEN) {
        throw new SocketClosedError(1006, "the socket is no longer open");
      }
      socket.send(JSON.stringify(message));
    },
    close() {
      socket.close(NORMAL, "client closed");
    },
    abort() {
      socket.close(NORMAL, "client closed");
    },
  });

  return { readable, writable };
}
