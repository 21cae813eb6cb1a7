"""What a secret looks like, by name and by shape, and the text of a message with none left in it.

Below every stage (it imports nothing of gen), so the loader, the flag checks, the
importer and :class:`generator.errors.Diagnostic` itself share one answer:

* :func:`is_secret_env_name`: a variable named like a secret (``HF_TOKEN``, ``*_API_KEY``,
  ``AZURE_OPENAI_KEY``, ``GITHUB_PAT``, ...). The maintained list is ``ENV_RULES``: exact
  provider names, then the words a name ends with or holds; ``tests/test_secrecy.py``
  holds the table of real provider and tool names it must catch, and every variable the
  committed SGLang pins read that it must not.
* :func:`is_secret_flag_name`: a flag named like a secret, for a flag the pin does not
  know (``--hf-token``); a flag the pin knows is judged by its catalog entry
  (:mod:`generator.sglang.secret_flags`).
* :func:`credential_in`: a credential written inside a value, whatever the name: a URL
  with ``user:password@`` or a token as its user (any scheme), an ``Authorization``
  header, a ``key=value`` pair naming a secret, or a token of a published format
  (``hf_``, ``ghp_``, ``github_pat_``, ``sk-``, ``AKIA``...).
* :func:`scrub`: a message with every such shape replaced by ``<secret>``.
  :class:`generator.errors.Diagnostic` passes its message and fix through it, and a
  :class:`generator.errors.Diagnostics` collector also removes the secret values it was
  told about (:meth:`~generator.errors.Diagnostics.hide`), so no format (text, JSON,
  SARIF), no cache entry and no log ever holds one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

REDACTED = "<secret>"


@dataclass(frozen=True)
class NameRule:
    """One entry of the maintained list: what a secret's name looks like, and who names them so."""

    kind: str  # "name" (the whole name), "last" (its last word), "pair" (last two), "any" (a word anywhere)
    words: tuple[str, ...]
    why: str


# Names split into "_" words, upper-cased. Order does not matter; the test table says which
# real names each catches.
ENV_RULES: tuple[NameRule, ...] = (
    NameRule("name", ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HUGGINGFACE_HUB_TOKEN", "HUGGINGFACE_TOKEN"),
             "Hugging Face (huggingface_hub constants)"),
    # AWS_ACCESS_KEY_ID (like SGLANG_S3_ACCESS_KEY_ID) names the key, it is not one (AWS's own words).
    NameRule("name", ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN"),
             "AWS CLI/SDK credential variables"),
    NameRule("name", ("GITHUB_TOKEN", "GH_TOKEN", "GITHUB_PAT", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"),
             "GitHub CLI and Actions"),
    NameRule("name", ("AZURE_OPENAI_KEY", "AZURE_CLIENT_SECRET", "AZURE_STORAGE_KEY", "AZURE_STORAGE_CONNECTION_STRING",
                      "AZURE_STORAGE_SAS_TOKEN", "AZURE_DEVOPS_EXT_PAT", "AZURE_CLIENT_CERTIFICATE_PASSWORD"),
             "Azure SDKs and CLI"),
    NameRule("name", ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_CLOUD_API_KEY"),
             "Google Cloud and Gemini"),
    NameRule("name", ("CI_JOB_TOKEN", "GITLAB_TOKEN", "GITLAB_PRIVATE_TOKEN", "CI_REGISTRY_PASSWORD"), "GitLab"),
    NameRule("name", ("SENTRY_DSN", "DD_API_KEY", "DD_APP_KEY", "DATADOG_API_KEY", "NEW_RELIC_LICENSE_KEY",
                      "HONEYCOMB_API_KEY", "GRAFANA_API_KEY"), "observability vendors (the DSN holds the key)"),
    NameRule("name", ("PGPASSWORD", "MYSQL_PWD", "REDISCLI_AUTH", "MONGODB_URI", "DOCKER_AUTH_CONFIG",
                      "NPM_TOKEN", "NODE_AUTH_TOKEN", "TWINE_PASSWORD", "UV_PUBLISH_TOKEN", "CARGO_REGISTRY_TOKEN",
                      "VAULT_TOKEN", "CONSUL_HTTP_TOKEN", "NOMAD_TOKEN", "KAGGLE_KEY", "WANDB_API_KEY",
                      "NGC_API_KEY", "NGC_CLI_API_KEY", "CLOUDFLARE_API_TOKEN", "CF_API_KEY",
                      "DIGITALOCEAN_ACCESS_TOKEN", "HEROKU_API_KEY", "LINODE_TOKEN", "HCLOUD_TOKEN",
                      "STRIPE_SECRET_KEY", "TWILIO_AUTH_TOKEN", "SENDGRID_API_KEY", "SLACK_BOT_TOKEN",
                      "TELEGRAM_BOT_TOKEN", "DISCORD_TOKEN", "OCI_CLI_KEY_CONTENT"),
             "tools and services that read one secret variable each"),
    # The last word names what it holds ...
    NameRule("last", ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS", "PWD", "PASSPHRASE", "APIKEY",
                      "CREDENTIAL", "CREDENTIALS", "AUTH", "SECRETKEY", "PRIVATEKEY", "PAT", "DSN", "WEBHOOK",
                      "SAS", "COOKIE", "JWT", "BEARER", "OTP", "KEY", "LICENSE"),
             "a name ending in what it holds (AZURE_OPENAI_KEY, GITHUB_PAT, SLACK_WEBHOOK, *_TOKEN)"),
    NameRule("pair", ("API_KEY", "SECRET_KEY", "PRIVATE_KEY", "ACCESS_KEY", "ACCESS_TOKEN", "AUTH_TOKEN",
                      "REFRESH_TOKEN", "CLIENT_SECRET", "SIGNING_KEY", "ENCRYPTION_KEY", "MASTER_KEY",
                      "AUTH_HEADER", "CONNECTION_STRING", "WEBHOOK_URL", "SAS_TOKEN", "LICENSE_KEY"),
             "two last words that name a secret (*_API_KEY, *_CONNECTION_STRING, *_WEBHOOK_URL)"),
    # ... or a word anywhere that never means anything else.
    NameRule("any", ("SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "APIKEY", "CREDENTIALS", "CREDENTIAL",
                     "PRIVATEKEY", "SECRETKEY"),
             "a word that only ever names a secret (SGLANG_S3_SECRET_ACCESS_KEY)"),
)
# Words run together without "_" (OPENAIAPIKEY, HFTOKEN): the name's end says it.
_RUN_TOGETHER = ("APIKEY", "API_KEY", "TOKEN", "SECRET", "SECRETKEY", "PASSWORD", "PASSWD", "PASSPHRASE",
                 "PRIVATEKEY", "CREDENTIALS")
# Names that say "credentials" but are none: systemd's folder of a unit's credentials
# (LoadCredential=), which gen's own unit gets (E004 says so). A *_FILE or *_PATH next to a
# secret word stays a secret (MY_PASSPHRASE_FILE: a Docker-style secret file is one).
_NOT_SECRET_NAMES = frozenset({"CREDENTIALS_DIRECTORY"})
# A KEY or TOKEN that is no secret: SGLang's own knobs (SGLANG_USE_AITER_FP8_PER_TOKEN is a
# quantization mode, SGLANG_LOG_DECODE_GRAPH_KEY a debug switch naming CUDA graph keys).
_NOT_SECRET_PAIRS = frozenset({("PER", "TOKEN"), ("GRAPH", "KEY"), ("CACHE", "KEY"), ("ROUTING", "KEY"),
                               ("SORT", "KEY"), ("PARTITION", "KEY"), ("SHARD", "KEY"), ("PREFIX", "KEY")})

_NAMES = frozenset(w for r in ENV_RULES if r.kind == "name" for w in r.words)
_LAST = frozenset(w for r in ENV_RULES if r.kind == "last" for w in r.words)
_PAIRS = frozenset(tuple(w.split("_")) for r in ENV_RULES if r.kind == "pair" for w in r.words)
_ANY = frozenset(w for r in ENV_RULES if r.kind == "any" for w in r.words)


def is_secret_env_name(name: str) -> bool:
    """True when an environment variable's name says it holds a secret (the list above)."""
    upper = name.upper()
    words = [w for w in upper.split("_") if w]
    if not words:
        return False
    if upper in _NAMES:
        return True
    if tuple(words[-2:]) in _NOT_SECRET_PAIRS or upper in _NOT_SECRET_NAMES:
        return False
    return (words[-1] in _LAST or tuple(words[-2:]) in _PAIRS or any(w in _ANY for w in words)
            or upper.endswith(_RUN_TOGETHER))


# A flag the pin does not know, judged by its name: --hf-token, --db-password, --x-api-key.
_SECRET_FLAG = re.compile(r"(?:^|[-_])(api[-_]?key|apikey|password|passwd|passphrase|secret|token|"
                          r"credentials?|auth[-_]?token|access[-_]?key|private[-_]?key)$", re.IGNORECASE)


def is_secret_flag_name(name: str) -> bool:
    """True when a flag's name (``--hf-token``, a dest ``api_key``) says it carries a secret."""
    return bool(_SECRET_FLAG.search(name.lstrip("-").partition("=")[0]))


# ---- credentials inside a value (any name) ----

# scheme://userinfo@ : a password after ':' or a user long or shaped like a token.
# Every pattern here reads text of any size (a 64 KiB value quoted in a message): each is
# anchored so that a run of characters is scanned once, and repeats are bounded.
_URL_USERINFO = re.compile(r"(?<![A-Za-z0-9+.-])(?P<scheme>[A-Za-z][A-Za-z0-9+.-]{0,31})://"
                           r"(?P<userinfo>[^/?#@\s\"']{0,512})@")
# Published token formats (each vendor documents its prefix), long enough not to be a word.
_TOKEN = re.compile(
    r"(?<![A-Za-z0-9])(?:hf_[A-Za-z0-9]{30,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}"
    r"|glpat-[A-Za-z0-9_-]{20,}|sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|ya29\.[0-9A-Za-z_-]{20,}|npm_[A-Za-z0-9]{36}"
    r"|pypi-[A-Za-z0-9_-]{50,}|nvapi-[A-Za-z0-9_-]{30,}"
    r"|eyJ[A-Za-z0-9_-]{10,2048}\.[A-Za-z0-9_-]{10,4096}\.[A-Za-z0-9_-]{10,2048})")
_AUTH_HEADER = re.compile(r"(?i)\b(bearer|basic|token)([ \t]{1,8}|%20)(?P<cred>[A-Za-z0-9._~+/=-]{8,})")
# key=value / key: value where the key names a secret (inside a header list or a DSN string).
_SECRET_PAIR = re.compile(r"(?i)(?P<key>api[-_]?key|apikey|password|passwd|pwd|secret|token|access[-_]?key|auth)"
                          r"(?P<sep>[ \t]{0,8}[=:][ \t]{0,8})(?P<cred>[^\s&;,'\"]{4,})")
_TOKENISH_USER = re.compile(r"^[A-Za-z0-9_.~+/=-]{20,}$")


def _url_credential(match: re.Match[str]) -> bool:
    user, colon, password = match.group("userinfo").partition(":")
    if colon:
        return bool(password)
    return bool(_TOKENISH_USER.match(user)) or bool(_TOKEN.search(user))


def _findings(value: str) -> list[tuple[str, str]]:
    """(what, the secret text) for each credential inside ``value``, in the order found."""
    out: list[tuple[str, str]] = []
    for url in _URL_USERINFO.finditer(value):
        if _url_credential(url):
            user, colon, password = url.group("userinfo").partition(":")
            out.append((f"a {url.group('scheme')}:// URL with credentials before '@'", password if colon else user))
    out += [("a token of a published format", m.group(0)) for m in _TOKEN.finditer(value)]
    out += [("an Authorization header's credentials", m.group("cred")) for m in _AUTH_HEADER.finditer(value)]
    out += [(f"a '{m.group('key')}{m.group('sep').strip()}...' pair", m.group("cred"))
            for m in _SECRET_PAIR.finditer(value)]
    return out


def credential_in(value: str) -> str | None:
    """What credential ``value`` holds, in words (never the credential), or None."""
    found = _findings(value)
    return found[0][0] if found else None


def credentials(value: str) -> set[str]:
    """The secret parts of ``value`` (a URL's password, a token, a header's credential)."""
    return {secret for _, secret in _findings(value) if secret}


# ---- messages without secrets ----

_PLACEHOLDER = re.compile(r"^(VALUE|<[^<>]*>|\.\.\.)$")
_FLAG_ASSIGN = re.compile(r"(?<![A-Za-z0-9_-])(?P<flag>--?[A-Za-z0-9][A-Za-z0-9_-]{0,127})=(?P<value>[^\s'\",)]*)")
_ENV_ASSIGN = re.compile(r"(?<![A-Za-z0-9_])(?P<name>[A-Za-z_][A-Za-z0-9_]{0,127})=(?P<value>\"[^\"]*\"|'[^']*'|[^\s'\",)]*)")


def scrub(text: str) -> str:
    """``text`` with every credential shape replaced by ``<secret>``: URL user:password,
    tokens of a published format, Authorization headers, ``--secret-flag=VALUE``,
    ``SECRET_NAME=VALUE`` and ``secretkey=value`` pairs. A text without any is returned as is.
    """
    if "@" not in text and "=" not in text and ":" not in text and not _TOKEN.search(text) \
            and not _AUTH_HEADER.search(text):
        return text

    def url(m: re.Match[str]) -> str:
        return f"{m.group('scheme')}://{REDACTED}@" if _url_credential(m) else m.group(0)

    def kept_end(value: str) -> str:  # the sentence's own punctuation after a value stays
        return value[len(value.rstrip("?.!;:")):]

    def shown(value: str) -> bool:  # a fix's own placeholder ("put HF_TOKEN=VALUE in ...") is no secret
        bare = value.rstrip("?.!;:`'\"")
        return bool(bare) and not _PLACEHOLDER.fullmatch(bare)

    def flag(m: re.Match[str]) -> str:
        value = m.group("value")
        if not is_secret_flag_name(m.group("flag")) or not shown(value):
            return m.group(0)
        return f"{m.group('flag')}={REDACTED}{kept_end(value)}"

    def env(m: re.Match[str]) -> str:
        value = m.group("value")
        if not is_secret_env_name(m.group("name")) or not shown(value):
            return m.group(0)
        return f"{m.group('name')}={REDACTED}{kept_end(value)}"

    text = _URL_USERINFO.sub(url, text)
    text = _TOKEN.sub(REDACTED, text)
    text = _AUTH_HEADER.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    text = _FLAG_ASSIGN.sub(flag, text)
    text = _ENV_ASSIGN.sub(env, text)

    def pair(m: re.Match[str]) -> str:
        cred = m.group("cred")
        if cred.startswith(REDACTED) or not shown(cred):
            return m.group(0)
        return f"{m.group('key')}{m.group('sep')}{REDACTED}{kept_end(cred)}"

    return _SECRET_PAIR.sub(pair, text)


# A secret this short is replaced only where it stands as a word of its own: inside another
# word ('p' in "put" for the password of http://u:p@proxy) the replacement would mangle the
# message and spell the secret out by what it left ("htt<secret>://").
_WHOLE_WORD_BELOW = 8
# Where a word starts: after no letter or digit ([^\W_], any script), or right after an
# escape a message prints for a character (errors.printable: "\n", "\x1b", "\u2028"),
# whose last letters are no part of the secret after it.
_WORD_START = (r"(?:(?<![^\W_])|(?<=\\[ntr])|(?<=\\x[0-9a-f]{2})|(?<=\\u[0-9a-f]{4})"
               r"|(?<=\\U[0-9a-f]{8}))")


def hide(text: str, values: frozenset[str] | set[str]) -> str:
    """``text`` with each of ``values`` (longest first) replaced by ``<secret>``; one shorter
    than 8 characters only where no letter or digit runs on from it on either side."""
    for value in sorted((v for v in values if v and v in text), key=len, reverse=True):
        if len(value) >= _WHOLE_WORD_BELOW:
            text = text.replace(value, REDACTED)
            continue
        before = _WORD_START if value[0].isalnum() else ""
        after = r"(?![^\W_])" if value[-1].isalnum() else ""
        text = re.sub(before + re.escape(value) + after, REDACTED, text)
    return text


def secret_values(data: object) -> set[str]:
    """The secrets written in a manifest's or inventory's data, to keep out of every message:
    each value of an ``args:`` flag named like a secret (and what follows ``=`` in a key),
    each value of an ``env:`` variable named like one, and every credential inside any
    ``args:`` or ``env:`` value, at any depth (``services[].env``). A message that quotes a
    value changed (X020 proposes 'https-//u-PASSWORD@h') still holds the secret part intact.
    """
    found: set[str] = set()

    def scalars(value: object) -> list[str]:
        if isinstance(value, (list, tuple)):
            return [str(v) for v in value if not isinstance(v, (dict, list, tuple))]
        return [] if isinstance(value, dict) or value is None or isinstance(value, bool) else [str(value)]

    def walk(node: object) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
        if not isinstance(node, dict):
            return
        for key, value in node.items():
            if key == "args" and isinstance(value, dict):
                for flag, given in value.items():
                    name, eq, inline = str(flag).partition("=")
                    words = scalars(given) + ([inline] if eq else [])
                    if is_secret_flag_name(name):
                        found.update(words)
                    found.update(c for w in words for c in credentials(w))
            elif key == "env" and isinstance(value, dict):
                for var, given in value.items():
                    words = scalars(given)
                    if is_secret_env_name(str(var)):
                        found.update(words)
                    found.update(c for w in words for c in credentials(w))
            else:
                walk(value)

    walk(data)
    return {v for v in found if v}
