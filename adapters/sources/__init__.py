"""Importers of other agents' transcripts: Hermes, Claude Code, Codex."""
