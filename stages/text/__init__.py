"""Text shared by indexing and querying: tokens and CJK bigrams (``tokens``), English
stems and inflections (``stem``), irregular verbs and plurals (``irregular``), the
framing of Chinese, Japanese and Korean questions (``framing``), and katakana words as a
message writes them (``katakana``)."""
