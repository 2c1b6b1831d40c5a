"""Drive nano-vllm (a copy of the corpus engine, never committed: run.sh
copies it into an ignored folder) with random weights, a tiny Qwen3 config
and a pure-torch stand-in for flash-attn (shims/), for capguard's trace test.

python drive.py --engine DIR --out result.json [--eager]
Generates twice from fixed prompts (the first a warm-up); writes the tokens
and the second generate's time."""

import argparse
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", required=True, help="the folder holding the nanovllm package")
    ap.add_argument("--out", required=True)
    ap.add_argument("--eager", action="store_true")
    ap.add_argument("--prompts", type=int, default=24)
    ap.add_argument("--tokens", type=int, default=48)
    a = ap.parse_args(argv)
    sys.path.insert(0, os.path.join(HERE, "shims", "front"))
    sys.path.insert(0, os.path.abspath(a.engine))
    sys.path.append(os.path.join(HERE, "shims", "back"))
    import torch

    import nanovllm.engine.model_runner as mr
    from nanovllm import LLM, SamplingParams

    def random_weights(model, path):
        g = torch.Generator(device="cuda")
        g.manual_seed(0)
        with torch.no_grad():
            for name, p in model.named_parameters():
                if name.endswith("norm.weight"):
                    p.fill_(1.0)
                else:
                    p.copy_(torch.randn(p.shape, generator=g, device=p.device, dtype=torch.float32).to(p.dtype) * 0.05)

    mr.load_model = random_weights
    cfg = {"architectures": ["Qwen3ForCausalLM"], "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4,
           "num_key_value_heads": 2, "head_dim": 64, "num_hidden_layers": 2, "vocab_size": 1024,
           "max_position_embeddings": 1024, "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "torch_dtype": "bfloat16",
           "tie_word_embeddings": False}
    model_dir = tempfile.mkdtemp(prefix="tiny-qwen3-")
    with open(os.path.join(model_dir, "config.json"), "w") as f:
        json.dump(cfg, f)
    llm = LLM(model_dir, enforce_eager=a.eager, max_model_len=512, max_num_batched_tokens=4096, max_num_seqs=32,
              gpu_memory_utilization=0.05, kvcache_block_size=256)
    g = torch.Generator()
    g.manual_seed(1)
    prompts = [torch.randint(1, 1000, (int(n),), generator=g).tolist() for n in torch.randint(8, 64, (a.prompts,), generator=g)]
    sp = SamplingParams(temperature=0.7, max_tokens=a.tokens, ignore_eos=True)
    res = {"eager": a.eager}
    for run in ("warm", "timed"):
        torch.manual_seed(0)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        outs = llm.generate(prompts, sp, use_tqdm=False)
        torch.cuda.synchronize()
        res[run + "_s"] = time.perf_counter() - t0
        res[run + "_tokens"] = [o["token_ids"] for o in outs]
    res["graphs"] = sorted(getattr(llm.model_runner, "graphs", {}) or {})
    with open(a.out, "w") as f:
        json.dump(res, f)
    print("nanovllm: eager=%s warm %.2fs timed %.2fs graphs %s tokens %d" % (a.eager, res["warm_s"], res["timed_s"], res["graphs"],
                                                                       sum(len(t) for t in res["timed_tokens"])))


if __name__ == "__main__":
    main(sys.argv[1:])
