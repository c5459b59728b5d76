"""Step 1, match: rankers that turn a request into message hits, best first.

``rankers`` holds the registry (:data:`~harkback.stages.match.rankers.RANKERS`); ``lexical``
is the default ranker, ``hybrid`` adds a dense ranking.
"""
