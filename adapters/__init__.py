"""The outside world: session stores, the chat model, importers of foreign transcripts."""
