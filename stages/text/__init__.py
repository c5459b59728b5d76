"""Text shared by indexing and querying: tokens and CJK bigrams (``tokens``), English
inflectional stems (``stem``), English irregular verbs (``irregular``)."""
