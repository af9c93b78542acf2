// The bridge: the only module that talks to Riot (ACP over `riot serve`'s
// WebSocket). Views and state import from here.

export { connectToRiot, RiotConnection, RiotError } from "./connection";
export type { BridgeEvents, NewSessionOptions, OpenedSession, PromptImage } from "./connection";
export { worktreeOf } from "./worktree";
export type { SessionWorktree } from "./worktree";
export { endpointFromPage, MissingTokenError } from "./endpoint";
export type { Endpoint } from "./endpoint";
export {
  CHECKPOINTS,
  CONFIG,
  CONFIG_SET,
  FILES,
  PROVIDERS,
  REWIND,
  SESSION_DELETE,
  SESSION_RENAME,
  SET_MODEL,
  TERMINAL,
  TERMINAL_RESIZE,
  TERMINAL_WRITE,
  permissionDetail,
} from "./riot-ext";
export type {
  CompactionNotice,
  KeyStatus,
  ModelConfig,
  ModelConfigInput,
  Provider,
  RewindFiles,
  RewindOptions,
  RewindPoint,
  RewindResult,
  RewindScope,
  RiotCapabilities,
  SessionOptions,
  TerminalNotice,
  TurnUsage,
} from "./riot-ext";
export { BACKGROUND, BACKGROUND_STOP, DELIVER, QUEUE } from "./parallel";
export type { BackgroundNotice, BackgroundState, BackgroundTask, QueuedMessage, QueueNotice, QueueState } from "./parallel";
export { SocketClosedError } from "./socket";
export type * from "./types";
