// An in-memory WebSocket pair for tests: what one end sends arrives at the
// other as a text frame, asynchronously, as on a real socket. Closing
// either end closes both with the same code.

import type { SocketLike } from "../socket";

const CONNECTING = 0;
const OPEN = 1;
const CLOSED = 3;

export class FakeSocket extends EventTarget implements SocketLike {
  readyState = CONNECTING;
  peer: FakeSocket | null = null;
  /** Every frame this end sent, for assertions. */
  readonly sent: string[] = [];

  send(data: string): void {
    if (this.readyState !== OPEN) {
      throw new Error("send on a socket that is not open");
    }
    this.sent.push(data);
    const peer = this.peer;
    queueMicrotask(() => {
      if (peer && peer.readyState === OPEN) {
        peer.dispatchEvent(Object.assign(new Event("message"), { data }));
      }
    });
  }

  /** Delivers a raw frame (text or not) to this end, as if the peer sent it. */
  receive(data: unknown): void {
    this.dispatchEvent(Object.assign(new Event("message"), { data }));
  }

  close(code = 1000, reason = ""): void {
    if (this.readyState === CLOSED) return;
    this.finish(code, reason);
    this.peer?.finish(code, reason);
  }

  open(): void {
    this.readyState = OPEN;
    this.dispatchEvent(new Event("open"));
  }

  finish(code: number, reason: string): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    queueMicrotask(() => this.dispatchEvent(Object.assign(new Event("close"), { code, reason })));
  }
}

/** Two connected ends; both open on the next microtask. */
export function socketPair(): { client: FakeSocket; server: FakeSocket } {
  const client = new FakeSocket();
  const server = new FakeSocket();
  client.peer = server;
  server.peer = client;
  queueMicrotask(() => {
    server.open();
    client.open();
  });
  return { client, server };
}

/** A client end whose handshake the server refused (a 401 or 403 looks like this to a page). */
export function refusedSocket(): FakeSocket {
  const socket = new FakeSocket();
  queueMicrotask(() => {
    socket.dispatchEvent(new Event("error"));
    socket.finish(1006, "");
  });
  return socket;
}
