#!/usr/bin/python3
"""Builds Hugging Face Llama RoPE tables in real PyTorch, the oracle of tests/torch/.

    /usr/bin/python3 tests/torch/hf_tables.py MODELS_JSON OUT_DIR [POSITIONS]

For each CPU capability (avx2: SLEEF's u10 AVX2 functions; default: glibc's cosf/sinf, the
scalar path) it runs itself in a child process with ATEN_CPU_CAPABILITY set and one thread,
and writes OUT_DIR/hf_<capability>.bin: a one-line JSON header, then the arrays it lists.
Where torch or the capability is missing it writes OUT_DIR/hf_<capability>.skip with the
reason instead (the C++ test then reports SKIPPED, exit 77), and exits 0 either way; any other
failure exits 1.

The table is transformers' LlamaRotaryEmbedding (>= 4.38) as written in
huggingface/transformers@0044e3b3facff1a1ad60b235c69d5b45beae75a4
src/transformers/modeling_rope_utils.py:29-67 (_compute_default_rope_parameters) and the
llama3 branch (_compute_llama3_parameters), and
huggingface/transformers@002272831fba584eb30dca9729c1be456836960a
src/transformers/models/llama/modeling_llama.py:95-144 (forward: inv_freq_expanded @
position_ids_expanded with autocast off, transpose, emb = cat(freqs, freqs), emb.cos(),
emb.sin(), times attention_scaling, .to(x.dtype)). transformers is not imported (Debian 12
does not package it); the torch calls are the ones those lines make, on the fp32 buffer.
"""
import json
import math
import os
import subprocess
import sys

PRESETS = ["llama2-7b", "llama3-8b", "llama3.1-8b"]
# llama3.1-8b's llama3 scaling on base 10000: there torch's `2 * math.pi / inv_freq` and
# `old_context_len / wavelen` (Tensor.__rtruediv__ = reciprocal() * other, two roundings) give
# other inv_freq bits than one correctly rounded division in some blocks (at base 500000 the two
# readings agree). Passed to ropesim as an hf-config file written next to the tables.
SCALED_BASE_10000 = "llama3-scaling-base-10000"
CAPABILITIES = {"avx2": "AVX2", "default": "NO AVX"}


def skip(out_dir, capability, reason):
    with open(os.path.join(out_dir, f"hf_{capability}.skip"), "w") as f:
        f.write(reason + "\n")
    print(f"hf_tables.py: {capability}: SKIPPED: {reason}", file=sys.stderr)


def inv_freq_of(torch, model):
    """modeling_rope_utils.py: default inv_freq, then the llama3 rescaling when configured."""
    base = float(model["rope_theta"])
    dim = int(model["head_dim"] * model.get("partial_rotary_factor", 1.0))
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    scaling = model.get("rope_scaling")
    if scaling is None:
        return inv_freq, 1.0
    assert scaling.get("rope_type") == "llama3", scaling
    factor = scaling["factor"]
    low_freq_factor = scaling["low_freq_factor"]
    high_freq_factor = scaling["high_freq_factor"]
    old_context_len = scaling["original_max_position_embeddings"]
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (old_context_len / wavelen - low_freq_factor) / (
        high_freq_factor - low_freq_factor)
    smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    inv_freq_llama = torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)
    return inv_freq_llama, 1.0


def child(models_json, out_dir, capability, positions):
    try:
        import torch
    except ImportError as e:
        return skip(out_dir, capability, f"PyTorch is not importable by {sys.executable} ({e}); "
                    "scripts/setup --deps installs python3-torch")
    torch.set_num_threads(1)
    shown = [line.split(":", 1)[1].strip() for line in torch.__config__.show().splitlines()
             if "CPU capability usage" in line]
    if not shown or shown[0] != CAPABILITIES[capability]:
        return skip(out_dir, capability, f"ATEN_CPU_CAPABILITY={capability} asked, PyTorch runs "
                    f"{shown[0] if shown else 'an unknown capability'} on this CPU")
    models = {m["name"]: m for m in json.load(open(models_json))["models"]}
    header = {"torch": torch.__version__, "capability": capability, "positions": positions,
              "presets": []}
    blobs = []
    offset = 0
    scaled = dict(models["llama3.1-8b"], name=SCALED_BASE_10000, rope_theta=10000.0)
    config = os.path.join(out_dir, SCALED_BASE_10000 + ".json")
    with open(config, "w") as f:
        json.dump({"head_dim": scaled["head_dim"], "rope_theta": scaled["rope_theta"],
                   "max_position_embeddings": scaled["max_position_embeddings"],
                   "rope_scaling": scaled["rope_scaling"]}, f)
    models[SCALED_BASE_10000] = scaled
    for name in PRESETS + [SCALED_BASE_10000]:
        model = models[name]
        inv_freq, attention_scaling = inv_freq_of(torch, model)
        position_ids = torch.arange(positions)[None, :]
        inv_freq_expanded = inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        with torch.autocast(device_type="cpu", enabled=False):
            freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
            emb = torch.cat((freqs, freqs), dim=-1)
            cos = emb.cos()
            sin = emb.sin()
        cos = cos * attention_scaling
        sin = sin * attention_scaling
        nb = inv_freq.numel()
        # ropesim has one (cos, sin) per block: both halves of the row must agree
        assert torch.equal(cos[..., :nb], cos[..., nb:]) and torch.equal(sin[..., :nb], sin[..., nb:])
        entry = {"name": name, "blocks": nb, "arrays": {}}
        if name == SCALED_BASE_10000:
            entry["schedule"] = "hf-config:" + config
        arrays = {"angle": freqs[0], "cos_fp32": cos[0, :, :nb], "sin_fp32": sin[0, :, :nb]}
        for dtype, label in ((torch.bfloat16, "bf16"), (torch.float16, "fp16")):
            arrays["cos_" + label] = cos.to(dtype=dtype)[0, :, :nb].view(torch.int16)
            arrays["sin_" + label] = sin.to(dtype=dtype)[0, :, :nb].view(torch.int16)
        for key, tensor in arrays.items():
            data = tensor.contiguous().numpy().tobytes()
            entry["arrays"][key] = {"offset": offset, "bytes": len(data),
                                    "element_bytes": tensor.element_size()}
            blobs.append(data)
            offset += len(data)
        header["presets"].append(entry)
    # GPT-NeoX #1003 (head dim 32, base 1e4, model.half()): EleutherAI/gpt-neox@007003aa
    # megatron/model/positional_embeddings.py:19-38 (RotaryEmbedding): the fp32
    # inv_freq buffer cast to fp16 by .half(), t = arange(seq_len).type_as(inv_freq) (fp16),
    # freqs = einsum('i,j->ij', t, inv_freq) (fp16), emb = cat(freqs, freqs), emb.cos(). The
    # report ran on CUDA, whose Half cos computes in float and rounds once (opmath); PyTorch
    # 1.13's CPU has no Half cos, so the float step is spelled out: emb.float().cos().half().
    neox_positions = 65536
    inv_freq = (1.0 / (10000 ** (torch.arange(0, 32, 2).float() / 32))).half()
    t = torch.arange(neox_positions).type_as(inv_freq)
    freqs = torch.einsum("i,j->ij", t, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos = emb.float().cos().half()
    sin = emb.float().sin().half()
    entry = {"name": "gpt-neox-1003", "schedule": "conventional:base=10000,dim=32",
             "positions": neox_positions, "blocks": 16, "arrays": {}}
    for key, tensor in (("cos_fp16", cos[:, :16]), ("sin_fp16", sin[:, :16])):
        data = tensor.contiguous().view(torch.int16).numpy().tobytes()
        entry["arrays"][key] = {"offset": offset, "bytes": len(data), "element_bytes": 2}
        blobs.append(data)
        offset += len(data)
    header["neox"] = entry
    path = os.path.join(out_dir, f"hf_{capability}.bin")
    with open(path + ".tmp", "wb") as f:
        f.write((json.dumps(header) + "\n").encode())
        for b in blobs:
            f.write(b)
    os.replace(path + ".tmp", path)


def main():
    if len(sys.argv) < 3:
        print("usage: hf_tables.py MODELS_JSON OUT_DIR [POSITIONS]", file=sys.stderr)
        return 2
    models_json, out_dir = sys.argv[1], sys.argv[2]
    positions = int(sys.argv[3]) if len(sys.argv) > 3 else 16384
    os.makedirs(out_dir, exist_ok=True)
    if os.environ.get("ROPESIM_TORCH_CHILD"):
        child(models_json, out_dir, os.environ["ATEN_CPU_CAPABILITY"], positions)
        return 0
    for capability in CAPABILITIES:
        for suffix in (".bin", ".skip"):
            if os.path.exists(os.path.join(out_dir, f"hf_{capability}{suffix}")):
                os.remove(os.path.join(out_dir, f"hf_{capability}{suffix}"))
        env = dict(os.environ, ATEN_CPU_CAPABILITY=capability, ROPESIM_TORCH_CHILD="1",
                   OMP_NUM_THREADS="1")
        subprocess.run([sys.executable] + sys.argv, env=env, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
