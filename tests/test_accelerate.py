"""The opt-in Hugging Face integration (torch_ocl.integrations.accelerate) with the pinned
accelerate 1.15 and transformers 5.24.

Each check runs in a subprocess (this file as a script), so the wrappers and accelerate's
process-wide state never leak into other tests: one process for the single-process checks
(Accelerator, Trainer, each against the same run on the CPU), and one `accelerate launch
--num_processes 2` run. Training on ocl runs in strict mode, so a hidden CPU fallback fails it.
No hub access: the model is built from a config (HF_HUB_OFFLINE=1).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import traceback

import pytest

pytest.importorskip("accelerate")

HERE = os.path.abspath(__file__)


def _env(**extra):
    env = dict(os.environ)
    env["HF_HUB_OFFLINE"] = "1"
    env["TRANSFORMERS_OFFLINE"] = "1"
    env.setdefault("GLOO_SOCKET_IFNAME", "lo")
    env.pop("TORCH_OCL_ACCELERATE", None)
    env.update(extra)
    return env


# ---------------------------------------------------------------- worker side


def _data(n=16, seed=0):
    import torch

    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 6, generator=g)
    y = x @ torch.randn(6, 3, generator=g) + 0.1 * torch.randn(n, 3, generator=g)
    return x, y


def _model():
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))


def _accelerator_run(cpu, mixed_precision="no"):
    """3 SGD steps through Accelerator.prepare; returns (device, losses, final weights)."""
    import contextlib

    import torch
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState

    import torch_ocl

    AcceleratorState._reset_state(reset_partial_state=True)
    acc = Accelerator(cpu=cpu, mixed_precision=mixed_precision)
    x, y = _data()
    dl = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=4)
    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt, dl = acc.prepare(model, opt, dl)
    losses = []
    with contextlib.nullcontext() if cpu else torch_ocl.strict():
        for step, (xb, yb) in enumerate(dl):
            assert xb.device == acc.device and yb.device == acc.device
            if mixed_precision == "bf16":
                with acc.autocast():
                    assert acc.unwrap_model(model)[0](xb).dtype == torch.bfloat16
            loss = torch.nn.functional.mse_loss(model(xb), yb)
            acc.backward(loss)
            opt.step()
            opt.zero_grad()
            losses.append(acc.gather(loss.detach()).item())
            if step == 2:
                break
    weights = [p.detach().cpu().tolist() for p in acc.unwrap_model(model).parameters()]
    return str(acc.device), str(next(model.parameters()).device), losses, weights


def check_accelerator():
    import torch

    ocl = _accelerator_run(cpu=False)
    cpu = _accelerator_run(cpu=True)
    assert ocl[0] == "ocl:0" and ocl[1] == "ocl:0", ocl[:2]
    assert cpu[0] == "cpu" and cpu[1] == "cpu", cpu[:2]  # cpu=True keeps the CPU
    torch.testing.assert_close(torch.tensor(ocl[2]), torch.tensor(cpu[2]), rtol=1e-5, atol=1e-5)
    for a, b in zip(ocl[3], cpu[3]):
        torch.testing.assert_close(torch.tensor(a), torch.tensor(b), rtol=1e-5, atol=1e-5)


def check_accelerator_bf16():
    """mixed_precision="bf16": autocast on ocl, as accelerate does on the CPU."""
    import torch

    ocl = _accelerator_run(cpu=False, mixed_precision="bf16")
    cpu = _accelerator_run(cpu=True, mixed_precision="bf16")
    assert ocl[0] == "ocl:0", ocl[0]
    torch.testing.assert_close(torch.tensor(ocl[2]), torch.tensor(cpu[2]), rtol=2e-2, atol=2e-2)


def _trainer_run(use_cpu, out_dir, with_weights=False):
    import contextlib

    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

    import torch_ocl

    class Tokens(torch.utils.data.Dataset):
        def __init__(self):
            self.ids = torch.randint(0, 64, (24, 16), generator=torch.Generator().manual_seed(0))

        def __len__(self):
            return len(self.ids)

        def __getitem__(self, i):
            return {"input_ids": self.ids[i], "labels": self.ids[i]}

    cfg = GPT2Config(vocab_size=64, n_positions=16, n_embd=32, n_layer=2, n_head=2,
                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0,
                     eos_token_id=0)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(cfg)
    args = TrainingArguments(
        output_dir=out_dir, per_device_train_batch_size=8, max_steps=3, learning_rate=1e-2,
        logging_steps=1, report_to=[], use_cpu=use_cpu, save_strategy="no", seed=0,
        dataloader_num_workers=0, disable_tqdm=True,
    )
    trainer = Trainer(model=model, args=args, train_dataset=Tokens())
    with contextlib.nullcontext() if use_cpu else torch_ocl.strict():
        trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    out = (str(args.device), str(next(trainer.model.parameters()).device), losses)
    if with_weights:
        out += (torch.cat([p.detach().cpu().flatten() for p in trainer.model.parameters()]),)
    return out


def check_trainer(out_dir):
    import torch

    ocl = _trainer_run(False, out_dir)
    cpu = _trainer_run(True, out_dir)
    assert ocl[:2] == ("ocl:0", "ocl:0"), ocl[:2]
    assert cpu[:2] == ("cpu", "cpu"), cpu[:2]
    assert len(ocl[2]) == 3, ocl
    torch.testing.assert_close(torch.tensor(ocl[2]), torch.tensor(cpu[2]), rtol=1e-4, atol=1e-4)


def single_process_worker(out_path, out_dir):
    import torch_ocl.integrations.accelerate as ocl_accelerate

    ocl_accelerate.enable()
    ocl_accelerate.enable()  # idempotent
    results = {}
    for name, fn in (("accelerator", check_accelerator),
                     ("accelerator_bf16", check_accelerator_bf16),
                     ("trainer", lambda: check_trainer(out_dir))):
        try:
            fn()
            results[name] = "ok"
        except Exception:  # noqa: BLE001
            results[name] = traceback.format_exc()
    with open(out_path, "w") as f:
        json.dump(results, f)


def launched_worker(out_dir):
    """Run by `accelerate launch --num_processes 2` with TORCH_OCL_ACCELERATE=1: no enable() call.
    DDP on 2 ranks, each on its half of every batch, must equal one CPU process on whole batches."""
    import torch
    import torch.distributed as dist
    from accelerate import Accelerator
    from accelerate.utils import DistributedType

    import torch_ocl

    acc = Accelerator()
    res = {"rank": acc.process_index}
    device = str(acc.device)
    try:
        assert acc.num_processes == 2, acc.num_processes
        assert acc.distributed_type == DistributedType.MULTI_CPU, acc.distributed_type
        assert acc.state.backend == "ocl_gloo", acc.state.backend
        assert acc.device.type == "ocl", acc.device
        pg = dist.group.WORLD
        assert pg._get_backend(torch.device("ocl")).name() == "ocl_gloo"
        x, y = _data(n=16)
        dl = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=4)
        model = _model()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model, opt, dl = acc.prepare(model, opt, dl)
        assert isinstance(model, torch.nn.parallel.DistributedDataParallel), type(model)
        losses = []
        with torch_ocl.strict():
            for xb, yb in dl:  # 16 samples, 4 per rank per step: 2 steps
                assert xb.device == acc.device
                loss = torch.nn.functional.mse_loss(model(xb), yb)
                acc.backward(loss)
                opt.step()
                opt.zero_grad()
                losses.append(acc.gather(loss.detach()).mean().item())
        acc.wait_for_everyone()
        # The same training on the CPU, in one process, on batches of 8 (both ranks' shards).
        ref = _model()
        ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
        ref_losses = []
        for i in range(0, 16, 8):
            loss = torch.nn.functional.mse_loss(ref(x[i:i + 8]), y[i:i + 8])
            loss.backward()
            ref_opt.step()
            ref_opt.zero_grad()
            ref_losses.append(loss.item())
        assert len(losses) == 2, losses
        torch.testing.assert_close(torch.tensor(losses), torch.tensor(ref_losses), rtol=1e-5,
                                   atol=1e-5)
        for p, q in zip(acc.unwrap_model(model).parameters(), ref.parameters()):
            torch.testing.assert_close(p.detach().cpu(), q.detach(), rtol=1e-5, atol=1e-5)
        res["accelerator"] = "ok"
    except Exception:  # noqa: BLE001
        res["accelerator"] = traceback.format_exc()
    try:
        # Trainer on 2 processes: the ocl run against the same 2-process run on the CPU (the
        # same samplers, so the same batches), and the ranks' weights equal after training.
        ocl = _trainer_run(False, out_dir, with_weights=True)
        cpu = _trainer_run(True, out_dir, with_weights=True)
        assert ocl[:2] == (device, device), ocl[:2]
        assert [torch.device(d).type for d in cpu[:2]] == ["cpu", "cpu"], cpu[:2]
        assert len(ocl[2]) == 3, ocl[2]
        torch.testing.assert_close(torch.tensor(ocl[2]), torch.tensor(cpu[2]), rtol=1e-4,
                                   atol=1e-4)
        mine = ocl[3].to("ocl")
        theirs = [torch.empty_like(mine) for _ in range(2)]
        dist.all_gather(theirs, mine)
        torch.testing.assert_close(theirs[0].cpu(), theirs[1].cpu(), rtol=0, atol=0)
        torch.testing.assert_close(ocl[3], cpu[3], rtol=1e-3, atol=1e-4)
        res["trainer"] = "ok"
    except Exception:  # noqa: BLE001
        res["trainer"] = traceback.format_exc()
    with open(os.path.join(out_dir, f"rank{dist.get_rank()}.json"), "w") as f:
        json.dump(res, f)
    dist.barrier()
    dist.destroy_process_group()


# ---------------------------------------------------------------- pytest side


@pytest.fixture(scope="module")
def single():
    out_dir = tempfile.mkdtemp(prefix="ocl-accel-")
    out = os.path.join(out_dir, "results.json")
    p = subprocess.run([sys.executable, HERE, "single", out, out_dir], env=_env(),
                       capture_output=True, text=True, timeout=300)
    if not os.path.exists(out):
        pytest.fail("the worker wrote no results:\n" + (p.stdout + p.stderr)[-4000:])
    with open(out) as f:
        res = json.load(f)
    shutil.rmtree(out_dir, ignore_errors=True)
    return res


def test_accelerator_places_on_ocl(single):
    assert single["accelerator"] == "ok", single["accelerator"]


def test_accelerator_bf16_autocast_on_ocl(single):
    assert single["accelerator_bf16"] == "ok", single["accelerator_bf16"]


def test_trainer_trains_on_ocl(single):
    assert single["trainer"] == "ok", single["trainer"]


def _free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_accelerate_launch_two_processes():
    """TORCH_OCL_ACCELERATE=1 accelerate launch --num_processes 2: an Accelerator loop with DDP
    against one CPU process, then Trainer on 2 processes against the same run on the CPU."""
    exe = shutil.which("accelerate", path=os.path.dirname(sys.executable))
    if exe is None:
        pytest.skip("the accelerate command is not installed next to this Python")
    out_dir = tempfile.mkdtemp(prefix="ocl-accel-launch-")
    p = subprocess.run(
        [exe, "launch", "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no",
         "--dynamo_backend", "no", "--main_process_port", str(_free_port()), HERE, "launched",
         out_dir],
        env=_env(TORCH_OCL_ACCELERATE="1", HF_HOME=out_dir), capture_output=True, text=True,
        timeout=240,
    )
    log = (p.stdout + p.stderr)[-4000:]
    for r in range(2):
        path = os.path.join(out_dir, f"rank{r}.json")
        assert os.path.exists(path), f"rank {r} wrote no result (rc {p.returncode}):\n{log}"
        with open(path) as f:
            res = json.load(f)
        for name in ("accelerator", "trainer"):
            assert res.get(name) == "ok", f"rank {r} {name}:\n{res.get(name)}"
    assert p.returncode == 0, log
    shutil.rmtree(out_dir, ignore_errors=True)


def test_cpu_requests_keep_the_cpu():
    """--cpu / use_cpu: the wrappers leave accelerate's choice alone; without the opt-in nothing
    is wrapped."""
    code = (
        "import os, torch, torch_ocl\n"
        "import accelerate.state as s\n"
        "print(getattr(s.PartialState.set_device, '_torch_ocl_wrapped', False))\n"
        "import torch_ocl.integrations.accelerate as a; a.enable()\n"
        "print(getattr(s.PartialState.set_device, '_torch_ocl_wrapped', False))\n"
        "os.environ['LOCAL_RANK'] = '0'\n"
        "st = s.PartialState.__new__(s.PartialState)\n"
        "print(*s.PartialState._prepare_backend(st, cpu=True))\n"
        "print(*s.PartialState._prepare_backend(st, cpu=False))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.splitlines() == [
        "False", "True", "gloo DistributedType.MULTI_CPU", "ocl_gloo DistributedType.MULTI_CPU",
    ], p.stdout


if __name__ == "__main__":
    if sys.argv[1] == "single":
        single_process_worker(sys.argv[2], sys.argv[3])
    else:
        launched_worker(sys.argv[2])
