# shellcheck shell=bash disable=SC2034
# The npm package sets the test suite needs: one directory each, every one
# pinned by its package-lock.json. Sourced (not run) by scripts/test, which
# installs a set whose node_modules is missing, and by .ci/run, which
# installs them all afresh with `npm ci`. Add a directory here and both
# follow.
NPM_DIRS=(
  # The ACP conversation tests drive `riot acp` with the official
  # TypeScript SDK (crates/riot-cli/tests/acp_ts_client.rs and the other
  # acp_* tests there).
  tests/acp-client
  # riot-mcp's tests run real MCP servers from npm
  # (crates/riot-mcp/tests/servers).
  tests/mcp-servers
  # pyright and pyright-langserver for the Diagnostics tool's and
  # riot-lsp's tests (docs/diagnostics.md).
  tests/lsp
  # The web UI: its build, which `riot` embeds and the desktop app shows,
  # and its own tests (typecheck, Vitest, end to end in Chromium).
  desktop/ui
)
