"""Step 1, match: rankers that turn a request into message hits, best first.

``rankers`` holds the registry (:data:`~harkback.stages.match.rankers.RANKERS`); ``lexical``
is the default ranker, built from ``plan`` (which words, which forms, which weights),
``score`` (BM25 of one message) and ``sessions`` (session ranking, recency and time);
``hybrid`` adds a dense ranking.
"""
