"""The API's routers, one per area; `memory.api.app` includes them."""
