"""The REST API and the MCP server: thin layers over `memory`, the only fastapi/mcp imports."""
