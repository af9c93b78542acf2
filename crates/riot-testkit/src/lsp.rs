//! A language server stand-in for tests of Riot's language-server client.

/// A stand-in language server in Python: answers `initialize`, asks for
/// its configuration once initialized, publishes no diagnostics for each
/// opened or changed document, answers `shutdown`, and on `exit` writes
/// what it received, one a line (with the initialization options, the
/// settings, the configuration answer and each opened or changed
/// document's text as JSON), into the file named by its argument and
/// exits 0. Run it as `python3 -c RECORDING_SERVER OUT_FILE [SYNC]`:
/// SYNC 2 asks for incremental changes, recorded as
/// `textDocument/didChange LINE:COL-LINE:COL "TEXT"`.
pub const RECORDING_SERVER: &str = r#"
import json, sys
out = sys.stdout.buffer
def send(msg):
    body = json.dumps(msg).encode()
    out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    out.flush()
inp = sys.stdin.buffer
seen = []
while True:
    length = 0
    while True:
        line = inp.readline()
        if not line:
            sys.exit(1)
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    msg = json.loads(inp.read(length))
    method = msg.get("method")
    if method == "initialize":
        seen.append("initialize " + json.dumps(msg["params"].get("initializationOptions")))
    elif method == "workspace/didChangeConfiguration":
        seen.append(method + " " + json.dumps(msg["params"]["settings"]))
    elif method == "textDocument/didOpen":
        seen.append(method + " " + json.dumps(msg["params"]["textDocument"]["text"]))
    elif method == "textDocument/didChange":
        change = msg["params"]["contentChanges"][-1]
        if "range" in change:
            r = change["range"]
            at = "%d:%d-%d:%d" % (r["start"]["line"], r["start"]["character"], r["end"]["line"], r["end"]["character"])
            seen.append(method + " " + at + " " + json.dumps(change["text"]))
        else:
            seen.append(method + " " + json.dumps(change["text"]))
    elif method is None:
        seen.append("configuration " + json.dumps(msg.get("result")))
    else:
        seen.append(method)
    if method == "initialized":
        send({"jsonrpc": "2.0", "id": 99, "method": "workspace/configuration",
              "params": {"items": [{"section": "fake.lint"}, {"section": "other"}, {}]}})
    if method == "initialize":
        sync = int(sys.argv[2]) if len(sys.argv) > 2 else 1
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"capabilities": {"textDocumentSync": {"openClose": True, "change": sync}}}})
    elif method in ("textDocument/didOpen", "textDocument/didChange"):
        doc = msg["params"]["textDocument"]
        send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
              "params": {"uri": doc["uri"], "version": doc.get("version"), "diagnostics": []}})
    elif method == "shutdown":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
    elif method == "exit":
        open(sys.argv[1], "w").write("\n".join(seen))
        sys.exit(0)
"#;
