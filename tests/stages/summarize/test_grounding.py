"""What a recap quotes, and whether the transcript holds it (grounding of model recaps)."""

from __future__ import annotations

import pytest

from harkback.stages.summarize.grounding import quoted_items, recap_problem, refused, unquoted

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


CLEANED = ("[USER]: free some disk\n\n[ASSISTANT]: Run `sudo rm -rf /var/lib/docker/tmp/cache`"
           " and `git push origin fix-dns`; the socket is /var/run/docker.sock. See"
           " ./config.yaml and /etc/nginx/.")


@pytest.mark.parametrize(("cut", "whole"), [
    ("`sudo rm -rf /var/lib/docker`", "`sudo rm -rf /var/lib/docker/tmp/cache`"),
    ("`rm -rf /`", "`rm -rf /var/lib/docker/tmp/cache`"),
    ("`git push origin fix`", "`git push origin fix-dns` (`git push`)"),
    ("/lib/docker", "/var/lib/docker/tmp/cache"),
    ("/var/run/docker.", "/var/run/docker.sock."),
    ("`/config.yaml`", "`config.yaml` and /etc/nginx.")])
def test_a_command_or_path_cut_short_is_not_held(cut: str, whole: str) -> None:
    """A quoted command or path that is only the start (or the end) of the transcript's
    is another one: `sudo rm -rf /var/lib/docker` passed in a session that removed a
    cache below it, as `rm -rf /` did. Quoted whole (a file without its ``./``, a folder
    without its trailing slash, a command without its arguments), it passes."""
    assert unquoted(f"Ran {cut}", CLEANED) != ()
    assert unquoted(f"Ran {whole}", CLEANED) == ()


@pytest.mark.parametrize(("quoted", "held"), [
    ("`/var/lib/postgresql/data`", "docker run -v pgdata:/var/lib/postgresql/data postgres"),
    ("`/var/lib/docker`", "dockerd --data-root=/var/lib/docker"),
    ("`/var/lib/docker`", "docker run -v /var/lib/docker:/data alpine"),
    ("`src/app.py`", "src/app.py:42: error: name 'x' is not defined")])
def test_a_path_beside_a_colon_or_an_equals_sign_is_held(quoted: str, held: str) -> None:
    """A path given as a flag's value (``--data-root=``), either side of a volume's colon or
    before a compiler's ``:42:`` is the session's path whole: quoting it is grounded."""
    assert unquoted(f"Ran {quoted}", f"[ASSISTANT]: {held}") == ()


def test_a_path_written_against_chinese_words_is_read_without_them() -> None:
    """修改了/etc/nginx/nginx.conf文件 quotes /etc/nginx/nginx.conf, which the session holds;
    the path ran on into 文件 and the recap was refused."""
    seen = "[ASSISTANT]: 编辑 /etc/nginx/nginx.conf 然后 reload"
    assert quoted_items("修改了/etc/nginx/nginx.conf文件") == ("/etc/nginx/nginx.conf",)
    assert unquoted("修改了 /etc/nginx/nginx.conf文件，然后重新加载。", seen) == ()
    assert quoted_items("文档在https://x.io/a。") == ("https://x.io/a",)


@pytest.mark.parametrize("answer", [
    "I'm sorry, but I can't help with that.", "I am sorry, I cannot summarize this session.",
    "Sorry, I'm unable to provide a recap of this conversation.",
    "I can't assist with that request.", "As an AI, I don't keep records of sessions.",
    "I’m sorry, but I can’t help with that.",
    "抱歉，我无法总结这段对话。", "申し訳ありませんが、お手伝いできません。",
    "죄송하지만 도와드릴 수 없습니다."])
def test_short_refusals_are_no_recap(answer: str) -> None:
    assert refused(answer)
    assert recap_problem(answer, "[USER]: nginx times out") is not None


@pytest.mark.parametrize("answer", [
    "The user couldn't reach postgres; `docker network create app-net` fixed it.",
    "Sorry-looking logs aside, the deploy failed because the image tag was wrong.",
    "I can't reproduce it, said the user; the fix was a longer proxy_read_timeout.",
    "The build was unable to find libssl until the user installed libssl-dev.",
    "I'm sorry " + "x" * 500 + " can't"])
def test_recaps_that_mention_failing_are_not_refusals(answer: str) -> None:
    assert not refused(answer)


SPLIT = ("[USER]: split api/lumen/billing.py; DATABASE_URL is "
         "postgresql://lumen@postgres:5432/lumen\n\n[TOOL:write_file]: Wrote 212 lines to "
         "api/lumen/billing/invoices.py\n\n[ASSISTANT]: cache at redis://cache:6379/0")


@pytest.mark.parametrize(("invented", "held"), [
    ("created lumen/billing/refunds.py", "created lumen/billing/invoices.py"),
    ("split api/lumen/billing/app.py", "split api/lumen/billing.py"),
    ("set DATABASE_URL=postgresql://admin@db:5432/prod",
     "set DATABASE_URL=postgresql://lumen@postgres:5432/lumen"),
    ("pointed it at redis://cache:6380/0", "pointed it at redis://cache:6379/0")])
def test_a_relative_path_or_a_url_of_any_scheme_is_checked(invented: str, held: str) -> None:
    """A file path without a leading ``/`` (``lumen/billing/refunds.py``) and a URL of a
    scheme other than http (``postgresql://admin@db``) are as exact as a rooted path or
    an https URL: invented, both passed unchecked; the session's own (or its end) pass."""
    assert unquoted(f"The user {invented}.", SPLIT) != ()
    assert unquoted(f"The user {held}.", SPLIT) == ()


def test_prose_with_a_slash_before_a_framework_name_is_no_path() -> None:
    """"Express/Node.js" names two frameworks and "README.md/CHANGELOG.md" two files, not
    a path the session must hold."""
    assert quoted_items("An Express/Node.js app, read/write access, 1/2.5 done, "
                        "README.md/CHANGELOG.md updated.") == ()
