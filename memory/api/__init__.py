"""The REST API (FastAPI) and the MCP server: thin layers over `memory`; the only FastAPI/MCP
imports. `memory.api.app.create_app` builds the app; `membank api` serves it with uvicorn."""
