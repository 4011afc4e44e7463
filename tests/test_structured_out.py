"""out= of structured ops: dtype and device of the out tensor checked as PyTorch's generated
resize_out does (CPU's behaviour on the same call is the reference), resizing with the meta
function's strides or memory format."""

import pytest
import torch

import torch_ocl


def _inputs():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(5, 6, generator=g)
    spd = a @ a.t() + 6 * torch.eye(5)
    return {
        "a": a,
        "i": torch.randint(-5, 5, (5, 6), generator=g),
        "spd": spd,
        "img": torch.randn(1, 2, 3, 4, generator=g),
        "idx": torch.tensor([[0, 5], [1, 4], [2, 3], [3, 2], [4, 1]]),
    }


def _indices(like):
    return torch.empty(0, dtype=torch.long, device=like.device)


# (name, fn(inputs, out), out shape) for structured ops of several families
CASES = [
    ("add", lambda t, out: torch.add(t["a"], t["a"], out=out), (5, 6)),
    ("add_int", lambda t, out: torch.add(t["i"], t["i"], out=out), (5, 6)),
    ("softmax", lambda t, out: torch._softmax(t["a"], 1, False, out=out), (5, 6)),
    ("cumsum", lambda t, out: torch.cumsum(t["a"], 1, out=out), (5, 6)),
    ("sum", lambda t, out: torch.sum(t["a"], 1, out=out), (5,)),
    ("sort_values", lambda t, out: torch.sort(t["a"], 1, out=(out, _indices(out)))[0], (5, 6)),
    ("cholesky", lambda t, out: torch.linalg.cholesky(t["spd"], out=out), (5, 5)),
    ("upsample", lambda t, out: torch._C._nn.upsample_nearest2d(t["img"], [6, 8], out=out),
     (1, 2, 6, 8)),
    ("gather", lambda t, out: torch.gather(t["a"], 1, t["idx"], out=out), (5, 2)),
]


def _to(t, device):
    return {k: v.to(device) for k, v in t.items()}


@pytest.mark.parametrize("name,fn,shape", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.float16])
@pytest.mark.parametrize("size", ["exact", "empty"])
def test_out_dtype_like_cpu(name, fn, shape, dtype, size):
    t = _inputs()

    def make(dev):
        if size == "exact":
            return torch.zeros(shape, dtype=dtype, device=dev)
        return torch.empty(0, dtype=dtype, device=dev)

    out_cpu = make("cpu")
    try:
        ref = fn(t, out_cpu)
        cpu_error = None
    except RuntimeError as e:
        cpu_error = e
    out = make("ocl")
    with torch_ocl.strict():
        if cpu_error is not None:
            with pytest.raises(RuntimeError):
                fn(_to(t, "ocl"), out)
            return
        got = fn(_to(t, "ocl"), out)
    assert got.dtype == ref.dtype and got.shape == ref.shape
    tol = 1e-2 if dtype == torch.float16 else 1e-5
    torch.testing.assert_close(got.cpu(), ref, rtol=tol, atol=tol)
    torch.testing.assert_close(out.cpu(), out_cpu, rtol=tol, atol=tol)


DEVICE_CASES = [c for c in CASES if c[0] in ("softmax", "sum", "cholesky", "upsample")]


@pytest.mark.parametrize("name,fn,shape", DEVICE_CASES, ids=[c[0] for c in DEVICE_CASES])
def test_out_on_cpu_is_a_device_error(name, fn, shape):
    t = _to(_inputs(), "ocl")
    out = torch.empty(shape)
    with torch_ocl.strict(), pytest.raises(RuntimeError, match="device"):
        fn(t, out)
    x = torch.ones(3, device="ocl")  # the process stays usable
    assert (x + 1).sum().item() == 6


def test_resized_out_takes_the_meta_strides():
    x = torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last)
    ref = torch.empty(0)
    torch.add(x, x, out=ref)
    out = torch.empty(0, device="ocl")
    with torch_ocl.strict():
        torch.add(x.to("ocl"), x.to("ocl"), out=out)
    assert out.stride() == ref.stride()
    torch.testing.assert_close(out.cpu(), ref)
