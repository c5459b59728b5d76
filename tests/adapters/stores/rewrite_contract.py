"""The text-rewrite capability's contract on cached summaries (``harkback redact``): every
store that offers it passes these.

:class:`RewriteContract` is mixed into each store's contract test class, beside
:class:`~tests.adapters.stores.store_contract.StoreContract` (which checks the rewrite of
the texts themselves).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from harkback.stages.ports import SessionStore, SummaryCache, SummaryKey
from harkback.stages.records import Conversation, Summary
from harkback.stages.redact.scrub import redact
from harkback.stages.rerank.prompt import PROMPT_VERSION as RERANK_VERSION
from harkback.stages.rewrite import TextRewriter
from tests.adapters.stores.store_contract import ok

Make = Callable[..., Conversation]

PARAPHRASE = "They logged in; the password is hunter2."
"""A model's summary of ``PASSWORD=hunter2``: prose no redaction rule finds."""


def _redacted(text: str) -> str:
    return redact(text)[0]


def summary_key(root: str) -> SummaryKey:
    """The key of a summary cached under ``root`` in these tests."""
    return SummaryKey(root_session_id=root, content="c", query="login", model="m",
                      prompt_version="v")


def _parts(store: SessionStore) -> tuple[SummaryCache, TextRewriter]:
    cache, rewriter = store.summary_cache(), store.text_rewriter()
    assert cache is not None and rewriter is not None
    return cache, rewriter


class RewriteContract:
    """What a store's rewrite does to the summaries cached for what it rewrote."""

    async def test_a_summary_of_a_rewritten_lineage_goes_though_no_rule_finds_its_secret(
            self, store: SessionStore, make_conversation: Make) -> None:
        """A summary cached under a rewritten session, or under its parent (the lineage's
        root), or under a session that was its root before the parent was stored, goes;
        one of a session without secrets, or of a later child of a rewritten session
        (its transcript never held the parent's text), stays. A row both under a changed
        lineage and changed itself counts once, in the dry run too."""
        await ok(store.ingest([
            make_conversation("root", ("user", "plan the deploy")),
            make_conversation("child", ("user", "export PASSWORD=hunter2"), parent="root"),
            make_conversation("solo", ("user", "PASSWORD=hunter2 for the db")),
            make_conversation("later", ("user", "rotate it"), parent="solo"),
            make_conversation("clean", ("user", "docker dns"))]))
        cache, rewriter = _parts(store)
        for root in ("root", "child", "later", "clean"):
            await ok(cache.keep_summary(summary_key(root),
                                        Summary(text=PARAPHRASE, kind="llm")))
        await ok(cache.keep_summary(summary_key("solo"),
                                    Summary(text="Set PASSWORD=hunter2.", kind="llm")))
        dry = await ok(rewriter.rewrite_texts(_redacted, dry_run=True))
        assert await ok(cache.cached_summary(summary_key("root"))) is not None
        done = await ok(rewriter.rewrite_texts(_redacted))
        kept = {root for root in ("root", "child", "solo", "later", "clean")
                if await ok(cache.cached_summary(summary_key(root))) is not None}
        again = await ok(rewriter.rewrite_texts(_redacted))
        assert (dry.sessions, dry.summaries_dropped) == (2, 3)
        assert (done.sessions, done.summaries_dropped) == (2, 3)
        assert kept == {"later", "clean"}
        assert (again.sessions, again.summaries_dropped) == (0, 0)

    async def test_a_rerank_answer_goes_whichever_of_its_batch_was_rewritten(
            self, store: SessionStore, make_conversation: Make) -> None:
        """A rerank batch's answer is cached under the batch's first root only, but the
        model's reply may quote any session of the batch: a rewrite that changes a session
        drops every such answer; one that changes nothing keeps them, and summaries of
        other sessions stay."""
        await ok(store.ingest([
            make_conversation("clean", ("user", "docker dns")),
            make_conversation("solo", ("user", "PASSWORD=hunter2 for the db"))]))
        cache, rewriter = _parts(store)
        ranking = attrs.evolve(summary_key("clean"), prompt_version=RERANK_VERSION)
        answer = Summary(text="Session B says the password is hunter2. Ranking: B", kind="llm")
        await ok(cache.keep_summary(ranking, answer))
        await ok(cache.keep_summary(summary_key("clean"), Summary(text="dns", kind="llm")))
        dry = await ok(rewriter.rewrite_texts(_redacted, dry_run=True))
        done = await ok(rewriter.rewrite_texts(_redacted))
        gone = await ok(cache.cached_summary(ranking)) is None
        await ok(cache.keep_summary(ranking, answer))  # made again after the redact
        again = await ok(rewriter.rewrite_texts(_redacted))
        assert (dry.sessions, dry.summaries_dropped) == (1, 1)
        assert (done.sessions, done.summaries_dropped, gone) == (1, 1, True)
        assert await ok(cache.cached_summary(summary_key("clean"))) is not None
        assert (again.sessions, again.summaries_dropped) == (0, 0)
        assert await ok(cache.cached_summary(ranking)) is not None

    async def test_a_question_cached_case_folded_with_an_aws_key_goes(
            self, store: SessionStore, make_conversation: Make) -> None:
        """A harkback before ``key_query`` cached a question's AWS key lower-cased, where
        the rule (upper-case ``AKIA``) does not find it: redact drops that row all the same,
        and keeps one of an ordinary question."""
        await ok(store.ingest([make_conversation("clean", ("user", "docker dns"))]))
        cache, rewriter = _parts(store)
        leaked = attrs.evolve(summary_key("clean"), query="kiwi key akiaiosfodnn7example")
        await ok(cache.keep_summary(leaked, Summary(text="kiwi", kind="llm")))
        await ok(cache.keep_summary(summary_key("clean"), Summary(text="dns", kind="llm")))
        done = await ok(rewriter.rewrite_texts(_redacted))
        assert (done.sessions, done.summaries_dropped) == (0, 1)
        assert await ok(cache.cached_summary(leaked)) is None
        assert await ok(cache.cached_summary(summary_key("clean"))) is not None
