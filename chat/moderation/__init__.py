"""Moderation: prohibited requests refused before any search or LLM, and how rules match."""
