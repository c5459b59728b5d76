"""The optional rerank stage: a chat model reorders and drops resolve's candidates."""
