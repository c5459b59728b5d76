"""Step 4, summarize: the no-model summarizers (``plain``, built on the ``extractive``
kernel) and the model summarizer (``model``)."""
