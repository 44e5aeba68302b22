"""Adapters that let other frameworks use membank as their memory: `langgraph` (a LangGraph
`BaseStore`). Each needs its extra (`membank[langgraph]`) and is imported only by name, so
importing `memory` or starting the `membank` command never loads a framework."""
