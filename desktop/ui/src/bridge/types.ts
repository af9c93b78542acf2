// The ACP types the views see. Views import them from here, never from the
// SDK, so `src/bridge/` stays the one place that knows how Riot is reached.

export type {
  AvailableCommand,
  ContentBlock,
  Plan,
  PlanEntry,
  PermissionOption,
  PermissionOptionKind,
  RequestPermissionRequest,
  SessionInfo,
  SessionMode,
  SessionModeState,
  SessionNotification,
  SessionUpdate,
  StopReason,
  ToolCall,
  ToolCallContent,
  ToolCallLocation,
  ToolCallStatus,
  ToolCallUpdate,
  ToolKind,
} from "@agentclientprotocol/sdk";
