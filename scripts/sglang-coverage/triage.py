"""Triage of a pin's `unreviewed` rule-coverage entries (catalogs/coverage/<pin>.yaml).

Two passes, both printed with their counts so the review can say what came from where:
1. carry-over: a check whose function (last name, leading '_' dropped) and condition
   (receiver `self.`/`cfg.`/`view.`/`server_args.` dropped) equal a check already reviewed
   in another pin's coverage file takes that entry;
2. by reading the condition: the first matching group of tokens in the condition (or in
   the function's name, for device-specific handlers) names the reason, and the `why`
   quotes the token that decided it, so a reviewer can check each entry against the
   condition it covers. Everything that matches no group is `gap` (a pure argument check).
The output is a list of entries for a reviewer to paste and correct; the committed file
stays hand-reviewed. Standard library and PyYAML only.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import yaml

RECEIVER = re.compile(r"\b(self|cfg|view|server_args|args|resolved)\.")
# Functions whose asserts guard SGLang's own code (declarations, registries, read-only
# views), not a value an operator passes.
INTERNAL = {
    "arg_groups.arg_utils:fallbacks_of", "arg_groups.fields:collect_input_fields",
    "arg_groups.model_override_base:ResolvedView.__setattr__",
    "arg_groups.model_override_base:ResolvingConfig.__setattr__",
    "arg_groups.model_override_base:_invoke_provider", "arg_groups.overrides:declare_resolution",
    "arg_groups.overrides:run_post_process_pass", "arg_groups.overrides:validate_declarations",
    "arg_groups.resolution_hooks:register_resolution_hook",
    "arg_groups.prefill_buffer_ceiling:register_prefill_buffer_ceiling",
    "arg_groups.cuda_graph_hook:finalize_cuda_graph_prefill_max_context",
}
GROUPS: list[tuple[str, str, re.Pattern[str]]] = [
    ("gpu", "reads the device or its compute capability",
     re.compile(r"get_platform\(\)|platform\.is_|\bis_(cuda|hip|npu|xpu|musa|cpu|mps)\b|_is_hip|is_hip"
                r"|device_capability|is_sm\d+|is_blackwell|is_gfx\w*|cuda_major|cuda_version|gpu_mem"
                r"|\bdevice\b|is_unified_kv_triton")),
    ("model-config", "depends on the checkpoint's config (architecture, attention kind, hf_config)",
     re.compile(r"model_config|hf_config|model_arch|architecture|use_mla_backend|is_deepseek"
                r"|is_hybrid|is_muse_spark|\blongcat\b|\bnemotron\b|model_type|is_multimodal"
                r"|has_attention_sinks|index_topk|learnable_sink|num_nextn|is_v4_hisparse"
                r"|is_m3_hisparse|uses_mamba_radix_cache|parse_connector_type|is_encoder_decoder")),
    ("runtime", "depends on the host's environment variables, files or installed packages",
     re.compile(r"\benvs\.|os\.environ|os\.path|get_\w*env_var|_available\(|ImportError"
                r"|tree_core_backend|ragged_mode|SGLANG_")),
]
DEVICE_FUNCTION = re.compile(r"(xpu|mps|npu|rocm|hip|musa|ascend)", re.I)


def _function(where: str) -> str:
    return where.split(":", 1)[1].split(".")[-1].lstrip("_")


def _condition(cond: str) -> str:
    return re.sub(r" #\d+$", "", RECEIVER.sub("", cond))


def _by_reading(check: dict) -> dict:
    where, cond = check["where"], check["condition"]
    if where in INTERNAL:
        return {"waive": "internal", "why": f"assert on SGLang's own code in {_function(where)}, not on an argument"}
    fn = where.split(":", 1)[1]
    if DEVICE_FUNCTION.search(fn):
        return {"waive": "gpu", "why": f"in the device-specific handler {fn}"}
    for reason, text, pattern in GROUPS:
        hit = pattern.search(cond)
        if hit:
            return {"waive": reason, "why": f"{text}: the condition reads {hit.group(0)!r}"}
    return {"waive": "gap", "why": "pure argument check (condition reads only server arguments); no gen rule yet"}


def triage(pin: str, other: str, root: Path) -> tuple[dict[str, dict], dict[str, dict]]:
    """(carried, by_reading): suggested entries for the unreviewed checks of `pin`."""
    cov = yaml.safe_load((root / "catalogs/coverage" / f"{pin}.yaml").read_text())["checks"]
    old_cov = yaml.safe_load((root / "catalogs/coverage" / f"{other}.yaml").read_text())["checks"]
    load = lambda p: {c["id"]: c for c in json.loads((root / "catalogs/sglang" / f"{p}.checks.json").read_text())["checks"]}
    checks, old_checks = load(pin), load(other)
    index: dict[tuple[str, str], list[dict]] = {}
    for cid, entry in old_cov.items():
        c = old_checks[cid]
        if entry.get("waive") != "unreviewed":
            index.setdefault((_function(c["where"]), _condition(c["condition"])), []).append(entry)
    carried: dict[str, dict] = {}
    reading: dict[str, dict] = {}
    for cid, entry in cov.items():
        if entry.get("waive") != "unreviewed":
            continue
        found = index.get((_function(checks[cid]["where"]), _condition(checks[cid]["condition"])), [])
        if found and all(e == found[0] for e in found):
            carried[cid] = found[0]
        else:
            reading[cid] = _by_reading(checks[cid])
    return carried, reading


def main(argv: list[str]) -> int:
    """Print the suggestions as coverage lines, then the counts on stderr."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pin")
    ap.add_argument("--from", dest="other", default="0.5.9")
    ap.add_argument("--json", type=Path, help="write {id: entry} here instead of printing")
    ns = ap.parse_args(argv)
    carried, reading = triage(ns.pin, ns.other, Path(__file__).resolve().parents[2])
    out = {**carried, **reading}
    if ns.json:
        ns.json.write_text(json.dumps(out, indent=1, sort_keys=True))
    else:
        for cid in sorted(out):
            print(f"  {json.dumps(cid)}: {json.dumps(out[cid])}")
    from collections import Counter
    print(f"carried over from {ns.other}: {len(carried)}; by reading: {len(reading)} "
          f"{dict(Counter(e['waive'] for e in reading.values()))}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
