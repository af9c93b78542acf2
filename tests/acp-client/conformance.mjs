// Protocol conformance: every message Riot sends is checked against the
// ACP JSON schema that ships with the pinned SDK
// (`@agentclientprotocol/sdk/schema/v1/schema.json`), with ajv. Requests and
// notifications are checked by their method's params type; responses by
// the type of the request they answer (the client's requests are watched on
// the way out to know it). Riot's `_riot/...` extension messages are
// outside the schema and only checked for their JSON-RPC shape.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

import Ajv2020 from "ajv/dist/2020.js";

const require = createRequire(import.meta.url);
const schemaPath = require.resolve("@agentclientprotocol/sdk/schema/v1/schema.json");
const schema = JSON.parse(readFileSync(schemaPath, "utf8"));

// The schema's own annotations (`x-deserialize-…`, `format: uint64`) are
// not validation keywords; `discriminator` is.
const ajv = new Ajv2020({ strict: false, discriminator: true, validateFormats: false, allErrors: true });
ajv.addSchema(schema, "acp");
const validators = new Map();
function validator(def) {
  if (!(def in schema.$defs)) throw new Error(`the ACP schema has no type ${def}`);
  if (!validators.has(def)) validators.set(def, ajv.getSchema(`acp#/$defs/${def}`));
  return validators.get(def);
}

/** Params type of each method an agent may call on a client. */
const AGENT_REQUESTS = {
  "session/request_permission": "RequestPermissionRequest",
  "fs/read_text_file": "ReadTextFileRequest",
  "fs/write_text_file": "WriteTextFileRequest",
  "terminal/create": "CreateTerminalRequest",
  "terminal/output": "TerminalOutputRequest",
  "terminal/release": "ReleaseTerminalRequest",
  "terminal/wait_for_exit": "WaitForTerminalExitRequest",
  "terminal/kill": "KillTerminalRequest",
};
const AGENT_NOTIFICATIONS = { "session/update": "SessionNotification" };
/** Result type of each client request an agent answers. */
const RESULTS = {
  initialize: "InitializeResponse",
  authenticate: "AuthenticateResponse",
  logout: "LogoutResponse",
  "session/new": "NewSessionResponse",
  "session/load": "LoadSessionResponse",
  "session/list": "ListSessionsResponse",
  "session/delete": "DeleteSessionResponse",
  "session/resume": "ResumeSessionResponse",
  "session/close": "CloseSessionResponse",
  "session/set_mode": "SetSessionModeResponse",
  "session/set_config_option": "SetSessionConfigOptionResponse",
  "session/prompt": "PromptResponse",
};

/** What was checked, by kind, and every violation found. */
export const conformance = { checked: {}, violations: [] };

function count(kind) {
  conformance.checked[kind] = (conformance.checked[kind] ?? 0) + 1;
}

function check(def, value, what, message) {
  const validate = validator(def);
  if (!validate(value)) {
    conformance.violations.push({ what, def, errors: validate.errors, message });
  }
  count(def);
}

function isExtension(method) {
  return typeof method === "string" && method.startsWith("_");
}

/**
 * Wraps an SDK `Stream` so every message the agent sends is validated
 * (and the client's requests are remembered to type their responses).
 */
export function validating(stream) {
  const pending = new Map(); // id → method of the client's requests
  const outgoing = new TransformStream({
    transform(message, controller) {
      if (message && "method" in message && "id" in message) pending.set(message.id, message.method);
      controller.enqueue(message);
    },
  });
  outgoing.readable.pipeTo(stream.writable).catch(() => {});
  const incoming = new TransformStream({
    transform(message, controller) {
      inspect(message, pending);
      controller.enqueue(message);
    },
  });
  stream.readable.pipeTo(incoming.writable).catch(() => {});
  return { readable: incoming.readable, writable: outgoing.writable };
}

function inspect(message, pending) {
  if (message?.jsonrpc !== "2.0") {
    conformance.violations.push({ what: "jsonrpc must be \"2.0\"", message });
    return;
  }
  if ("method" in message) {
    const kind = "id" in message ? "request" : "notification";
    if (isExtension(message.method)) {
      count(`extension ${kind}`);
      return;
    }
    const table = kind === "request" ? AGENT_REQUESTS : AGENT_NOTIFICATIONS;
    const def = table[message.method];
    if (def === undefined) {
      conformance.violations.push({ what: `an agent ${kind} the protocol does not define`, message });
      return;
    }
    check(def, message.params, `${message.method} params`, message);
    return;
  }
  const method = pending.get(message.id);
  pending.delete(message.id);
  if (method === undefined) {
    // A parse error answers no request (id null).
    if (message.id === null && message.error) {
      check("Error", message.error, "an error without a request", message);
      return;
    }
    conformance.violations.push({ what: "a response to no request the client sent", message });
    return;
  }
  if ("error" in message) {
    check("Error", message.error, `${method} error`, message);
  } else if (isExtension(method)) {
    count("extension response");
  } else {
    check(RESULTS[method], message.result, `${method} result`, message);
  }
}
