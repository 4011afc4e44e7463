// Helpers that Inductor's generated Python wrappers call on every step of a compiled graph on
// ocl (src/torch_ocl/_inductor/codegen.py emits the calls, runtime.py wraps the assert). Plain
// CPython functions (METH_FASTCALL, tuples read in place): small compiled steps are host-bound,
// and a pybind11 call or torch.empty_strided's argument parser costs more than the work.
//
// _empty_strided_ocl(size, stride, dtype): what torch.empty_strided(size, stride, dtype=dtype,
//   device='ocl') returns on the current device, through the allocator call the factory makes
//   (aten::emptyOutput: same dtype check, same allocator, torch.OutOfMemoryError when full).
//   The ocl counterpart of torch._C._dynamo.guards._empty_strided_cuda.
// _assert_size_stride_all(tensors, specs, start=0): specs[i] = (size, stride) of tensors[i];
//   returns the index of the first tensor from `start` that assert_size_stride(t, size, stride)
//   would reject, or -1. One call for all the inputs of a graph instead of one per input.
// _assert_size_stride(t, size, stride, op_name): torch._C._dynamo.guards.assert_size_stride for
//   the outputs of extern kernels, which the generated wrapper checks one by one (64 a small-GPT
//   training step): the same test in ~60 ns instead of 0.35-0.85 us; on a mismatch PyTorch's own
//   assert runs and raises its error.
#include <torch/csrc/Dtype.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/extension.h>

#include <c10/util/SmallVector.h>

#include "aten/ops.h"
#include "integration/state.h"

namespace py = pybind11;

namespace torch_ocl {
namespace {

// A tuple (or list) of ints into `out`; false with a Python error set otherwise.
bool unpackInts(PyObject* seq, const char* what, c10::SmallVector<int64_t, 8>& out) {
  const bool is_tuple = PyTuple_Check(seq);
  if (!is_tuple && !PyList_Check(seq)) {
    PyErr_Format(PyExc_TypeError, "_empty_strided_ocl: %s must be a tuple of ints, got %s", what,
                 Py_TYPE(seq)->tp_name);
    return false;
  }
  const Py_ssize_t n = is_tuple ? PyTuple_GET_SIZE(seq) : PyList_GET_SIZE(seq);
  out.resize(n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = is_tuple ? PyTuple_GET_ITEM(seq, i) : PyList_GET_ITEM(seq, i);
    const long long v = PyLong_AsLongLong(item);
    if (v == -1 && PyErr_Occurred()) return false;
    out[i] = v;
  }
  return true;
}

PyObject* emptyStridedOcl(PyObject* /*self*/, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (nargs != 3) {
    PyErr_Format(PyExc_TypeError,
                 "_empty_strided_ocl(size, stride, dtype) takes 3 arguments, got %zd", nargs);
    return nullptr;
  }
  c10::SmallVector<int64_t, 8> sizes, strides;
  if (!unpackInts(args[0], "size", sizes) || !unpackInts(args[1], "stride", strides))
    return nullptr;
  if (!THPDtype_Check(args[2])) {
    PyErr_Format(PyExc_TypeError, "_empty_strided_ocl: dtype must be a torch.dtype, got %s",
                 Py_TYPE(args[2])->tp_name);
    return nullptr;
  }
  const c10::ScalarType dtype = reinterpret_cast<THPDtype*>(args[2])->scalar_type;
  // empty_strided's own check (emptyOutput reads empty strides as "contiguous").
  TORCH_CHECK(sizes.size() == strides.size(), "mismatch in length of strides and shape");
  // Both empty: a 0-d tensor (emptyOutput's contiguous path).
  return THPVariable_Wrap(aten::emptyOutput(
      sizes, strides, at::TensorOptions().device(kOcl, currentDevice()).dtype(dtype)));
  END_HANDLE_TH_ERRORS
}

// Whether torch._C._dynamo.guards.assert_size_stride(t, size, stride) accepts t: the same ndim,
// then (unless t has no elements) the same sizes, and the same strides where a dimension has
// more than one element. Anything it cannot read (not a tensor, not int tuples) counts as a
// mismatch: the caller's assert_size_stride then raises PyTorch's own error for it.
bool matches(PyObject* item, PyObject* size, PyObject* stride) {
  if (!THPVariable_Check(item) || !PyTuple_Check(size) || !PyTuple_Check(stride)) return false;
  const at::Tensor& t = THPVariable_Unpack(item);
  if (t.layout() != c10::kStrided) return false;
  const int64_t ndim = t.dim();
  if (PyTuple_GET_SIZE(size) != ndim || PyTuple_GET_SIZE(stride) != ndim) return false;
  if (t.numel() == 0) return true;
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  for (int64_t i = 0; i < ndim; ++i) {
    const long long want_size = PyLong_AsLongLong(PyTuple_GET_ITEM(size, i));
    const long long want_stride = PyLong_AsLongLong(PyTuple_GET_ITEM(stride, i));
    if ((want_size == -1 || want_stride == -1) && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    if (want_size != sizes[i]) return false;
    if (sizes[i] > 1 && want_stride != strides[i]) return false;
  }
  return true;
}

PyObject* assertSizeStrideAll(PyObject* /*self*/, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (nargs != 2 && nargs != 3) {
    PyErr_Format(PyExc_TypeError,
                 "_assert_size_stride_all(tensors, specs, start=0) takes 2 or 3 arguments, got %zd",
                 nargs);
    return nullptr;
  }
  PyObject* tensors = args[0];
  PyObject* specs = args[1];
  if (!PyTuple_Check(tensors) || !PyTuple_Check(specs)) {
    PyErr_SetString(PyExc_TypeError, "_assert_size_stride_all: expected two tuples");
    return nullptr;
  }
  const Py_ssize_t n = PyTuple_GET_SIZE(tensors);
  if (PyTuple_GET_SIZE(specs) != n) {
    PyErr_Format(PyExc_ValueError, "_assert_size_stride_all: %zd tensors but %zd specs", n,
                 PyTuple_GET_SIZE(specs));
    return nullptr;
  }
  Py_ssize_t start = 0;
  if (nargs == 3) {
    start = PyLong_AsSsize_t(args[2]);
    if (start == -1 && PyErr_Occurred()) return nullptr;
  }
  for (Py_ssize_t i = std::max<Py_ssize_t>(start, 0); i < n; ++i) {
    PyObject* spec = PyTuple_GET_ITEM(specs, i);
    if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 2 ||
        !matches(PyTuple_GET_ITEM(tensors, i), PyTuple_GET_ITEM(spec, 0),
                 PyTuple_GET_ITEM(spec, 1)))
      return PyLong_FromSsize_t(i);
  }
  return PyLong_FromLong(-1);
  END_HANDLE_TH_ERRORS
}

PyObject* assertSizeStride(PyObject* /*self*/, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (nargs == 4 && matches(args[0], args[1], args[2])) Py_RETURN_TRUE;  // as PyTorch's
  // A mismatch (or arguments it cannot read): PyTorch's assert says what is wrong.
  static PyObject* torch_assert = [] {
    py::object f = py::module_::import("torch._C._dynamo.guards").attr("assert_size_stride");
    return f.release().ptr();
  }();
  return PyObject_Vectorcall(torch_assert, args, static_cast<size_t>(nargs), nullptr);
  END_HANDLE_TH_ERRORS
}

// NOLINTNEXTLINE(modernize-avoid-c-arrays): CPython keeps a pointer to the table.
PyMethodDef kMethods[] = {
    {"_empty_strided_ocl", reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(emptyStridedOcl)),
     METH_FASTCALL,
     "_empty_strided_ocl(size, stride, dtype): torch.empty_strided on the current ocl device."},
    {"_assert_size_stride_all",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(assertSizeStrideAll)), METH_FASTCALL,
     "_assert_size_stride_all(tensors, specs, start=0): index of the first tensor that "
     "assert_size_stride(tensor, *spec) rejects, or -1."},
    {"_assert_size_stride",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void*>(assertSizeStride)), METH_FASTCALL,
     "_assert_size_stride(tensor, size, stride, op_name): "
     "torch._C._dynamo.guards.assert_size_stride, with the common case in C++."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

void bindWrapperHelpers(py::module_& m) {
  if (PyModule_AddFunctions(m.ptr(), kMethods) != 0) throw py::error_already_set();
}

}  // namespace torch_ocl
