"""What a recap quotes, and whether the transcript holds it (grounding of model recaps)."""

from __future__ import annotations

from harkback.stages.summarize.grounding import quoted_items, unquoted

SEEN = ("[USER]: the api cannot reach db\n\n[ASSISTANT]: Run `docker network create app-net`"
        " and see https://docs.docker.com/network/ or ~/compose/app.yml")


def test_prose_with_slashes_is_not_taken_for_a_path() -> None:
    """and/or, TCP/IP, 1/2 and a lone /v1 are prose, not quoted paths."""
    assert quoted_items("It was an and/or choice over TCP/IP, 1/2 done, via /v1 only.") == ()


def test_a_code_block_line_counts_and_its_spacing_does_not() -> None:
    """Each line of a fenced block is checked, with runs of whitespace as one space."""
    recap = "Ran:\n```sh\ndocker  network create app-net\ndocker compose down\n```\n"
    assert unquoted(recap, SEEN) == ("docker compose down",)


def test_urls_and_paths_the_session_named_pass_with_trailing_punctuation() -> None:
    """A URL or path followed by a full stop or closing bracket is still found."""
    recap = "See https://docs.docker.com/network/. Config (~/compose/app.yml)."
    assert unquoted(recap, SEEN) == ()
