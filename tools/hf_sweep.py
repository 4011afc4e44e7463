"""Try Hugging Face models on `ocl` as a new user would, and print a table.

Each model is built from a tiny config (hidden 64, 2 layers, vocab 512, seq 32, batch 2; no
weights are downloaded), then on `ocl` in strict mode (a CPU fallback is an error):
  eager     forward + backward, loss and every gradient against the same model on the CPU;
  compiled  torch.compile(model) forward + backward, the same comparison;
  generate  model.generate(max_new_tokens=8), greedy, tokens must equal the CPU's (decoders);
and with --phases all also: beam (3 beams, tokens equal CPU's), sample (top-k/top-p/temperature/
repetition penalty, runs natively), train (dropout on, runs natively), amp (bf16 autocast loss
against CPU's bf16 autocast).
Each model runs in its own subprocess (a crash or a hang costs one row, not the sweep).

    PYTHONPATH=src python tools/hf_sweep.py                 # all models, all phases
    PYTHONPATH=src python tools/hf_sweep.py gpt2 t5 --no-compile
    PYTHONPATH=src python tools/hf_sweep.py --extra --phases all   # the second, wider set
    PYTHONPATH=src python tools/hf_sweep.py --one gpt2      # one model, in this process, verbose
Needs `transformers`; HF_HUB_OFFLINE=1 is set.
"""

import argparse
import json
import os
import subprocess
import sys
import time
import traceback

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

H, L, V, S, B = 64, 2, 512, 32, 2
HEADS = dict(num_attention_heads=4)


def _cfg(name):
    """(config, auto-model class name, input kind, is_decoder_for_generate)."""
    import transformers as T

    common = dict(vocab_size=V, hidden_size=H, num_hidden_layers=L, intermediate_size=128, **HEADS)
    dec = dict(common, max_position_embeddings=128)
    if name == "llama":
        return T.LlamaConfig(**dec, num_key_value_heads=2), "AutoModelForCausalLM", "lm", True
    if name == "gpt2":
        return T.GPT2Config(vocab_size=V, n_embd=H, n_layer=L, n_head=4, n_positions=128), "AutoModelForCausalLM", "lm", True
    if name == "mistral":
        return T.MistralConfig(**dec, num_key_value_heads=2, sliding_window=16), "AutoModelForCausalLM", "lm", True
    if name == "qwen2":
        return T.Qwen2Config(**dec, num_key_value_heads=2), "AutoModelForCausalLM", "lm", True
    if name == "qwen3":
        return T.Qwen3Config(**dec, num_key_value_heads=2, head_dim=16), "AutoModelForCausalLM", "lm", True
    if name == "gemma":
        return T.GemmaConfig(**dec, num_key_value_heads=2, head_dim=16), "AutoModelForCausalLM", "lm", True
    if name == "gemma2":
        return T.Gemma2Config(**dec, num_key_value_heads=2, head_dim=16, sliding_window=16), "AutoModelForCausalLM", "lm", True
    if name == "phi":
        return T.PhiConfig(**dec), "AutoModelForCausalLM", "lm", True
    if name == "phi3":
        return T.Phi3Config(**dec, num_key_value_heads=2, pad_token_id=0), "AutoModelForCausalLM", "lm", True
    if name == "opt":
        return T.OPTConfig(vocab_size=V, hidden_size=H, num_hidden_layers=L, ffn_dim=128, num_attention_heads=4,
                           word_embed_proj_dim=H, max_position_embeddings=128), "AutoModelForCausalLM", "lm", True
    if name == "gpt_neox":
        return T.GPTNeoXConfig(**dec), "AutoModelForCausalLM", "lm", True
    if name == "falcon":
        return T.FalconConfig(vocab_size=V, hidden_size=H, num_hidden_layers=L, num_attention_heads=4,
                              new_decoder_architecture=False, multi_query=True), "AutoModelForCausalLM", "lm", True
    if name == "bloom":
        return T.BloomConfig(vocab_size=V, hidden_size=H, n_layer=L, n_head=4), "AutoModelForCausalLM", "lm", True
    if name == "t5":
        return T.T5Config(vocab_size=V, d_model=H, d_kv=16, d_ff=128, num_layers=L, num_heads=4,
                          decoder_start_token_id=0), "AutoModelForSeq2SeqLM", "seq2seq", True
    if name == "bart":
        return T.BartConfig(vocab_size=V, d_model=H, encoder_layers=L, decoder_layers=L, encoder_attention_heads=4,
                            decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128,
                            max_position_embeddings=128), "AutoModelForSeq2SeqLM", "seq2seq", True
    if name == "bert":
        return T.BertConfig(**common), "AutoModelForMaskedLM", "mlm", False
    if name == "roberta":
        return T.RobertaConfig(**common, max_position_embeddings=130), "AutoModelForMaskedLM", "mlm", False
    if name == "distilbert":
        return T.DistilBertConfig(vocab_size=V, dim=H, n_layers=L, n_heads=4, hidden_dim=128), "AutoModelForMaskedLM", "mlm", False
    if name == "albert":
        return T.AlbertConfig(**common, embedding_size=32), "AutoModelForMaskedLM", "mlm", False
    if name == "deberta_v2":
        return T.DebertaV2Config(**common, max_position_embeddings=128, relative_attention=True,
                                 pos_att_type=["p2c", "c2p"], position_buckets=16), "AutoModelForMaskedLM", "mlm", False
    if name == "vit":
        return T.ViTConfig(hidden_size=H, num_hidden_layers=L, intermediate_size=128, image_size=32, patch_size=8,
                           num_labels=10, **HEADS), "AutoModelForImageClassification", "image", False
    if name == "convnext":
        return T.ConvNextConfig(hidden_sizes=[16, 32], depths=[1, 1], num_stages=2, image_size=32,
                                num_labels=10), "AutoModelForImageClassification", "image", False
    if name == "resnet":
        return T.ResNetConfig(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic",
                              num_labels=10), "AutoModelForImageClassification", "image", False
    if name == "whisper":
        return T.WhisperConfig(vocab_size=V, d_model=H, encoder_layers=L, decoder_layers=L, encoder_attention_heads=4,
                               decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, num_mel_bins=16,
                               max_source_positions=32, max_target_positions=64, decoder_start_token_id=1,
                               pad_token_id=0, eos_token_id=2, bos_token_id=1,
                               begin_suppress_tokens=None, suppress_tokens=None), "AutoModelForSpeechSeq2Seq", "audio_s2s", True
    if name == "wav2vec2":
        return T.Wav2Vec2Config(vocab_size=32, hidden_size=H, num_hidden_layers=L, intermediate_size=128,
                                conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3),
                                num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
                                do_stable_layer_norm=False, feat_extract_norm="group",
                                **HEADS), "AutoModelForCTC", "audio_ctc", False
    if name == "clip":
        return T.CLIPConfig(text_config=dict(vocab_size=V, hidden_size=H, num_hidden_layers=L, intermediate_size=128,
                                             max_position_embeddings=S, **HEADS),
                            vision_config=dict(hidden_size=H, num_hidden_layers=L, intermediate_size=128,
                                               image_size=32, patch_size=8, **HEADS),
                            projection_dim=32), "CLIPModel", "clip", False
    if name == "mamba":
        return T.MambaConfig(vocab_size=V, hidden_size=H, num_hidden_layers=L, state_size=8,
                             use_mambapy=False), "AutoModelForCausalLM", "lm", True
    # a second, wider set
    if name == "llama_pad":  # left padding and an attention mask, as batched generation uses
        return T.LlamaConfig(**dec, num_key_value_heads=2, pad_token_id=0), "AutoModelForCausalLM", "lm_pad", True
    if name == "gptj":
        return T.GPTJConfig(vocab_size=V, n_embd=H, n_layer=L, n_head=4, rotary_dim=8, n_positions=128), "AutoModelForCausalLM", "lm", True
    if name == "gpt_neo":
        return T.GPTNeoConfig(vocab_size=V, hidden_size=H, num_layers=L, num_heads=4, attention_types=[[["global", "local"], 1]],
                              window_size=8, max_position_embeddings=128), "AutoModelForCausalLM", "lm", True
    if name == "codegen":
        return T.CodeGenConfig(vocab_size=V, n_embd=H, n_layer=L, n_head=4, rotary_dim=8, n_positions=128, n_ctx=128), "AutoModelForCausalLM", "lm", True
    if name == "gpt_bigcode":
        return T.GPTBigCodeConfig(vocab_size=V, n_embd=H, n_layer=L, n_head=4, n_positions=128, multi_query=True), "AutoModelForCausalLM", "lm", True
    if name == "mpt":
        return T.MptConfig(vocab_size=V, d_model=H, n_layers=L, n_heads=4, max_seq_len=128), "AutoModelForCausalLM", "lm", True
    if name == "mixtral":
        return T.MixtralConfig(**dec, num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2), "AutoModelForCausalLM", "lm", True
    if name == "qwen2_moe":
        return T.Qwen2MoeConfig(**dec, num_key_value_heads=2, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                                shared_expert_intermediate_size=64), "AutoModelForCausalLM", "lm", True
    if name == "gemma3":
        return T.Gemma3TextConfig(**dec, num_key_value_heads=2, head_dim=16, sliding_window=16), "AutoModelForCausalLM", "lm", True
    if name == "xglm":
        return T.XGLMConfig(vocab_size=V, d_model=H, num_layers=L, attention_heads=4, ffn_dim=128, max_position_embeddings=128), "AutoModelForCausalLM", "lm", True
    if name == "rwkv":
        return T.RwkvConfig(vocab_size=V, hidden_size=H, num_hidden_layers=L, attention_hidden_size=H, intermediate_size=128,
                            context_length=128, use_cache=False), "AutoModelForCausalLM", "lm", True
    if name == "mamba2":
        return T.Mamba2Config(vocab_size=V, hidden_size=H, num_hidden_layers=L, state_size=8, num_heads=8, head_dim=16,
                              n_groups=1, chunk_size=16, expand=2), "AutoModelForCausalLM", "lm", True
    if name == "marian":
        return T.MarianConfig(vocab_size=V, d_model=H, encoder_layers=L, decoder_layers=L, encoder_attention_heads=4,
                              decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, max_position_embeddings=128,
                              decoder_start_token_id=0, pad_token_id=0), "AutoModelForSeq2SeqLM", "seq2seq", True
    if name == "pegasus":
        return T.PegasusConfig(vocab_size=V, d_model=H, encoder_layers=L, decoder_layers=L, encoder_attention_heads=4,
                               decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128,
                               max_position_embeddings=128), "AutoModelForSeq2SeqLM", "seq2seq", True
    if name == "electra":
        return T.ElectraConfig(**common, embedding_size=32), "AutoModelForMaskedLM", "mlm", False
    if name == "xlnet":
        return T.XLNetConfig(vocab_size=V, d_model=H, n_layer=L, n_head=4, d_inner=128), "AutoModelForCausalLM", "lm", False
    if name == "funnel":
        return T.FunnelConfig(vocab_size=V, d_model=H, block_sizes=[1, 1], n_head=4, d_head=16, d_inner=128), "AutoModelForMaskedLM", "mlm", False
    if name == "convbert":
        return T.ConvBertConfig(**common, embedding_size=H), "AutoModelForMaskedLM", "mlm", False
    if name == "squeezebert":
        return T.SqueezeBertConfig(**common, embedding_size=H), "AutoModelForMaskedLM", "mlm", False
    if name == "mobilebert":
        return T.MobileBertConfig(**common, embedding_size=32, intra_bottleneck_size=32, true_hidden_size=32,
                                  num_feedforward_networks=2), "AutoModelForMaskedLM", "mlm", False
    if name == "longformer":
        return T.LongformerConfig(**common, attention_window=8, max_position_embeddings=130), "AutoModelForMaskedLM", "mlm", False
    if name == "swin":
        return T.SwinConfig(image_size=32, patch_size=2, embed_dim=16, depths=[1, 1], num_heads=[2, 4], window_size=4,
                            num_labels=10), "AutoModelForImageClassification", "image", False
    if name == "beit":
        return T.BeitConfig(hidden_size=H, num_hidden_layers=L, intermediate_size=128, image_size=32, patch_size=8,
                            use_relative_position_bias=True, num_labels=10, **HEADS), "AutoModelForImageClassification", "image", False
    if name == "dinov2":
        return T.Dinov2Config(hidden_size=H, num_hidden_layers=L, image_size=32, patch_size=8, num_labels=10,
                              **HEADS), "AutoModelForImageClassification", "image", False
    if name == "segformer":
        return T.SegformerConfig(num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32],
                                 num_attention_heads=[1, 2], patch_sizes=[7, 3], strides=[4, 2], decoder_hidden_size=32,
                                 num_labels=10), "AutoModelForImageClassification", "image", False
    if name == "mobilenet_v2":
        return T.MobileNetV2Config(image_size=32, depth_multiplier=0.25, num_labels=10), "AutoModelForImageClassification", "image", False
    if name == "efficientnet":
        return T.EfficientNetConfig(image_size=32, width_coefficient=0.25, depth_coefficient=0.25, num_labels=10,
                                    hidden_dim=320), "AutoModelForImageClassification", "image", False
    if name == "mobilevit":
        return T.MobileViTConfig(image_size=32, hidden_sizes=[16, 24, 32], neck_hidden_sizes=[8, 8, 16, 16, 24, 24, 32],
                                 num_labels=10), "AutoModelForImageClassification", "image", False
    if name == "hubert":
        return T.HubertConfig(vocab_size=32, hidden_size=H, num_hidden_layers=L, intermediate_size=128, conv_dim=(16, 16),
                              conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                              num_conv_pos_embedding_groups=4, **HEADS), "AutoModelForCTC", "audio_ctc", False
    if name == "wavlm":
        return T.WavLMConfig(vocab_size=32, hidden_size=H, num_hidden_layers=L, intermediate_size=128, conv_dim=(16, 16),
                             conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                             num_conv_pos_embedding_groups=4, num_buckets=32, max_bucket_distance=64, **HEADS), "AutoModelForCTC", "audio_ctc", False
    if name == "siglip":
        return T.SiglipConfig(text_config=dict(vocab_size=V, hidden_size=H, num_hidden_layers=L, intermediate_size=128,
                                               max_position_embeddings=16, **HEADS),
                              vision_config=dict(hidden_size=H, num_hidden_layers=L, intermediate_size=128,
                                                 image_size=32, patch_size=8, **HEADS)), "SiglipModel", "clip", False
    raise KeyError(name)


EXTRA = ["llama_pad", "gptj", "gpt_neo", "codegen", "gpt_bigcode", "mpt", "mixtral", "qwen2_moe", "gemma3", "xglm",
         "rwkv", "mamba2", "marian", "pegasus", "electra", "xlnet", "funnel", "convbert", "squeezebert", "mobilebert",
         "longformer", "swin", "beit", "dinov2", "segformer", "mobilenet_v2", "efficientnet", "mobilevit", "hubert",
         "wavlm", "siglip"]

MODELS = ["llama", "gpt2", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "phi", "phi3", "opt", "gpt_neox",
          "falcon", "bloom", "t5", "bart", "bert", "roberta", "distilbert", "albert", "deberta_v2", "vit",
          "convnext", "resnet", "whisper", "wav2vec2", "clip", "mamba"]


def _inputs(kind, cfg):
    import torch

    g = torch.Generator().manual_seed(1)
    if kind in ("lm", "mlm"):
        ids = torch.randint(3, V, (B, S), generator=g)
        return dict(input_ids=ids, labels=ids)
    if kind == "lm_pad":
        ids = torch.randint(3, V, (B, S), generator=g)
        mask = torch.ones(B, S, dtype=torch.long)
        mask[0, :5] = 0
        ids[0, :5] = 0
        return dict(input_ids=ids, attention_mask=mask, labels=ids.masked_fill(mask == 0, -100))
    if kind == "seq2seq":
        ids = torch.randint(3, V, (B, S), generator=g)
        lab = torch.randint(3, V, (B, S // 2), generator=g)
        return dict(input_ids=ids, labels=lab)
    if kind == "image":
        return dict(pixel_values=torch.randn(B, 3, 32, 32, generator=g), labels=torch.randint(0, 10, (B,), generator=g))
    if kind == "audio_s2s":
        feats = torch.randn(B, cfg.num_mel_bins, 2 * cfg.max_source_positions, generator=g)
        return dict(input_features=feats, labels=torch.randint(3, V, (B, 8), generator=g))
    if kind == "audio_ctc":
        return dict(input_values=torch.randn(B, 1600, generator=g), labels=torch.randint(1, 32, (B, 6), generator=g))
    if kind == "clip":
        ids = torch.randint(3, V, (B, 16), generator=g)
        return dict(input_ids=ids, pixel_values=torch.randn(B, 3, 32, 32, generator=g), return_loss=True)
    raise KeyError(kind)


def _loss(out):
    return out.loss if getattr(out, "loss", None) is not None else out.logits.float().pow(2).mean()


def _fwd_bwd(model, inputs):
    out = _loss(model(**inputs))
    out.backward()
    base = getattr(model, "_orig_mod", model)  # torch.compile's wrapper prefixes parameter names
    grads = {n: p.grad.detach().cpu().clone() for n, p in base.named_parameters() if p.grad is not None}
    return out.detach().cpu(), grads


def _compare(ref, got):
    (l0, g0), (l1, g1) = ref, got
    dl = (l0 - l1).abs().item()
    missing = sorted(set(g0) ^ set(g1))
    dg, worst = 0.0, ""
    for n in g0:
        if n in g1:
            d = (g0[n] - g1[n]).abs().max().item() / (1.0 + g0[n].abs().max().item()) if g0[n].numel() else 0.0
            if not d <= dg:  # also catches NaN
                dg, worst = d, n
    ok = dl <= 1e-4 * (1 + abs(l0.item())) and dg <= 1e-3 and not missing
    return ok, dl, dg, worst, missing


def _short(e):
    lines = [x for x in str(e).strip().splitlines() if x.strip()]
    msg = type(e).__name__ + ": " + (lines[0] if lines else "")
    for x in lines:
        if "ocl" in x and ("aten::" in x or "strict" in x or "fallback" in x.lower()):
            msg = type(e).__name__ + ": " + x
            break
    return msg[:240]


def run_one(name, phases, verbose):
    import torch
    import torch_ocl
    import transformers as T

    row = dict(model=name)
    cfg, cls, kind, gen = _cfg(name)
    torch.manual_seed(0)
    M = getattr(T, cls)
    model = M.from_config(cfg, attn_implementation="eager" if name in ("gemma2",) else None) if cls.startswith("Auto") else M(cfg)
    model.eval()  # dropout off: CPU and ocl draw different random streams
    inputs = _inputs(kind, cfg)
    ref = _fwd_bwd(model, inputs)
    model.zero_grad(set_to_none=True)
    mo = model.to("ocl")
    dinp = {k: (v.to("ocl") if isinstance(v, torch.Tensor) else v) for k, v in inputs.items()}

    def phase(key, fn):
        t = time.time()
        try:
            r = fn()
            row[key] = "OK" if r[0] else "WRONG"
            row[key + "_diff"] = "loss %.1e grad %.1e" % (r[1], r[2]) if len(r) > 2 else r[1]
            if not r[0]:
                why = f"mismatch at {r[3] or r[4]}" if len(r) > 3 else str(r[1])[:200]
                row.setdefault("first_failure", f"{key}: {why}")
        except Exception as e:  # noqa: BLE001 - the sweep reports every failure
            row[key] = "FAIL"
            row.setdefault("first_failure", f"{key}: {_short(e)}")
            if verbose:
                traceback.print_exc()
        row[key + "_s"] = round(time.time() - t, 1)
        mo.zero_grad(set_to_none=True)

    if "eager" in phases:
        def eager():
            with torch_ocl.strict():
                got = _fwd_bwd(mo, dinp)
            return _compare(ref, got)
        phase("eager", eager)
    if "compiled" in phases:
        def compiled():
            torch._dynamo.reset()
            c = torch.compile(mo)
            with torch_ocl.strict():
                got = _fwd_bwd(c, dinp)
            return _compare(ref, got)
        phase("compiled", compiled)
    if "generate" in phases and gen:
        def generate():
            model_cpu = mo.to("cpu")
            gk = dict(max_new_tokens=8, do_sample=False, min_new_tokens=8)
            gin = {k: v for k, v in inputs.items() if k not in ("labels", "return_loss")}
            with torch.no_grad():
                t_ref = model_cpu.generate(**gin, **gk)
                m2 = model_cpu.to("ocl")
                with torch_ocl.strict():
                    t_got = m2.generate(**{k: v.to("ocl") for k, v in gin.items()}, **gk).cpu()
            eq = t_ref.shape == t_got.shape and bool((t_ref == t_got).all())
            return eq, "tokens equal" if eq else f"tokens differ {t_ref.tolist()} vs {t_got.tolist()}"
        phase("generate", generate)
    mo.to("ocl").float()
    if "beam" in phases and gen:
        def beam():  # beam search, 3 beams: tokens equal CPU's
            gk = dict(max_new_tokens=8, min_new_tokens=8, num_beams=3, do_sample=False)
            gin = {k: v for k, v in inputs.items() if k not in ("labels", "return_loss")}
            with torch.no_grad():
                m_cpu = mo.to("cpu")
                t_ref = m_cpu.generate(**gin, **gk)
                m2 = m_cpu.to("ocl")
                with torch_ocl.strict():
                    t_got = m2.generate(**{k: v.to("ocl") for k, v in gin.items()}, **gk).cpu()
            eq = torch.equal(t_ref, t_got)
            return eq, "tokens equal" if eq else f"tokens differ {t_ref.tolist()} vs {t_got.tolist()}"
        phase("beam", beam)
    if "sample" in phases and gen:
        def sample():  # top-k / top-p / temperature / repetition penalty: runs natively (no CPU comparison)
            gin = {k: v.to("ocl") for k, v in inputs.items() if k not in ("labels", "return_loss")}
            with torch.no_grad(), torch_ocl.strict():
                t = mo.generate(**gin, max_new_tokens=8, do_sample=True, top_k=50, top_p=0.9, temperature=0.8,
                                repetition_penalty=1.2)
            return True, "shape %s" % (tuple(t.shape),)
        phase("sample", sample)
    if "train" in phases:
        def train():  # train mode (dropout on): runs natively, loss finite (no CPU comparison)
            mo.train()
            with torch_ocl.strict():
                loss = _loss(mo(**dinp))
                loss.backward()
            mo.eval()
            return bool(torch.isfinite(loss).item()), "loss %.4f" % loss.item()
        phase("train", train)
    if "amp" in phases:
        def amp():  # bf16 autocast forward against CPU's bf16 autocast
            with torch.no_grad():
                m_cpu = mo.to("cpu")
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    l_ref = _loss(m_cpu(**inputs)).float().item()
                m2 = m_cpu.to("ocl")
                with torch.autocast("ocl", dtype=torch.bfloat16), torch_ocl.strict():
                    l_got = _loss(m2(**dinp)).float().item()
            return abs(l_ref - l_got) <= 2e-2 * (1 + abs(l_ref)), "loss %.4f vs cpu %.4f" % (l_got, l_ref)
        phase("amp", amp)
    fb = torch_ocl.fallback_report() if hasattr(torch_ocl, "fallback_report") else None
    if verbose:
        print("fallback_report:", fb)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="*")
    ap.add_argument("--extra", action="store_true", help="the second, wider set of models")
    ap.add_argument("--one", help="run one model in this process (verbose tracebacks)")
    ap.add_argument("--phases", default="eager,compiled,generate",
                    help="comma-separated, of eager,compiled,generate,beam,sample,train,amp; or all")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--no-generate", action="store_true")
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--json", help="write the rows here")
    a = ap.parse_args()
    phases = set(a.phases.split(",")) if a.phases != "all" else {
        "eager", "compiled", "generate", "beam", "sample", "train", "amp"}
    if a.no_compile:
        phases.discard("compiled")
    if a.no_generate:
        phases.discard("generate")
    if a.one:
        row = run_one(a.one, phases, verbose=True)
        print("ROW " + json.dumps(row))
        return
    rows = []
    for name in a.models or (EXTRA if a.extra else MODELS):
        cmd = [sys.executable, __file__, "--one", name, "--phases", ",".join(sorted(phases))]
        t = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
            got = [ln[4:] for ln in p.stdout.splitlines() if ln.startswith("ROW ")]
            if got:
                row = json.loads(got[-1])
            else:
                tail = [x for x in (p.stderr or "").strip().splitlines() if x.strip()]
                row = dict(model=name, first_failure=f"setup: rc={p.returncode} " + (tail[-1][:200] if tail else ""))
        except subprocess.TimeoutExpired:
            row = dict(model=name, first_failure=f"timeout after {a.timeout}s")
        row["wall_s"] = round(time.time() - t, 1)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    print()
    extra = [p for p in ("beam", "sample", "train", "amp") if p in phases]
    print("| model | eager | compiled | generate | " + "".join(p + " | " for p in extra)
          + "eager diff | compiled diff | first failure |")
    print("|---" * (7 + len(extra)) + "|")
    for r in rows:
        cells = [r["model"]] + [r.get(p, "-") for p in ["eager", "compiled", "generate"] + extra]
        cells += [r.get("eager_diff", ""), r.get("compiled_diff", ""), r.get("first_failure", "").replace("|", "/")]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
