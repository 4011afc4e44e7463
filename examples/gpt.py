"""A small GPT: token + position embeddings, causal self-attention through
F.scaled_dot_product_attention, LayerNorm, GELU MLP, weight tying; AdamW, clip_grad_norm_,
cross-entropy. Trained on a synthetic, learnable token stream."""

from __future__ import annotations

import dataclasses

import torch
import torch.nn as nn
import torch.nn.functional as F

from examples._workload import Workload, cycle, run_main


@dataclasses.dataclass
class GPTConfig:
    vocab: int = 256
    block: int = 64
    layers: int = 4
    heads: int = 4
    embd: int = 128
    dropout: float = 0.1


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.heads = cfg.heads
        self.qkv = nn.Linear(cfg.embd, 3 * cfg.embd)
        self.proj = nn.Linear(cfg.embd, cfg.embd)
        self.dropout = cfg.dropout
        self.resid_drop = nn.Dropout(cfg.dropout)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(
            q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0)
        return self.resid_drop(self.proj(y.transpose(1, 2).reshape(b, t, c)))


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.embd)
        self.attn = CausalSelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.embd)
        self.mlp = nn.Sequential(
            nn.Linear(cfg.embd, 4 * cfg.embd), nn.GELU(), nn.Linear(4 * cfg.embd, cfg.embd),
            nn.Dropout(cfg.dropout),
        )

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab, cfg.embd)
        self.pos = nn.Embedding(cfg.block, cfg.embd)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.ln_f = nn.LayerNorm(cfg.embd)
        self.head = nn.Linear(cfg.embd, cfg.vocab, bias=False)
        self.head.weight = self.tok.weight  # weight tying
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def forward(self, idx, targets=None):
        t = idx.shape[1]
        pos = torch.arange(t, device=idx.device)
        x = self.drop(self.tok(idx) + self.pos(pos))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        if targets is None:
            return logits
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def token_stream(vocab: int, block: int, batch: int, batches: int, seed: int) -> list:
    """Sequences of an arithmetic progression modulo vocab with a random start and step: the next
    token is predictable from the previous two, so the loss falls fast."""
    g = torch.Generator().manual_seed(seed + 2)
    data = []
    for _ in range(batches):
        start = torch.randint(0, vocab, (batch, 1), generator=g)
        stride = torch.randint(1, 8, (batch, 1), generator=g)
        seq = (start + stride * torch.arange(block + 1)) % vocab
        data.append((seq[:, :-1].contiguous(), seq[:, 1:].contiguous()))
    return data


def workload(device: str = "ocl", *, seed: int = 0, small: bool = False,
             dropout: float = 0.1) -> Workload:
    if small:
        cfg = GPTConfig(vocab=64, block=16, layers=2, heads=2, embd=32, dropout=dropout)
        batch = 4
    else:
        cfg = GPTConfig(dropout=dropout)
        batch = 16
    torch.manual_seed(seed)
    model = GPT(cfg).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1)
    batches = [(x.to(device), y.to(device))
               for x, y in token_stream(cfg.vocab, cfg.block, batch, 8, seed)]
    next_batch = cycle(batches)
    model.train()

    def step() -> torch.Tensor:
        x, y = next_batch()
        opt.zero_grad(set_to_none=True)
        loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.detach()

    return Workload("gpt", "train", batch * cfg.block, model, step)


def main(argv=None) -> int:
    return run_main(workload, argv)


if __name__ == "__main__":
    raise SystemExit(main())
