"""The secret shapes redaction looks for: one :class:`Rule` per shape, in a table.

A rule is a regular expression and the substrings (*triggers*) it starts with, exact
or in lowercase: redaction finds the triggers with plain substring scans and tries the
expression only where one stands (a match must begin at a trigger), so most messages,
which hold no trigger at all, cost a few scans and no regular expression. Group names a rule may
use: ``pre`` and ``post`` (kept around the secret), ``k`` (the key name of an
assignment), ``q`` (its quote, matched again by ``(?P=q)``). Everything the match spans
but ``pre`` and ``post`` becomes the placeholder. A key-shaped string is a secret
whatever it says: vendors' documented example keys are caught too.

>>> RULES[0].kind, RULES[0].triggers
('private-key', ('-----BEGIN',))
"""

from __future__ import annotations

import attrs

PLACEHOLDER = "[secret:{kind}]"
"""What a secret becomes; ``kind`` names its shape."""

NOT_PLACEHOLDER = r"(?!\[secret:)"
"""Refuses to match a placeholder again, so redacting twice is redacting once."""

_L = r"(?<![A-Za-z0-9_])"
"""A token's left edge: no letter, digit or underscore just before it."""
_R = r"(?![A-Za-z0-9_])"
"""A token's right edge."""


@attrs.frozen
class Rule:
    """One secret shape: its ``kind`` (the placeholder's name), its ``pattern``, and the
    substrings a match starts with (see the module): as they are written when ``exact``
    (the pattern is case-sensitive), else in lowercase."""

    kind: str
    pattern: str
    triggers: tuple[str, ...]
    exact: bool = False
    lead: int = 0
    """How many characters before its trigger a match starts (``sk`` before ``k_live_``)."""


_AWS_PREFIXES = ("AKIA", "ASIA")
"""Access key ids: long-term and temporary (STS)."""

TOKENS: tuple[Rule, ...] = (
    # Vendor tokens: recognised by a documented prefix, so they are caught anywhere.
    Rule("anthropic-key", _L + r"sk-ant-[A-Za-z0-9_-]{20,}", ("sk-",)),
    # OpenAI keys: sk-, sk-proj-, sk-svcacct-, sk-admin-; a digit somewhere rules out
    # ordinary hyphenated words (branch names, CSS classes) that start with "sk-".
    Rule("openai-key", _L + r"sk-(?!ant-)(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{20,}", ("sk-",)),
    Rule("aws-access-key", _L + "(?:" + "|".join(_AWS_PREFIXES) + r")[A-Z0-9]{16}" + _R,
         _AWS_PREFIXES),
    Rule("github-token", _L + r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
         ("ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_")),
    Rule("gitlab-token", _L + r"gl(?:pat|dt)-[A-Za-z0-9_-]{20,}", ("glpat-", "gldt-")),
    Rule("slack-token", _L + r"xox[abposr]-[A-Za-z0-9-]{10,}", ("xox",)),
    Rule("stripe-key", _L + r"[spr]k_(?:live|test)_[A-Za-z0-9]{10,}", ("k_live_", "k_test_"),
         lead=1),
    Rule("google-api-key", _L + r"AIza[0-9A-Za-z_-]{35}" + r"(?![A-Za-z0-9_-])", ("AIza",)),
    Rule("jwt", _L + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*", ("eyJ",)),
)
"""Tokens recognised by their own shape, wherever they stand."""
TOKENS = tuple(attrs.evolve(rule, exact=True) for rule in TOKENS)

_KEY_NAMES = ("api", "access", "secret", "private", "auth", "signing", "encryption", "master",
              "client", "account", "license", "app", "service")
"""Names that make a lowercase ``…key`` a secret's key (``api_key``, ``accessKey``)."""
_KEY_AFTER = "|".join(f"(?<={name}[_-])|(?<={name})" for name in _KEY_NAMES)
_KEYWORD = (r"(?P<k>(?i:pass(?:w(?:or)?d|phrase)|secret|token)|(?<=[_-])KEY|(?i:(?:"
            + _KEY_AFTER + r")key))")
"""The key names an assignment starts at: password, secret, token anywhere (``db_password``,
``CLIENT_SECRET``), any upper-case ``…_KEY``, and lowercase ``key`` after a name of
:data:`_KEY_NAMES`."""
_SEPARATOR = (r"(?P<pre>" + _KEYWORD + r"(?:\\?[\"'])?"
              r"(?:\s*(?::=|=>|[:=])\s*(?P<q>\\?[\"'])|[ \t]*=[ \t]*|:[ \t]*))")
"""The key, its closing quote if any, and the separator: a quoted value may follow any
separator, a bare one ``=`` or ``:`` (scrub refuses bare values that read as code)."""
_VALUE = (NOT_PLACEHOLDER + r"(?!-----BEGIN)(?(q)[^\"'\\\n]{1,300}?(?P<post>(?P=q))"
          r"|[^\s\"'`,;&<>(){}\[\]|\\]+)")

CJK_KEYS = {"密码": "password", "密碼": "password", "口令": "password", "パスワード": "password",
            "暗証番号": "password", "비밀번호": "password", "패스워드": "password",
            "密钥": "api-key", "密鑰": "api-key", "秘钥": "api-key", "秘鑰": "api-key",
            "令牌": "token", "トークン": "token", "토큰": "token"}
"""Chinese, Japanese and Korean key names, with the kind of secret each names."""
_CJK_SEPARATOR = (r"(?P<pre>(?P<k>" + "|".join(CJK_KEYS) + r")[ \t]*[:=\uff1a\uff1d][ \t]*"
                  r"(?P<q>[\"'\u201c\u300c\u300e])?)")
"""A CJK key, a colon (also the full-width ``：``) or ``=``, and a quote if any."""
_CJK_VALUE = (NOT_PLACEHOLDER + r"(?(q)[^\"'\u201d\u300d\u300f\n]{1,300}?"
              r"(?P<post>[\"'\u201d\u300d\u300f])|[A-Za-z0-9!#$%*+\-_.~@^?/=]+)")
"""Quoted: up to the closing quote. Bare: ASCII only, so the sentence the value stands
in (``密码：hunter2，然后重启``) stays."""

RULES: tuple[Rule, ...] = (
    # The whole block, or to the end of its base64 when the END line is missing (a
    # truncated paste); inside JSON its newlines are the two characters \n.
    Rule("private-key", r"-----BEGIN[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----"
         r"(?:(?:(?!-----BEGIN)[\s\S]){0,20000}?-----END[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----"
         r"|(?:(?:\r?\n|\\n)+(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+: [^\n\\]*))*)",
         ("-----BEGIN",), exact=True),
    *TOKENS,
    # Anchored at the trigger of a more general rule, so one search finds both.
    Rule("slack-webhook", r"(?<=https)(?P<pre>://hooks\.slack\.com/(?:services|workflows|"
         r"triggers)/)[A-Za-z0-9/_-]{8,}", ("://",)),
    Rule("azure-key", r"(?P<pre>(?i:(?<=account)|(?<=sharedaccess))(?i:key)=)" + NOT_PLACEHOLDER
         + r"[^;\s\"']+", ("key",)),
    Rule("bearer-token", r"(?P<pre>(?i:bearer)\s+)" + NOT_PLACEHOLDER
         + r"[A-Za-z0-9._~+/-]{16,}=*", ("bearer",)),
    Rule("basic-auth", r"(?P<pre>(?i:authorization)\"?\s*[:=]\s*\"?(?i:basic)\s+)"
         + NOT_PLACEHOLDER + r"[A-Za-z0-9+/]{8,}=*", ("authorization",)),
    # scheme://user:password@host: the user and host stay.
    Rule("password", r"(?P<pre>://" + NOT_PLACEHOLDER + r"[^\s:/@'\"<>]{1,100}:)" + NOT_PLACEHOLDER
         + r"[^\s@/'\"<>]{1,200}(?P<post>@)", ("://",)),
    # Assignments whose key names a secret: password=x, "api_key": "x", SECRET: x,
    # export GITHUB_TOKEN=x. The kind follows the key name (see scrub.assignment_kind).
    Rule("assignment", _SEPARATOR + _VALUE, ("passw", "passphrase", "secret", "token", "key")),
    # The same in Chinese, Japanese and Korean: 数据库密码：x, パスワード: "x", 비밀번호=x.
    Rule("assignment", _CJK_SEPARATOR + _CJK_VALUE, tuple(CJK_KEYS)),
)
"""Every rule, most specific first: where two match at one place, the first wins."""

GATES: tuple[str, ...] = ("-", "gh", "A(?:KIA|SIA|Iza)")
"""Substrings looked for before the triggers that hold them: a text without ``gh`` is not
searched for ``ghp_``, ``gho_``, ... one by one. Every scan reads the whole text, but a
single character is found by ``memchr``, almost for free: ``-`` guards ``sk-``, ``glpat-``
and ``-----BEGIN``, and many texts have none. A trigger that is its own gate is simply
searched for once, whichever rules share it. A gate with parentheses is a regular
expression: ``AKIA``, ``ASIA`` and ``AIza`` cost one scan for the three (Python's regular
expressions find a rare first letter, ``A``, as fast as a substring)."""
