"""Use cases every surface calls: one function per user action, typed request in, typed
result out."""
