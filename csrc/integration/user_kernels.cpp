// OpenCL C programs from Python: torch_ocl.compile_kernel (user kernels) and the kernels that
// the torch.compile backend generates. Programs build through the device's program cache (in
// process and on disk); a launch binds arguments from what the kernel declares, read once when
// the kernel object is made, so a launch does no string work.
//
// Argument convention (the one of csrc/kernels/*.cl): every `__global` pointer parameter is
// followed by a `ulong` parameter that receives the tensor's byte offset into that buffer, and
// the kernel applies it (`p = (__global float*)((__global char*)p + p_off)`), or by a `uint`
// parameter that receives the offset in elements (`p += p_off`: 4 bytes of arguments instead of
// 8, for kernels near the device's parameter-size limit; a launch checks that it fits). A Python
// call passes only the tensor; the offset is filled in. `__local` parameters take their size in
// bytes as a Python int; other scalars take Python numbers, converted to the declared type.
#include <torch/csrc/autograd/python_variable.h>
#include <torch/extension.h>

#include "aten/cl_types.h"
#include "aten/launch.h"
#include "integration/state.h"
#include "kernels/embedded.h"
#include "runtime/cl_error.h"

#include <cstring>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace py = pybind11;

namespace torch_ocl {
namespace {

char kUserFamily;  // program-cache family of every Python-made program

// Interns (device, options, source) into the program cache's 64-bit variant: the cache compares
// keys by value, so equal sources share one program and one disk entry.
uint64_t programVariant(const std::string& key) {
  static std::mutex mutex;
  static std::unordered_map<std::string, uint64_t> ids;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = ids.try_emplace(key, ids.size());
  return it->second;
}

enum class ArgKind : uint8_t {
  kBuffer,  // a tensor; the following kOffset parameter takes its byte offset
  kOffset,
  kElemOffset,  // a uint after a buffer: the tensor's offset in elements
  kLocal,       // __local pointer: size in bytes
  kChar,
  kUChar,
  kShort,
  kUShort,
  kInt,
  kUInt,
  kLong,
  kULong,
  kFloat,
  kDouble,
};

bool isOffset(ArgKind k) {
  return k == ArgKind::kOffset || k == ArgKind::kElemOffset;
}

struct Param {
  ArgKind kind;
  std::string type;  // declared type, for errors
  std::string name;
  std::string pointee;  // element type of a __global pointer ("float", "char"...)
};

ArgKind scalarKind(const std::string& type, const std::string& kernel, const std::string& name) {
  static const std::unordered_map<std::string, ArgKind> kinds = {
      {"char", ArgKind::kChar},    {"uchar", ArgKind::kUChar},   {"bool", ArgKind::kUChar},
      {"short", ArgKind::kShort},  {"ushort", ArgKind::kUShort}, {"int", ArgKind::kInt},
      {"uint", ArgKind::kUInt},    {"long", ArgKind::kLong},     {"ulong", ArgKind::kULong},
      {"size_t", ArgKind::kULong}, {"float", ArgKind::kFloat},   {"double", ArgKind::kDouble},
  };
  auto it = kinds.find(type);
  TORCH_CHECK(it != kinds.end(), "torch_ocl.compile_kernel: parameter '", name, "' of kernel '",
              kernel, "' has type '", type,
              "', which a Python call cannot pass (supported: tensors as __global pointers, "
              "__local pointers by size, and char..ulong, float, double scalars)");
  return it->second;
}

// True when a tensor of dtype t may bind to a `__global pointee*` parameter. Byte and void
// pointers take any tensor; half and bfloat16 are ushort storage (or half, read by vload_half).
bool pointeeAccepts(const std::string& pointee, c10::ScalarType t) {
  if (pointee == "char" || pointee == "uchar" || pointee == "void") return true;
  if (t == c10::kHalf) return pointee == "ushort" || pointee == "half";
  if (t == c10::kBFloat16) return pointee == "ushort";
  if (t == c10::kBool) return pointee == "bool";
  if (c10::isComplexType(t)) return false;
  return pointee == aten::clStorageType(t);
}

std::string argInfoString(cl_kernel k, cl_uint i, cl_kernel_arg_info param) {
  size_t size = 0;
  OCL_CHECK(clGetKernelArgInfo(k, i, param, 0, nullptr, &size));
  std::string s(size, '\0');
  OCL_CHECK(clGetKernelArgInfo(k, i, param, size, s.data(), nullptr));
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

class UserKernel {
 public:
  UserKernel(c10::DeviceIndex device, cl_program program, std::string name)
      : device_(device), program_(program), name_(std::move(name)) {
    cl_kernel k = programs(device_).kernel(program_, name_.c_str());
    cl_uint n = 0;
    OCL_CHECK(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(n), &n, nullptr));
    for (cl_uint i = 0; i < n; ++i) {
      cl_kernel_arg_address_qualifier aq = 0;
      OCL_CHECK(
          clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof(aq), &aq, nullptr));
      Param p;
      p.type = argInfoString(k, i, CL_KERNEL_ARG_TYPE_NAME);
      p.name = argInfoString(k, i, CL_KERNEL_ARG_NAME);
      const bool pointer = !p.type.empty() && p.type.back() == '*';
      if (aq == CL_KERNEL_ARG_ADDRESS_GLOBAL || aq == CL_KERNEL_ARG_ADDRESS_CONSTANT) {
        p.kind = ArgKind::kBuffer;
        p.pointee = p.type.substr(0, p.type.size() - 1);
      } else if (aq == CL_KERNEL_ARG_ADDRESS_LOCAL) {
        p.kind = ArgKind::kLocal;
      } else {
        TORCH_CHECK(!pointer, "torch_ocl.compile_kernel: parameter '", p.name, "' of kernel '",
                    name_, "' is a private pointer, which cannot be passed");
        p.kind = scalarKind(p.type, name_, p.name);
      }
      if (!params_.empty() && params_.back().kind == ArgKind::kBuffer) {
        TORCH_CHECK(
            p.kind == ArgKind::kULong || p.kind == ArgKind::kLong || p.kind == ArgKind::kUInt,
            "torch_ocl: kernel '", name_, "': the __global pointer '", params_.back().name,
            "' must be followed by a ulong parameter that receives the tensor's byte "
            "offset (or a uint for its offset in elements; found '",
            p.type, " ", p.name, "'); see torch_ocl.compile_kernel's documentation");
        p.kind = p.kind == ArgKind::kUInt ? ArgKind::kElemOffset : ArgKind::kOffset;
      }
      params_.push_back(std::move(p));
    }
    TORCH_CHECK(params_.empty() || params_.back().kind != ArgKind::kBuffer, "torch_ocl: kernel '",
                name_, "': the __global pointer '", params_.back().name,
                "' must be followed by a ulong byte-offset parameter");
    for (const Param& p : params_)
      if (!isOffset(p.kind)) ++python_args_;
  }

  const std::string& name() const { return name_; }

  py::list params() const {
    py::list out;
    for (const Param& p : params_)
      if (!isOffset(p.kind))
        out.append(py::make_tuple(p.name, p.kind == ArgKind::kBuffer  ? "tensor"
                                          : p.kind == ArgKind::kLocal ? "local"
                                                                      : p.type.c_str()));
    return out;
  }

  void launch(const py::args& args, const py::object& global, const py::object& local) {
    TORCH_CHECK(static_cast<int>(args.size()) == python_args_, "torch_ocl: kernel '", name_,
                "' takes ", python_args_, " arguments (tensors count once), got ", args.size());
    size_t gsz[3] = {1, 1, 1}, lsz[3] = {1, 1, 1};
    const cl_uint dims = sizes(global, gsz, "global_size");
    const bool has_local = !local.is_none();
    if (has_local)
      TORCH_CHECK(sizes(local, lsz, "local_size") == dims, "torch_ocl: kernel '", name_,
                  "': local_size must have as many dimensions as global_size");
    cl_kernel k = programs(device_).kernel(program_, name_.c_str());
    cl_uint index = 0;
    size_t a = 0;
    for (size_t pi = 0; pi < params_.size(); ++pi) {
      const Param& p = params_[pi];
      if (isOffset(p.kind)) continue;  // set together with its buffer
      py::handle v = args[a++];
      index = static_cast<cl_uint>(pi);
      switch (p.kind) {
        case ArgKind::kBuffer: {
          TORCH_CHECK_TYPE(THPVariable_Check(v.ptr()), "torch_ocl: kernel '", name_,
                           "': argument '", p.name, "' must be a tensor, got ",
                           Py_TYPE(v.ptr())->tp_name);
          const at::Tensor& t = THPVariable_Unpack(v.ptr());
          TORCH_CHECK(t.device().type() == kOcl && t.device().index() == device_,
                      "torch_ocl: kernel '", name_, "': argument '", p.name, "' is on ", t.device(),
                      ", the program was built for ocl:", static_cast<int>(device_));
          TORCH_CHECK_TYPE(pointeeAccepts(p.pointee, t.scalar_type()), "torch_ocl: kernel '", name_,
                           "': argument '", p.name, "' is declared ", p.type, " but the tensor is ",
                           t.scalar_type());
          rt::BufferRef b;
          if (t.storage().data() != nullptr) b = aten::bufferOf(t);
          OCL_CHECK(clSetKernelArg(k, index, sizeof(cl_mem), &b.mem));
          if (params_[pi + 1].kind == ArgKind::kElemOffset) {
            const size_t es = t.element_size();
            TORCH_CHECK(b.offset % es == 0 && b.offset / es <= UINT32_MAX, "torch_ocl: kernel '",
                        name_, "': tensor argument '", p.name, "' lies ", b.offset,
                        " bytes into its buffer, which its uint element offset '",
                        params_[pi + 1].name, "' cannot express; declare it ulong (a byte offset)");
            const cl_uint off = static_cast<cl_uint>(b.offset / es);
            OCL_CHECK(clSetKernelArg(k, index + 1, sizeof(cl_uint), &off));
          } else {
            const cl_ulong off = b.offset;
            OCL_CHECK(clSetKernelArg(k, index + 1, sizeof(cl_ulong), &off));
          }
          break;
        }
        case ArgKind::kLocal: {
          const size_t bytes = py::cast<size_t>(v);
          OCL_CHECK(clSetKernelArg(k, index, bytes, nullptr));
          break;
        }
        case ArgKind::kFloat:
          setScalar<cl_float>(k, index, py::cast<double>(v));
          break;
        case ArgKind::kDouble:
          setScalar<cl_double>(k, index, py::cast<double>(v));
          break;
        case ArgKind::kChar:
          setScalar<cl_char>(k, index, integer(v, p));
          break;
        case ArgKind::kUChar:
          setScalar<cl_uchar>(k, index, integer(v, p));
          break;
        case ArgKind::kShort:
          setScalar<cl_short>(k, index, integer(v, p));
          break;
        case ArgKind::kUShort:
          setScalar<cl_ushort>(k, index, integer(v, p));
          break;
        case ArgKind::kInt:
          setScalar<cl_int>(k, index, integer(v, p));
          break;
        case ArgKind::kUInt:
          setScalar<cl_uint>(k, index, integer(v, p));
          break;
        case ArgKind::kLong:
          setScalar<cl_long>(k, index, integer(v, p));
          break;
        case ArgKind::kULong:
          setScalar<cl_ulong>(k, index, integer(v, p));
          break;
        case ArgKind::kOffset:
        case ArgKind::kElemOffset:
          break;
      }
    }
    for (cl_uint d = 0; d < dims; ++d)
      if (gsz[d] == 0) return;  // an empty range launches nothing
    OCL_TRY
    aten::launchKernel(currentQueue(device_), k, dims, gsz, has_local ? lsz : nullptr);
    OCL_CATCH
  }

 private:
  template <typename T, typename V>
  static void setScalar(cl_kernel k, cl_uint index, V v) {
    const T x = static_cast<T>(v);
    OCL_CHECK(clSetKernelArg(k, index, sizeof(T), &x));
  }

  int64_t integer(py::handle v, const Param& p) const {
    // Python bools and ints (and SymInt-free sizes) only; a float would truncate silently.
    TORCH_CHECK_TYPE(PyLong_Check(v.ptr()) || PyBool_Check(v.ptr()) || py::hasattr(v, "__index__"),
                     "torch_ocl: kernel '", name_, "': argument '", p.name, "' is ", p.type,
                     " and needs an int, got ", Py_TYPE(v.ptr())->tp_name);
    return py::cast<int64_t>(v);
  }

  cl_uint sizes(const py::object& seq, size_t* out, const char* what) const {
    if (PyLong_Check(seq.ptr())) {
      out[0] = py::cast<size_t>(seq);
      return 1;
    }
    py::sequence s = py::reinterpret_borrow<py::sequence>(seq);
    TORCH_CHECK(s.size() >= 1 && s.size() <= 3, "torch_ocl: kernel '", name_, "': ", what,
                " needs 1 to 3 dimensions, got ", s.size());
    for (size_t i = 0; i < s.size(); ++i) out[i] = py::cast<size_t>(s[i]);
    return static_cast<cl_uint>(s.size());
  }

  c10::DeviceIndex device_;
  cl_program program_;  // owned by the program cache for the device's lifetime
  std::string name_;
  std::vector<Param> params_;
  int python_args_ = 0;
};

class UserProgram {
 public:
  UserProgram(const std::string& source, const std::string& options, bool prelude, int index,
              const std::string& name)
      : device_(static_cast<c10::DeviceIndex>(index)) {
    // The prelude comes first; #line keeps build-log line numbers those of the caller's source.
    std::string full =
        prelude ? std::string(kernels::source("prelude.cl")) + "\n#line 1 \"kernel.cl\"\n" + source
                : source;
    // Kernel argument info is how a launch knows the declared types.
    const std::string opts = options + " -cl-kernel-arg-info";
    const uint64_t variant = programVariant(std::to_string(index) + '\0' + opts + '\0' + full);
    {
      // Builds take long and touch no Python objects: other threads (Inductor compiling the
      // kernels of one graph in parallel) run meanwhile.
      py::gil_scoped_release no_gil;
      OCL_TRY
      // Generated modules and user libraries launch their kernels (their binary pays on PoCL).
      program_ = programs(device_).get({&kUserFamily, variant}, [&] {
        return rt::ProgramSource{name, full, opts, /*every_kernel_used=*/true};
      });
      OCL_CATCH
    }
    size_t size = 0;
    OCL_CHECK(clGetProgramInfo(program_, CL_PROGRAM_KERNEL_NAMES, 0, nullptr, &size));
    std::string names(size, '\0');
    OCL_CHECK(clGetProgramInfo(program_, CL_PROGRAM_KERNEL_NAMES, size, names.data(), nullptr));
    std::stringstream ss(names.c_str());
    for (std::string n; std::getline(ss, n, ';');)
      if (!n.empty()) names_.push_back(n);
  }

  const std::vector<std::string>& kernelNames() const { return names_; }

  UserKernel kernel(const std::string& name) const {
    bool found = false;
    for (const std::string& n : names_) found = found || n == name;
    if (!found) {
      std::string all;
      for (const std::string& n : names_) all += (all.empty() ? "" : ", ") + n;
      throw py::attribute_error("torch_ocl: the program has no kernel '" + name +
                                "' (kernels: " + all + ")");
    }
    return UserKernel(device_, program_, name);
  }

 private:
  c10::DeviceIndex device_;
  cl_program program_ = nullptr;
  std::vector<std::string> names_;
};

// Templates of how generated code reads and writes a dtype: "@P" stands for the pointer
// expression, "@I" for the element index, "@V" for the value. They come from the eager
// generator's helpers, so the compiled path stores half and bfloat16 exactly as eager does.
py::dict dtypeCodegen() {
  py::dict out;
  const c10::ScalarType types[] = {c10::kBool,  c10::kByte,  c10::kChar, c10::kShort,
                                   c10::kInt,   c10::kLong,  c10::kHalf, c10::kBFloat16,
                                   c10::kFloat, c10::kDouble};
  for (c10::ScalarType t : types) {
    py::dict d;
    d["storage"] = aten::clStorageType(t);
    d["compute"] = aten::clComputeType(t);
    d["load"] = aten::loadExpr(t, "@P", "@I");
    d["store"] = aten::storeStmt(t, "@P", "@I", "@V");
    out[py::str(c10::toString(t))] = d;
  }
  return out;
}

}  // namespace

void bindUserKernels(py::module_& m) {
  py::class_<UserKernel>(m, "_Kernel")
      .def_property_readonly("name", &UserKernel::name)
      .def_property_readonly("params", &UserKernel::params)
      .def("__call__", [](UserKernel& k, const py::args& args, const py::kwargs& kwargs) {
        py::object global, local = py::none();
        size_t matched = 0;
        if (kwargs.contains("global_size")) {
          global = kwargs["global_size"];
          ++matched;
        }
        if (kwargs.contains("local_size")) {
          local = kwargs["local_size"];
          ++matched;
        }
        TORCH_CHECK(global, "torch_ocl: kernel '", k.name(), "' needs global_size=");
        TORCH_CHECK(matched == kwargs.size(), "torch_ocl: kernel '", k.name(),
                    "' takes only global_size= and local_size= as keyword arguments");
        k.launch(args, global, local);
      });
  py::class_<UserProgram>(m, "_Program")
      .def(py::init<const std::string&, const std::string&, bool, int, const std::string&>(),
           py::arg("source"), py::arg("options") = "", py::arg("prelude") = true,
           py::arg("device") = 0, py::arg("name") = "compile_kernel")
      .def_property_readonly("kernel_names", &UserProgram::kernelNames)
      .def("kernel", &UserProgram::kernel);
  m.def("_prelude_source", [] { return std::string(kernels::source("prelude.cl")); });
  m.def("_math_macros", [](const std::string& ct) { return aten::mathMacros(ct); });
  m.def("_dtype_codegen", &dtypeCodegen);
}

}  // namespace torch_ocl
