"""The secret shapes redaction looks for: one :class:`Rule` per shape, in a table.

A rule is a regular expression and the cheap substrings (*triggers*) of which at least
one must occur in the lowercased text before the expression is worth running: most
messages hold no trigger at all and cost a few substring scans. Group names a rule may
use: ``pre`` and ``post`` (kept around the secret), ``k`` (the key name of an
assignment), ``q`` (its quote, matched again by ``(?P=q)``). Everything the match spans
but ``pre`` and ``post`` becomes the placeholder. A key-shaped string is a secret
whatever it says: vendors' documented example keys are caught too.

>>> RULES[0].kind, RULES[0].triggers[:2]
('private-key', ('private key-----', 'private key block-----'))
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
    lowercase substrings one of which a text must hold for the pattern to be tried."""

    kind: str
    pattern: str
    triggers: tuple[str, ...]


_AWS_PREFIXES = ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AIPA", "ANPA", "ANVA",
                 "AROA", "APKA")

TOKENS: tuple[Rule, ...] = (
    # Vendor tokens: recognised by a documented prefix, so they are caught anywhere.
    Rule("anthropic-key", _L + r"sk-ant-[A-Za-z0-9_-]{20,}", ("sk-ant-",)),
    # OpenAI keys: sk-, sk-proj-, sk-svcacct-, sk-admin-; a digit somewhere rules out
    # ordinary hyphenated words (branch names, CSS classes) that start with "sk-".
    Rule("openai-key", _L + r"sk-(?!ant-)(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{20,}", ("sk-",)),
    Rule("aws-access-key", _L + "(?:" + "|".join(_AWS_PREFIXES) + r")[A-Z0-9]{16}" + _R,
         tuple(p.lower() for p in _AWS_PREFIXES)),
    Rule("github-token", _L + r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
         ("ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_")),
    Rule("gitlab-token", _L + r"gl(?:pat|dt|rt|ptt|cbt|oas)-[A-Za-z0-9_-]{20,}",
         ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "gloas-")),
    Rule("slack-token", _L + r"xox[abposr]-[A-Za-z0-9-]{10,}", ("xox",)),
    Rule("stripe-key", _L + r"(?:(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}|"
         r"whsec_[A-Za-z0-9]{20,})", ("_live_", "_test_", "whsec_")),
    Rule("google-api-key", _L + r"AIza[0-9A-Za-z_-]{35}" + r"(?![A-Za-z0-9_-])", ("aiza",)),
    Rule("google-oauth-token", _L + r"(?:ya29\.[0-9A-Za-z_-]{20,}|GOCSPX-[0-9A-Za-z_-]{20,})",
         ("ya29.", "gocspx-")),
    Rule("npm-token", _L + r"npm_[A-Za-z0-9]{36}" + _R, ("npm_",)),
    Rule("huggingface-token", _L + r"hf_[A-Za-z0-9]{30,}" + _R, ("hf_",)),
    Rule("sendgrid-key", _L + r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", ("sg.",)),
    Rule("jwt", _L + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*", ("eyj",)),
)
"""Tokens recognised by their own shape, wherever they stand."""

_KEY_NAMES = (r"api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key|auth[_-]?key|"
              r"signing[_-]?key|encryption[_-]?key|master[_-]?key|client[_-]?key|"
              r"account[_-]?key|license[_-]?key|app[_-]?key|service[_-]?key")
_KEYWORD = r"(?P<k>(?i:passw(?:or)?d|passphrase|secret|token|" + _KEY_NAMES + r")|[_-]KEY)"
_SEPARATOR = (r"(?P<pre>" + _KEYWORD + r"(?:\\?[\"'])?"
              r"(?:\s*(?::=|=>|[:=])\s*(?P<q>\\?[\"'])|[ \t]*=[ \t]*|:[ \t]*))")
"""The key, its closing quote if any, and the separator: a quoted value may follow any
separator, a bare one ``=`` or ``:`` (scrub refuses bare values that read as code)."""
_VALUE = (NOT_PLACEHOLDER + r"(?!-----BEGIN)(?(q)[^\"'\\\n]{1,300}?(?P<post>(?P=q))"
          r"|[^\s\"'`,;&<>(){}\[\]|\\]+)")

RULES: tuple[Rule, ...] = (
    # The whole block, or to the end of its base64 when the END line is missing (a
    # truncated paste); inside JSON its newlines are the two characters \n.
    Rule("private-key", r"-----BEGIN[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----"
         r"(?:(?:(?!-----BEGIN)[\s\S]){0,20000}?-----END[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----"
         r"|(?:(?:\r?\n|\\n)+(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+: [^\n\\]*))*)",
         ("private key-----", "private key block-----")),
    *TOKENS,
    Rule("slack-webhook", r"(?P<pre>https://hooks\.slack\.com/(?:services|workflows|triggers)/)"
         r"[A-Za-z0-9/_-]{8,}", ("hooks.slack.com",)),
    Rule("azure-key", r"(?P<pre>(?i:AccountKey|SharedAccessKey|SharedAccessSignature)=)"
         + NOT_PLACEHOLDER + r"[^;\s\"']+", ("accountkey=", "sharedaccesskey=",
                                              "sharedaccesssignature=")),
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
)
"""Every rule, most specific first: where two could match at one place, the first wins."""
