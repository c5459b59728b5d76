"""Composition: stages wired to adapters, the facade, the CLI and the agent tool."""
