"""Words quoted by :mod:`harkback.stages.shell_words`, shown as human output shows a line
(:func:`~harkback.pipeline.terminal.line_of`) and read back by real shells in the locales
users run them in: the pasted word must be the word that was quoted."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from harkback.pipeline.terminal import line_of
from harkback.stages.shell_words import shell_joined, shell_quoted

WORDS = ["it's", "back\\slash", "$HOME", "line\nbreak", "tab\there", "next\u0085line",
         "para\u2028graph", "right\u202eleft", "isolate\u2066x\u2069", "esc\x1b[31m",
         "undecodable\udcff", "all 'of\\ $them\t\u2028"]
SHELLS = [shell for shell in ("bash", "zsh") if shutil.which(shell)]


def read_back(shell: str, locale: str, words: str) -> list[str]:
    """The arguments ``shell`` in ``locale`` makes of ``words`` as output shows them."""
    done = subprocess.run(
        [shell, "-c", f"printf '%s\\0' {line_of(words)}"], capture_output=True, check=True,
        timeout=30, env={"PATH": os.environ["PATH"], "LC_ALL": locale})
    return [os.fsdecode(arg) for arg in done.stdout.split(b"\0")[:-1]]


@pytest.mark.parametrize("locale", ["C", "C.UTF-8"])
@pytest.mark.parametrize("shell", SHELLS)
def test_each_quoted_word_reads_back_as_itself(shell: str, locale: str) -> None:
    """In the C locale (a bare container, cron) bash kept ``$'\\u2028'`` as six characters
    and zsh refused it ("character not in range"): a pasted hint named another session. A
file name's undecodable byte was shown as ``\\xff`` inside plain quotes, typed as such."""
    for word in WORDS:
        assert read_back(shell, locale, shell_quoted(word)) == [word], (shell, locale, word)


@pytest.mark.parametrize("shell", SHELLS)
def test_joined_words_read_back_as_those_words(shell: str) -> None:
    """Several words, each quoted its own way, stay as many arguments."""
    assert read_back(shell, "C", shell_joined(WORDS)) == WORDS
