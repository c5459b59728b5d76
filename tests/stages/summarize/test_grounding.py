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


def test_a_path_written_against_chinese_words_is_read_without_them() -> None:
    """修改了/etc/nginx/nginx.conf文件 quotes /etc/nginx/nginx.conf, which the session holds;
    the path ran on into 文件 and the recap was refused."""
    seen = "[ASSISTANT]: 编辑 /etc/nginx/nginx.conf 然后 reload"
    assert quoted_items("修改了/etc/nginx/nginx.conf文件") == ("/etc/nginx/nginx.conf",)
    assert unquoted("修改了 /etc/nginx/nginx.conf文件，然后重新加载。", seen) == ()
    assert quoted_items("文档在https://x.io/a。") == ("https://x.io/a",)
