"""The use cases every surface calls (CLI, REST, MCP, the lab, flows): one function per user
action, a typed request in and a typed result out; surfaces only translate."""
