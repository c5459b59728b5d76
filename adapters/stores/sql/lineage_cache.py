"""The cached summaries a rewrite of some sessions leaves holding the old text.

A summary is cached under its lineage's root (``summary_cache.root_session_id``) and was
made from that root's transcript, its continued and delegated sessions included: a model
may paraphrase a secret ("the password is hunter2") where no rule finds it. So when a
rewrite changes a session, every summary cached under the session or any of its
ancestors goes. Ancestors, not only today's root: the root a session resolves to moves
up when an earlier parent is stored later, and rows under the old root still hold text.
A descendant's rows do not: its transcript never held its parent's messages. A rerank
batch's answer is cached under the batch's first root but may quote any session of the
batch (:data:`~harkback.stages.summary_port.RANKINGS`): every one goes with any change.

The walk adds each id once (``UNION``), so a loop of parents ends it. Both stores run
it; ``seed`` is a query of one column of session ids in the store's own dialect.

>>> "WITH RECURSIVE" in summaries_above("SELECT value FROM json_each(?)")
True
"""

from __future__ import annotations

from harkback.stages.summary_port import RANKINGS

KEY_COLUMNS = "root_session_id, content, query, model, prompt_version"


def summaries_above(seed: str) -> str:
    """The keys of the summaries cached under the sessions ``seed`` selects or any of
    their ancestors (parent ids followed through stored sessions), and every rerank
    batch's answer."""
    # substr, not LIKE: psycopg reads a '%' in the statement as a placeholder.
    return (f"WITH RECURSIVE up(id) AS ({seed} UNION "
            "SELECT s.parent_session_id FROM up JOIN sessions AS s ON s.id = up.id "
            "WHERE s.parent_session_id IS NOT NULL) "
            f"SELECT {KEY_COLUMNS} FROM summary_cache WHERE root_session_id IN "
            f"(SELECT id FROM up) OR substr(prompt_version, 1, {len(RANKINGS)}) = '{RANKINGS}'")
