// A fake `riot serve` for the bridge's tests, built on the SDK's agent side
// and reached through the in-memory socket pair. It is as strict as Riot
// (crates/riot-acp/src/agent.rs, ws.rs): it refuses a socket without the
// token, rejects what Riot rejects with Riot's codes and words (a relative
// or unknown cwd, an unknown session, an empty prompt, a second prompt
// while one runs, a mode it does not offer, content other than text and
// resource links), sends `_riot/...` notifications only to a client that
// asked for them, and treats an answer that is not an offered option as a
// rejection. What a test would otherwise miss is recorded in `violations`.

import * as acp from "@agentclientprotocol/sdk";
import type {
  PermissionOption,
  RequestPermissionResponse,
  SessionModeState,
  SessionUpdate,
  StopReason,
  ToolCallUpdate,
} from "@agentclientprotocol/sdk";

import { COMPACTION, SHUTDOWN, USAGE } from "../riot-ext";
import { parseFrame, socketStream, type SocketLike } from "../socket";
import { refusedSocket, socketPair, type FakeSocket } from "./fake-socket";

const INVALID_PARAMS = -32602;

/** The modes Riot offers (crates/riot-acp/src/mapping.rs, OFFERED_MODES). */
export const OFFERED_MODES = ["default", "accept-edits", "plan", "bypass", "dont-ask"] as const;

function modeState(current: string): SessionModeState {
  return {
    currentModeId: current,
    availableModes: OFFERED_MODES.map((id) => ({ id, name: id })),
  };
}

/** How a fake turn saw a permission question end. */
export type Answer = { optionId: string } | "rejected" | "cancelled";

/** What a scripted turn can do. */
export interface FakeTurn {
  readonly sessionId: string;
  readonly text: string;
  /** Aborts when the client sends `session/cancel`. */
  readonly cancelled: AbortSignal;
  send(update: SessionUpdate): Promise<void>;
  /** Asks the client, as Riot's gate does; an id not offered is a rejection. */
  ask(toolCall: ToolCallUpdate, options: PermissionOption[]): Promise<Answer>;
  /** Sends `_riot/compaction` (only to a client that asked for it). */
  compaction(params: Record<string, unknown>): Promise<void>;
}

export type TurnScript = (turn: FakeTurn) => Promise<StopReason>;

interface FakeSession {
  cwd: string;
  mode: string;
  /** What `session/load` replays. */
  history: SessionUpdate[];
  running: AbortController | null;
}

export class FakeRiot {
  readonly sessions = new Map<string, FakeSession>();
  /** Things real Riot would have refused or never sent. */
  readonly violations: string[] = [];
  /** Every request and notification method received, in order. */
  readonly received: string[] = [];
  /** The server end of each connection. */
  readonly sockets: FakeSocket[] = [];
  private nextId = 1;
  private turns: TurnScript[] = [];

  constructor(
    private readonly options: {
      token: string;
      projects: string[];
      commands?: { name: string; description: string; hint?: string }[];
    },
  ) {}

  /** Queues the scripts of the next prompts, in order. */
  script(...turns: TurnScript[]): this {
    this.turns.push(...turns);
    return this;
  }

  /** A session Riot would list and load. */
  addSession(id: string, cwd: string, history: SessionUpdate[]): void {
    this.sessions.set(id, { cwd, mode: "default", history, running: null });
  }

  /** What the page's `new WebSocket(url)` would get. */
  connect = (url: string): SocketLike => {
    const parsed = new URL(url);
    if (parsed.pathname !== "/acp" || parsed.searchParams.get("token") !== this.options.token) {
      return refusedSocket();
    }
    const { client, server } = socketPair();
    this.sockets.push(server);
    // Riot reads one JSON-RPC message per text frame; anything else is a bug.
    server.addEventListener("message", (event) => {
      try {
        parseFrame((event as MessageEvent).data);
      } catch (e) {
        this.violations.push(`client sent a bad frame: ${(e as Error).message}`);
      }
    });
    this.serve(server);
    return client;
  };

  private serve(socket: FakeSocket): void {
    let wanted: string[] = [];
    const fail = (message: string) => new acp.RequestError(INVALID_PARAMS, message);
    const session = (id: string) => {
      const found = this.sessions.get(id);
      if (!found) throw fail(`unknown session \`${id}\``);
      return found;
    };
    const checkCwd = (cwd: string) => {
      if (!cwd.startsWith("/")) throw fail(`cwd ${cwd} is not an absolute path`);
      if (!this.options.projects.includes(cwd)) {
        throw fail(`cwd ${cwd}: No such file or directory (os error 2)`);
      }
    };
    const commands: SessionUpdate = {
      sessionUpdate: "available_commands_update",
      availableCommands: (this.options.commands ?? []).map((c) => ({
        name: c.name,
        description: c.description,
        input: c.hint === undefined ? null : { hint: c.hint },
      })),
    };
    const app = acp
      .agent({ name: "fake-riot" })
      .onRequest(acp.methods.agent.initialize, ({ params }) => {
        this.received.push("initialize");
        const asked = (params.clientCapabilities?._meta as { riot?: { notifications?: unknown } } | undefined)
          ?.riot?.notifications;
        wanted = Array.isArray(asked)
          ? asked.filter((n): n is string => n === USAGE || n === COMPACTION)
          : [];
        return {
          protocolVersion: acp.PROTOCOL_VERSION,
          agentCapabilities: {
            loadSession: true,
            sessionCapabilities: { list: {} },
            promptCapabilities: {},
            _meta: { riot: { requests: [SHUTDOWN], notifications: [USAGE, COMPACTION] } },
          },
          agentInfo: { name: "riot", version: "0.0.0-fake" },
        };
      })
      .onRequest(acp.methods.agent.session.new, ({ params, client }) => {
        this.received.push("session/new");
        checkCwd(params.cwd);
        const sessionId = `s${this.nextId++}`;
        this.sessions.set(sessionId, { cwd: params.cwd, mode: "default", history: [], running: null });
        // After the response, as Riot does.
        setTimeout(() => void client.notify(acp.methods.client.session.update, { sessionId, update: commands }), 0);
        return { sessionId, modes: modeState("default") };
      })
      .onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
        this.received.push("session/load");
        checkCwd(params.cwd);
        const found = session(params.sessionId);
        if (found.running) {
          throw fail(`session \`${params.sessionId}\` is running a prompt; load it when the turn ends`);
        }
        for (const update of found.history) {
          await client.notify(acp.methods.client.session.update, { sessionId: params.sessionId, update });
        }
        setTimeout(
          () =>
            void client.notify(acp.methods.client.session.update, {
              sessionId: params.sessionId,
              update: commands,
            }),
          0,
        );
        return { modes: modeState(found.mode) };
      })
      .onRequest(acp.methods.agent.session.list, ({ params }) => {
        this.received.push("session/list");
        const sessions = [...this.sessions.entries()]
          .filter(([, s]) => params.cwd == null || s.cwd === params.cwd)
          .reverse()
          .map(([sessionId, s]) => ({ sessionId, cwd: s.cwd, updatedAt: "2026-01-01T00:00:00Z" }));
        return { sessions };
      })
      .onRequest(acp.methods.agent.session.setMode, ({ params }) => {
        this.received.push("session/set_mode");
        const found = session(params.sessionId);
        if (!(OFFERED_MODES as readonly string[]).includes(params.modeId)) {
          throw fail(`unknown mode \`${params.modeId}\`; use one of ${OFFERED_MODES.join(", ")}`);
        }
        found.mode = params.modeId;
        return {};
      })
      .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
        this.received.push("session/cancel");
        this.sessions.get(params.sessionId)?.running?.abort();
      })
      .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
        this.received.push("session/prompt");
        const found = session(params.sessionId);
        const parts: string[] = [];
        for (const block of params.prompt) {
          if (block.type === "text") parts.push(block.text);
          else if (block.type === "resource_link") parts.push(`@${block.uri.replace(/^file:\/\//, "")}`);
          else if (block.type === "resource") throw fail("embedded resources are not supported; send a resource link");
          else throw fail("images and audio are not supported in prompts yet");
        }
        const text = parts.join("\n");
        if (text.trim() === "") throw fail("the prompt is empty");
        if (found.running) {
          throw fail("a prompt is already running in this session; cancel it or wait for its end");
        }
        const script = this.turns.shift();
        if (!script) {
          this.violations.push(`a prompt arrived with no scripted turn: ${text}`);
          throw new acp.RequestError(-32603, "the fake has no scripted turn for this prompt");
        }
        const running = new AbortController();
        found.running = running;
        found.history.push({ sessionUpdate: "user_message_chunk", content: { type: "text", text } });
        const sessionId = params.sessionId;
        const turn: FakeTurn = {
          sessionId,
          text,
          cancelled: running.signal,
          send: async (update) => {
            found.history.push(update);
            await client.notify(acp.methods.client.session.update, { sessionId, update });
          },
          ask: async (toolCall, options) => {
            const response: RequestPermissionResponse = await client.request(
              acp.methods.client.session.requestPermission,
              { sessionId, toolCall, options },
              { cancellationSignal: running.signal },
            );
            if (response.outcome.outcome === "cancelled") return "cancelled";
            const chosen = response.outcome.optionId;
            if (!options.some((o) => o.optionId === chosen)) {
              this.violations.push(`the client answered with an option it was not offered: ${chosen}`);
              return "rejected";
            }
            return { optionId: chosen };
          },
          compaction: async (extra) => {
            if (wanted.includes(COMPACTION)) await client.notify(COMPACTION, { sessionId, ...extra });
          },
        };
        try {
          const stopReason = await script(turn);
          if (wanted.includes(USAGE)) {
            await client.notify(USAGE, {
              sessionId,
              model: "mock-model",
              requests: 1,
              usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 3, cacheWriteTokens: 2 },
            });
          }
          return { stopReason };
        } finally {
          found.running = null;
        }
      });
    app.connect(socketStream(socket));
  }
}
