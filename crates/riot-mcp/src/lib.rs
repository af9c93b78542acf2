//! # riot-mcp — MCP servers as Riot tools
//!
//! Will connect to MCP servers with the official `rmcp` SDK and adapt their
//! tools to `riot_protocol::Tool` (ARCHITECTURE §6.7, §13).
//!
//! Empty until the MCP issue lands.
