"""Predicates of the serving front end: gRPC and sidecar, SSL/HTTP2, ASR, multimodal inputs, model name and ports, offload and sampling options.

Each predicate reports the first of SGLang's own checks the settings break, in SGLang's order
(one rule per SGLang handler or concept; see catalogs/rules.yaml).
"""

from __future__ import annotations


from generator.sglang.argtypes import Unparsed
from generator.sglang.rules.registry import Hit, check, first_broken, predicate
from generator.sglang.rules.settings import Settings
from generator.sglang.rules.spec import RuleSpec






@predicate("prefill-decode-interval")
def _prefill_decode_interval(s: Settings, rule: RuleSpec) -> Hit | None:
    for name in ("prefill_decode_interval", "prefill_decode_interval_min_bs"):
        value = s.get(name)
        if isinstance(value, int) and value < 0:
            return Hit((name,), {"option": s.flag(name), "written": value})
    return None


@predicate("sampling-backend-xpu")
def _sampling_backend_xpu(s: Settings, rule: RuleSpec) -> Hit | None:
    device = s.get("device")
    if s.get("sampling_backend") != "intel_xpu" or device == "xpu":
        return None
    return Hit(("sampling_backend", "device"), {}, "device-unset" if device is None else "device")


@predicate("ple-offload")
def _ple_offload(s: Settings, rule: RuleSpec) -> Hit | None:
    embedding = s.get("ple_offload_embedding") if s.is_set("ple_offload_embedding") else None
    if embedding is None:
        return None  # both checks need the flag written (True, or False by --no-...)
    gb, group = s.integer("cpu_offload_gb", 0), s.integer("offload_group_size", -1)
    blame = ("ple_offload_embedding", "ple_offload_backend", "cpu_offload_gb", "offload_group_size")
    return first_broken([check(embedding is True and (gb > 0 or group > 0), "with-layer-offload", blame),
                         check(s.get("ple_offload_backend") == "file" and embedding is False, "file-backend", blame)])


_LMO_CONFLICTS = ("encoder_only", "language_only", "enable_prefix_mm_cache", "enable_broadcast_mm_inputs_process",
                  "mm_enable_dp_encoder")


@predicate("language-model-only-combo")
def _language_model_only(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.get("language_model_only"):
        return None
    for name in _LMO_CONFLICTS:
        if s.has(name) and s.get(name):
            return Hit(("language_model_only", name), {"other": s.flag(name)})
    return None








def _grpc_port(s: Settings, legacy: bool) -> int | None:
    """--grpc-port as handle_deprecated_args resolves it (env fallback, legacy default)."""
    port = s.get("grpc_port")
    if port is None:
        port = s.env_int("SGLANG_GRPC_PORT")
    if legacy and port is None:
        base = s.get("port", 30000)
        port = base + 10000 if isinstance(base, int) else None
    return port if isinstance(port, int) else None


@predicate("grpc-sidecar-args")
def _grpc_sidecar(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("sidecar"):
        return None
    legacy = bool(s.get("smg_grpc_mode", False) or s.get("grpc_mode", False))
    port = _grpc_port(s, legacy)
    threads = s.env_int("SGLANG_GRPC_WORKER_THREADS")
    timeout = s.get("grpc_response_timeout_secs", 300)
    sidecar, sidecar_args = s.get("sidecar"), s.get("sidecar_args")
    native = port is not None and not legacy
    workers = s.get("tokenizer_worker_num", 1)
    return first_broken([
        check(isinstance(timeout, int) and timeout <= 0, "timeout-not-positive", ("grpc_response_timeout_secs",)),
        check(port is not None and not 1 <= port <= 65535, "port-out-of-range", ("grpc_port", "port", "SGLANG_GRPC_PORT"), port=port),
        check(port is not None and threads is not None and threads < 1, "worker-threads-below-one", ("SGLANG_GRPC_WORKER_THREADS",), threads=threads),
        check(sidecar_args is not None and sidecar is None, "sidecar-args-without-sidecar", ("sidecar_args",)),
        check(sidecar_args is not None and not isinstance(sidecar_args, Unparsed) and (
            not isinstance(sidecar_args, list) or not all(isinstance(a, str) for a in sidecar_args)), "sidecar-args-not-strings", ("sidecar_args",)),
        check(sidecar is not None and not str(sidecar).strip(), "sidecar-empty", ("sidecar",)),
        check(sidecar is not None and legacy, "sidecar-with-legacy-grpc", ("sidecar", "smg_grpc_mode", "grpc_mode")),
        check(sidecar is not None and port is None, "sidecar-without-grpc-port", ("sidecar",)),
        check(native and bool(s.get("use_ray", False)), "grpc-with-ray", ("grpc_port", "use_ray", "SGLANG_GRPC_PORT")),
        check(native and bool(s.get("encoder_only", False)), "grpc-with-encoder-only", ("grpc_port", "encoder_only", "SGLANG_GRPC_PORT")),
        check(native and isinstance(workers, int) and workers > 1, "grpc-with-tokenizer-workers", ("grpc_port", "tokenizer_worker_num", "SGLANG_GRPC_PORT")),
        check(native and bool(s.get("api_key") or s.get("admin_api_key")), "grpc-with-api-key", ("grpc_port", "api_key", "admin_api_key", "SGLANG_GRPC_PORT")),
    ])


@predicate("ssl-http2-args")
def _ssl_http2(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("ssl_keyfile"):
        return None
    cert, key = s.get("ssl_certfile"), s.get("ssl_keyfile")
    refresh, http2 = bool(s.get("enable_ssl_refresh", False)), bool(s.get("enable_http2", False))
    streams = s.integer("http2_max_concurrent_streams", 200)
    window = s.integer("http2_initial_connection_window_size", 1048576)
    return first_broken([
        check(bool(key) and not cert, "keyfile-without-certfile", ("ssl_keyfile",)),
        check(bool(cert) and not key, "certfile-without-keyfile", ("ssl_certfile",)),
        check(not cert and not key and bool(s.get("ssl_ca_certs")), "ca-certs-without-certificate", ("ssl_ca_certs",)),
        check(not cert and not key and bool(s.get("ssl_keyfile_password")), "keyfile-password-without-certificate", ("ssl_keyfile_password",)),
        check(refresh and not (cert and key), "refresh-without-certificate", ("enable_ssl_refresh",)),
        check(bool(s.get("enable_http_worker_reuseport", False)) and (
            s.integer("tokenizer_worker_num", 1) == 1 or http2), "worker-reuseport", ("enable_http_worker_reuseport",)),
        check(http2 and not 0 < streams < 2 ** 32, "http2-streams-out-of-range", ("http2_max_concurrent_streams",)),
        check(http2 and not 1024 <= window < 2 ** 31, "http2-window-out-of-range", ("http2_initial_connection_window_size",)),
        check(http2 and refresh, "http2-with-ssl-refresh", ("enable_ssl_refresh", "enable_http2")),
    ])


@predicate("asr-positive")
def _asr_positive(s: Settings, rule: RuleSpec) -> Hit | None:
    checks = []
    for name in ("asr_max_buffer_seconds", "asr_max_concurrent_sessions"):
        value = s.get(name) if s.has(name) else None
        checks.append(check(isinstance(value, (int, float)) and value <= 0, "not-positive", (name,), option=s.flag(name), written=value))
    return first_broken(checks)


@predicate("mm-process-config")
def _mm_process_config(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("mm_process_config"):
        return None
    size = s.get("mm_preprocess_cache_size_mb") if s.has("mm_preprocess_cache_size_mb") else None
    config = s.get("mm_process_config")
    checks = [check(isinstance(size, int) and size < 0, "cache-size-negative", ("mm_preprocess_cache_size_mb",), size=size)]
    if config is not None and not isinstance(config, Unparsed):
        checks.append(check(not isinstance(config, dict), "config-not-object", ("mm_process_config",), type=type(config).__name__))
        for key in ("image", "video", "audio"):
            entry = config.get(key) if isinstance(config, dict) else None
            checks.append(check(isinstance(config, dict) and key in config and not isinstance(entry, dict),
                                "modality-not-object", ("mm_process_config",), modality=key, type=type(entry).__name__))
    return first_broken(checks)


@predicate("serving-json-values")
def _serving_json(s: Settings, rule: RuleSpec) -> Hit | None:
    newer = s.at_least(0, 5, 23)
    kwargs = s.get("default_chat_template_kwargs") if newer and s.has("default_chat_template_kwargs") else None
    limits = s.get("limit_mm_data_per_request") if s.has("limit_mm_data_per_request") else None
    bad = sorted(k for k in limits if k not in ("image", "video", "audio")) if isinstance(limits, dict) and limits else []
    prefs = s.get("preferred_sampling_params") if newer and s.has("preferred_sampling_params") else None
    return first_broken([
        check(kwargs is not None and not isinstance(kwargs, (dict, Unparsed)), "kwargs-not-object", ("default_chat_template_kwargs",)),
        check(bool(bad), "modality-unknown", ("limit_mm_data_per_request",), modality=bad[0] if bad else None),
        check(isinstance(prefs, (dict, list, str)) and bool(prefs) and "watermark" in prefs, "watermark-in-preferred-params", ("preferred_sampling_params",)),
    ])


@predicate("mm-feature-transport")
def _mm_feature_transport(s: Settings, rule: RuleSpec) -> Hit | None:
    if not s.has("mm_feature_transport"):
        return None
    transport = s.get("mm_feature_transport")
    if transport is None and "SGLANG_USE_CUDA_IPC_TRANSPORT" in s.env:
        # The legacy variable chooses when the flag is unset (deprecated, still honoured).
        transport = "cuda_ipc" if s.env_true("SGLANG_USE_CUDA_IPC_TRANSPORT") else "cpu"
    if s.get("encoder_only", False):
        return None  # encoder-only serving falls back to cpu for this inactive transport
    nnodes, pp = s.integer("nnodes", 1), s.integer("pp_size", 1)
    return first_broken([
        check(transport == "cuda_vmm" and pp != 1, "vmm-with-pp", ("mm_feature_transport", "pp_size", "SGLANG_USE_CUDA_IPC_TRANSPORT"), pp=pp),
        check(transport == "cuda_ipc" and nnodes != 1, "ipc-multi-node", ("mm_feature_transport", "nnodes", "SGLANG_USE_CUDA_IPC_TRANSPORT"), nnodes=nnodes),
    ])


@predicate("served-model-colon")
def _served_colon(s: Settings, rule: RuleSpec) -> Hit | None:
    value = s.get("served_model_name")
    if value is None or ":" not in str(value):
        return None
    return Hit(("served_model_name",), {"suggestion": str(value).replace(":", "-")})


@predicate("mem-fraction")
def _mem_fraction(s: Settings, rule: RuleSpec) -> Hit | None:
    value = s.get("mem_fraction_static")
    if not isinstance(value, (int, float)) or 0 < value < 1:
        return None
    # 85 is a percentage: the fraction meant is 0.85 (1.7 is a slip, not 1.7%)
    fields = {"fraction": round(value / 100, 4)}
    return Hit(("mem_fraction_static",), fields, "percentage" if 10 <= value <= 100 else "range")


@predicate("port-grpc-0515")
def _port_grpc(s: Settings, rule: RuleSpec) -> Hit | None:
    value = s.get("port")
    if not isinstance(value, int) or value > 65535 or value + 10000 <= 65535 or "SGLANG_GRPC_PORT" in s.env:
        return None
    return Hit(("port",), {"port": value, "grpc": value + 10000})
