"""Secrets (issue 22 item 11): the maintained name list, credentials inside values, and no echo anywhere.

* A table of real variable names of major providers and tools that must be secrets, and
  every variable the committed SGLang pins read that must not be (only SGLang's own
  secret ones are).
* Credentials inside values, any scheme: ``user:password@``, a token as a URL's user, an
  Authorization header, a secret ``key=value`` pair, tokens of published formats.
* No value of a secret is ever echoed: a repository (and ``gen import`` commands) writing
  secrets every way argparse and a manifest accept, with every kind of finding around
  them, through every command and every ``--format``; and the scrubber's patterns stay
  linear on 64 KiB of hostile text.
"""

from __future__ import annotations

import shutil
import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from repo_builder import host_yaml, write_repo

from generator import secrecy
from generator.cli.main import main
from generator.errors import Diagnostic, Diagnostics, Position

ROOT = Path(__file__).resolve().parent.parent

# Real names (provider docs, SDKs, CLIs) that hold a secret.
SECRET_NAMES = [
    # model hubs and LLM APIs
    "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HUGGINGFACE_HUB_TOKEN", "HUGGINGFACE_TOKEN", "HF_API_TOKEN",
    "OPENAI_API_KEY", "OPENAI_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "AZURE_OPENAI_KEY",
    "AZURE_OPENAI_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY", "COHERE_API_KEY", "CO_API_KEY",
    "MISTRAL_API_KEY", "GROQ_API_KEY", "TOGETHER_API_KEY", "REPLICATE_API_TOKEN", "DEEPSEEK_API_KEY",
    "NVIDIA_API_KEY", "NGC_API_KEY", "NGC_CLI_API_KEY", "PPLX_API_KEY", "FIREWORKS_API_KEY",
    "OPENROUTER_API_KEY", "XAI_API_KEY", "LANGCHAIN_API_KEY", "LANGSMITH_API_KEY", "WANDB_API_KEY",
    "KAGGLE_KEY", "EXA_API_KEY", "CRUSOE_API_KEY", "SGLANG_PRECISION_HF_TOKEN", "SGLANG_DIFFUSION_SLACK_TOKEN",
    # clouds
    "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "SGLANG_S3_SECRET_ACCESS_KEY",
    "AZURE_CLIENT_SECRET", "AZURE_STORAGE_KEY", "AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_SAS_TOKEN",
    "AZURE_CLIENT_CERTIFICATE_PASSWORD", "GOOGLE_APPLICATION_CREDENTIALS", "CLOUDFLARE_API_TOKEN", "CF_API_KEY",
    "DIGITALOCEAN_ACCESS_TOKEN", "HEROKU_API_KEY", "LINODE_TOKEN", "HCLOUD_TOKEN", "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
    "OCI_CLI_KEY_CONTENT", "IBM_CLOUD_API_KEY",
    # code hosting and CI
    "GITHUB_TOKEN", "GH_TOKEN", "GITHUB_PAT", "GH_ENTERPRISE_TOKEN", "GITHUB_APP_PRIVATE_KEY", "GITLAB_TOKEN",
    "GITLAB_PRIVATE_TOKEN", "CI_JOB_TOKEN", "CI_REGISTRY_PASSWORD", "BITBUCKET_APP_PASSWORD", "AZURE_DEVOPS_EXT_PAT",
    "CIRCLE_TOKEN", "BUILDKITE_AGENT_TOKEN",
    # registries and package managers
    "NPM_TOKEN", "NODE_AUTH_TOKEN", "TWINE_PASSWORD", "UV_PUBLISH_TOKEN", "PYPI_API_TOKEN", "CARGO_REGISTRY_TOKEN",
    "DOCKER_PASSWORD", "DOCKER_AUTH_CONFIG", "REGISTRY_PASSWORD",
    # observability, chat, payments
    "SENTRY_DSN", "SENTRY_AUTH_TOKEN", "DD_API_KEY", "DD_APP_KEY", "DATADOG_API_KEY", "NEW_RELIC_LICENSE_KEY",
    "HONEYCOMB_API_KEY", "GRAFANA_API_KEY", "SLACK_BOT_TOKEN", "SLACK_WEBHOOK_URL", "SLACK_WEBHOOK",
    "DISCORD_TOKEN", "TELEGRAM_BOT_TOKEN", "STRIPE_SECRET_KEY", "STRIPE_API_KEY", "TWILIO_AUTH_TOKEN",
    "SENDGRID_API_KEY", "MAILGUN_API_KEY", "PAGERDUTY_TOKEN",
    # databases and infrastructure
    "PGPASSWORD", "POSTGRES_PASSWORD", "MYSQL_PWD", "MYSQL_ROOT_PASSWORD", "REDIS_PASSWORD", "REDISCLI_AUTH",
    "MONGODB_URI", "VAULT_TOKEN", "CONSUL_HTTP_TOKEN", "NOMAD_TOKEN", "KUBE_TOKEN", "ETCD_PASSWORD",
    # generic shapes
    "API_KEY", "TOKEN", "SECRET", "PASSWORD", "SECRET_KEY", "JWT_SECRET", "SESSION_SECRET", "ENCRYPTION_KEY",
    "SIGNING_KEY", "PRIVATE_KEY", "SSH_PRIVATE_KEY", "MASTER_KEY", "CLIENT_SECRET", "ACCESS_TOKEN", "REFRESH_TOKEN",
    "AUTH_TOKEN", "BEARER_TOKEN", "DB_PASSWORD", "DB_PASS", "SMTP_PASSWD", "X_SECRET", "MY_APIKEY", "OPENAIAPIKEY",
    "HFTOKEN", "api_key", "aws_secret_access_key", "hf_token", "APP_PASSPHRASE", "SERVICE_CREDENTIALS",
    "LICENSE_KEY", "COOKIE_SECRET", "OTP_SECRET", "MY_PASSPHRASE_FILE", "POSTGRES_PASSWORD_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
]
NOT_SECRET_NAMES = [
    "CUDA_VISIBLE_DEVICES", "NCCL_SOCKET_IFNAME", "NCCL_DEBUG", "HF_HOME", "HF_HUB_OFFLINE", "HF_HUB_ENABLE_HF_TRANSFER",
    "TOKENIZERS_PARALLELISM", "SGLANG_MAX_TOKENS", "SGLANG_MAX_NEW_TOKENS_LIMIT", "SGLANG_USE_AITER_FP8_PER_TOKEN",
    "SGLANG_ROUTING_KEY_POLICY_DEBUG_LOG", "SGLANG_LOG_DECODE_GRAPH_KEY", "SGLANG_S3_ACCESS_KEY_ID", "AWS_ACCESS_KEY_ID",
    "AWS_REGION", "AWS_ENDPOINT_URL", "KEYRING", "HOME", "PATH", "PYTHONPATH", "OMP_NUM_THREADS", "HTTP_PROXY",
    "NO_PROXY", "SGLANG_ENABLE_REQUEST_HEADER_OVERRIDES", "MONKEY", "TOKENIZER_PATH", "PASSTHROUGH",
    "HF_TOKEN_PATH", "CREDENTIALS_DIRECTORY", "SSL_KEY_FILE",
]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_secret_names_of_providers_and_tools(name: str) -> None:
    assert secrecy.is_secret_env_name(name)


@pytest.mark.parametrize("name", NOT_SECRET_NAMES)
def test_names_that_are_no_secret(name: str) -> None:
    assert not secrecy.is_secret_env_name(name)


def test_the_table_is_large_and_every_rule_is_used() -> None:
    assert len(SECRET_NAMES) >= 120
    for rule in secrecy.ENV_RULES:
        if rule.kind == "name":
            assert all(w in SECRET_NAMES for w in rule.words if w not in ("GITHUB_ENTERPRISE_TOKEN", "GOOGLE_CLOUD_API_KEY")), rule


def test_of_what_sglang_reads_only_its_secrets_are_secrets() -> None:
    names: set[str] = set()
    for pin in ("0.5.9", "0.5.23"):
        data = json.loads((ROOT / "catalogs" / "sglang" / f"{pin}.env.json").read_text())
        names |= {f["name"] for f in data["registry"]["fields"]} | {v["name"] for v in data["adhoc"]["vars"] if v["name"]}
    assert len(names) > 1000
    flagged = {n for n in names if secrecy.is_secret_env_name(n)}
    assert flagged == {"API_KEY", "CRUSOE_API_KEY", "EXA_API_KEY", "HF_TOKEN", "OPENAI_API_KEY",
                       "SGLANG_DIFFUSION_SLACK_TOKEN", "SGLANG_PRECISION_HF_TOKEN", "SGLANG_S3_SECRET_ACCESS_KEY"}


@pytest.mark.parametrize("value", [
    "http://user:hunter2@proxy.internal:3128", "https://u:p@h/", "socks5://u:p@127.0.0.1:1080", "socks5h://me:pw@h",
    "postgres://app:s3cr3t@db:5432/x", "postgresql+psycopg://a:b@h/d", "redis://:pw@cache:6379/0",
    "mongodb+srv://u:p@cluster0.example.net", "ftp://anon:mail@ftp.example", "s3://AKIDEXAMPLE:wJalrXUtnFEMI@bucket",
    "git+https://u:ghtok@github.com/a/b", "amqp://guest:guest@rabbit/", "https://:only-password@h",
    "https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/org/repo",
    "https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/1",
    "http://u:p%40ss@h", "a list: http://ok.example, https://u:p@bad.example",
    "hf_abcdefghijklmnopqrstuvwxyz0123456", "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "github_pat_11ABCDEFG0abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ", "glpat-abcdefghij0123456789",
    "sk-ant-abcdefghijklmnopqrstuvwxyz", "sk-proj-abcdefghijklmnopqrstuvwxyz", "AKIAIOSFODNN7EXAMPLE",
    "xoxb-1234567890-abcdefghij", "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", "nvapi-abcdefghijklmnopqrstuvwxyz0123456",
    "Authorization=Bearer abcdefghijklmnop", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "bearer%20abcdefgh1234",
    "api-key=abc123", "x-api-key: abc123", "password=hunter2", "token=abcd1234",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
])
def test_credentials_inside_values(value: str) -> None:
    found = secrecy.credential_in(value)
    assert found is not None
    assert "hunter2" not in found and "p@" not in found  # what it says names the shape, never the value
    assert secrecy.credential_in(secrecy.scrub(value)) is None or "<secret>" in secrecy.scrub(value)
    for part in ("hunter2", "s3cr3t", "ghtok", "wJalrXUtnFEMI", "abcdefghijklmnop", "dXNlcjpwYXNzd29yZA", "abc123"):
        assert part not in secrecy.scrub(value)


@pytest.mark.parametrize("value", [
    "http://proxy.internal:3128", "https://huggingface.co", "ssh://git@github.com/a/b", "git@github.com:a/b",
    "user:@h", "/shared/models/x", "10.0.0.1:5000", "max_tokens=128", "INFO", "0,1,2,3", "a=b",
    "https://user@host/x", "mailto:someone@example.com", "sk-short", "hf_short", "tokenizer=fast",
])
def test_values_without_credentials(value: str) -> None:
    assert secrecy.credential_in(value) is None
    assert secrecy.scrub(value) == value


def test_flag_names_judged_by_name() -> None:
    for name in ("--api-key", "--hf-token", "--db-password", "--x-api-key=v", "api_key", "--ssl-keyfile-password",
                 "--admin-api-key", "--auth-token", "--client-secret"):
        assert secrecy.is_secret_flag_name(name), name
    for name in ("--max-new-tokens", "--tp", "--tokenizer-path", "--skip-tokenizer-init", "--token-usage"):
        assert not secrecy.is_secret_flag_name(name), name


def test_a_diagnostic_never_keeps_a_credential_shape() -> None:
    d = Diagnostic(Position("m"), "F003", "bad '--tool-call-parser=--api-key=sk-123456' and HF_TOKEN=hf_x and "
                   "http://u:pw@h", hint="did you mean --admin-api-key=zzz?")
    assert "sk-123456" not in d.message and "hf_x" not in d.message and "pw@" not in d.message
    assert d.hint == "did you mean --admin-api-key=<secret>?"


def test_a_collector_hides_the_values_it_is_told_before_and_after() -> None:
    diags = Diagnostics()
    diags.error(Position("m"), "F001", "unknown flag '-S3CRET-42'")
    diags.hide({"-S3CRET-42"})
    diags.error(Position("m"), "I006", "unexpected word '-S3CRET-42'", "remove '-S3CRET-42'")
    assert all("S3CRET" not in d.message + (d.hint or "") for d in diags.items)


def test_a_short_secret_is_hidden_as_a_word_and_never_inside_one() -> None:
    """A one-letter password (http://u:p@proxy) used to turn "http" into "htt<secret>" and
    "put" into "<secret>ut": the message mangled, and the secret spelt out by what was left."""
    diags = Diagnostics()
    diags.hide({"p", "ab-1", "é"})
    diags.error(Position("m"), "K005", "HTTP_PROXY holds a http:// URL with 'p' before '@'",
                "put ab-1 and xab-1 and ab-12 and é in café, not 'é'")
    [d] = diags.items
    assert d.message == "HTTP_PROXY holds a http:// URL with '<secret>' before '@'"
    assert d.hint == "put <secret> and xab-1 and ab-12 and <secret> in café, not '<secret>'"
    escaped = Diagnostics()  # a secret right after a character printed as an escape still starts a word
    escaped.hide({"ab-1", "zz"})
    escaped.error(Position("m"), "I006", "unexpected word 'x\nab-1' or '\u2028zz' or '\x1bzz'")
    assert escaped.items[0].message == "unexpected word 'x\\n<secret>' or '\\u2028<secret>' or '\\x1b<secret>'"
    long = Diagnostics()
    long.hide({"S3cretValue"})  # 8 characters or more: hidden wherever it stands
    long.error(Position("m"), "F001", "unknown flag '--api-keyS3cretValue'")
    assert long.items[0].message == "unknown flag '--api-key<secret>'"


HOSTILE = ["a" * 65536, "a://" * 16384, "-a" * 32768, "token" * 13107, "eyJ" + "a" * 65530, "x:" * 32768,
           "@" * 65536, "http://" + "a" * 65000, "A_" * 32768 + "=x", "bearer " * 9000, "--a" * 20000 + "=",
           "hf_" * 20000, "https://" + "u:" * 30000 + "@"]


def test_the_patterns_stay_linear_on_hostile_text() -> None:
    start = time.perf_counter()
    for text in HOSTILE:
        secrecy.scrub(text)
        secrecy.credential_in(text)
    assert time.perf_counter() - start < 2.0


# ----- no echo, end to end: every way of writing a secret, every command and format -----

S = "Zq9SeCrEtVaLuE"
TOKEN = "hf_" + "Q" * 34
# One model per way of writing a secret flag (keys are unique in a mapping).
MODEL_ARGS = [
    f"--api-key: {S}", f"--api-key: [{S}, {S}2]", f"'--api-key={S}': true", f"--api-k: {S}", f"--api_key: {S}",
    f"--admin-api-key: -{S}", f"--api-key: {{a: {S}}}", f"--api-key: 7{S[:0]}424242", f"--hf-token: {S}",
    f"--tool-call-parser: '--api-key={S}'", f"--served-model-name: 'http://u:{S}@h'", f"--tp: '{TOKEN}'",
]
ENV = [f"HF_TOKEN: {S}", f"AZURE_OPENAI_KEY: {S}", f"GITHUB_PAT: {S}", f"HTTP_PROXY: 'http://user:{S}@proxy:3128'",
       f"SGLANG_ENABLE_JIT_DEEPGEMM: {TOKEN}", f"NCCL_DEBUG: 'Authorization=Bearer {S}'", f"X_DSN: 'https://{S}@h'"]


def _leak_repo(tmp: Path, pin: str) -> Path:
    models = {f"m{i}": f"name: m{i}\nweights: {{path: /shared/models/m{i}, size_gb: 1}}\nargs:\n  {form}\n"
              for i, form in enumerate(MODEL_ARGS)}
    models["e"] = "name: e\nweights: {path: /shared/models/e, size_gb: 1}\nenv:\n" + "".join(f"  {e}\n" for e in ENV)
    services = "".join(f"  - {{name: s{i}, model: m{i}, port: {31000 + i}}}\n" for i in range(len(MODEL_ARGS)))
    services += "  - name: se\n    model: e\n    port: 31100\n    env:\n" + "".join(f"      {e}\n" for e in ENV)
    services += f"    args: {{--api-key: {S}x, --chat-template: 'https://{TOKEN}@h/t.jinja'}}\n"
    root = write_repo(tmp, {"h": host_yaml("h", gpus_per_node=(16,), pin=pin, services=services)}, models)
    for part in ("templates", "catalogs"):  # copied: gen reads no linked templates/ or catalogs/ (Y009)
        shutil.copytree(ROOT / part, root / part)
    return root


@pytest.mark.parametrize("pin", ["0.5.9", "0.5.23"])
def test_no_command_or_format_echoes_a_secret(pin: str, tmp_path: Path) -> None:
    root = _leak_repo(tmp_path, pin)
    other = "0.5.23" if pin == "0.5.9" else "0.5.9"
    codes_seen: set[str] = set()
    for args in (["check"], ["check", "-v"], ["check", "--format", "json"], ["check", "--format", "sarif"],
                 ["check", "--sglang", other], ["check", "--sglang", other, "--format", "json"],
                 ["diff"], ["render", "--all"], ["show", "--host", "h"], ["show", "--host", "h", "--format", "json"]):
        result = CliRunner().invoke(main, [*args, "--root", str(root)])
        out = result.stdout + result.stderr
        assert "Traceback" not in out, out
        for secret in (S, TOKEN, "424242"):
            assert secret not in out, (args, [ln for ln in out.splitlines() if secret in ln][:3])
        if args[-1] == "json" and args[0] == "check" and len(args) == 3:
            codes_seen = {d["code"] for d in json.loads(result.stdout)["diagnostics"]}
    assert not list((root / "output").rglob("*.env")), "a failing render wrote files"
    # the repo does reach the findings that once quoted values
    assert {"K001", "K002", "K005", "S009", "F005", "F103", "F101"} <= codes_seen, codes_seen


IMPORT_FORMS = [
    f"--api-key {S}", f"--api-key={S}", f"--api-k {S}", f"--api-k={S}", f"--api_key {S}", f"--api_key={S}",
    f"--api={S}", f"--api-key {S} extra", f"--api-key={S} extra", f"--api-key {S} --api-key {S}x",
    f"--api-keyy={S}", f"--admin-api-key={S}", f"--ssl-keyfile-password={S}", f"--ssl-keyfile-pass={S}",
    f"--tool-call-parser=--api-key={S}", f"--api-key=-{S}", f"--api-key -{S}", f"--log-requests-level=--api-key={S}",
    f"--enable-metrics=--api-key={S}", f"--tp=--api-key={S}", f"--cuda-graph-bs --api-key={S}", f"--hf-token {S}",
    f"--served-model-name https://u:{S}@h", f"--tp {TOKEN}",
]
IMPORT_ENV = [f"HF_TOKEN={S}", f"AZURE_OPENAI_KEY={S}", f"HTTP_PROXY=http://u:{S}@p:1", f"GITHUB_PAT={S}",
              f"SGLANG_ENABLE_JIT_DEEPGEMM={TOKEN}", f"NCCL_DEBUG='token={S}'"]


@pytest.mark.parametrize("pin", ["0.5.9", "0.5.23"])
def test_gen_import_echoes_no_secret(pin: str) -> None:
    commands = [f"python -m sglang.launch_server --model-path /m {form}" for form in IMPORT_FORMS]
    commands += [f"{env} python -m sglang.launch_server --model-path /m" for env in IMPORT_ENV]
    commands.append("[Service]\nEnvironment=HF_TOKEN=" + S + "\nExecStart=/p -m sglang.launch_server --api-key " + S)
    for command in commands:
        for fmt in ("text", "json"):
            result = CliRunner().invoke(main, ["import", "--sglang", pin, "--format", fmt, "--root", str(ROOT),
                                               "--file", "-"], input=command)
            out = result.stdout + result.stderr
            assert result.exit_code == 1, (command, out)  # every one is refused
            assert S not in out and TOKEN not in out, (command, fmt, [ln for ln in out.splitlines() if S in ln])


def test_a_fix_s_placeholders_are_shown() -> None:
    """The K001/K002 fixes write `api-key: VALUE` and HF_TOKEN=VALUE: documentation, not secrets."""
    text = "put `api-key: VALUE` in /etc/credstore/x.yaml and HF_TOKEN=VALUE in /etc/sglang/secrets/x.env"
    assert secrecy.scrub(text) == text
    assert secrecy.scrub("api-key: sk-123abc and HF_TOKEN=hf_x") == "api-key: <secret> and HF_TOKEN=<secret>"
