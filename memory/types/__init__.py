"""Typed values the layers exchange: the entry filter (and, as they move here, the field
rules and request/result models). Pure pydantic: importing this package loads no engine."""
