"""Models behind the ports: the OpenAI-compatible chat model and the embedders."""
