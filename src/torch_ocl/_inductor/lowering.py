"""Lowerings the ocl backend changes for ocl tensors (other devices keep Inductor's).

Small matrix products as generated reductions. ``mm``/``addmm``/``bmm`` are calls of our eager
GEMM kernels by default (Inductor's choice for non-Triton devices): each is one launch that
nothing fuses into. Below ``config.small_mm_max_macs`` multiply-adds (static sizes, float32 or
float64) they lower instead as ``(a.unsqueeze(-1) * b.unsqueeze(-3)).sum(-2)``, as Inductor's
native-matmul path does for Triton: a reduction over k with one work item per output element,
so the bias add, an activation or a residual add fuses into it as an epilogue, and independent
products (a backward's weight and input gradients, bias sums) share combo kernels. Above the
threshold the eager GEMM (tiled, vectorized) is faster than a per-element loop over k.
"""

from __future__ import annotations

import functools

import torch


def _on_ocl(*nodes) -> bool:
    for n in nodes:
        d = n.get_device() if hasattr(n, "get_device") else None
        if d is None or d.type != "ocl":
            return False
    return True


def _static_macs(*sizes) -> int | None:
    from torch._inductor.virtualized import V

    total = 1
    for s in sizes:
        s = V.graph.sizevars.simplify(s)
        if not isinstance(s, int) and not getattr(s, "is_number", False):
            return None  # symbolic: the eager GEMM handles any size
        total *= int(s)
    return total


def _small(a, b) -> bool:
    from . import config

    if not _on_ocl(a, b):
        return False
    if a.get_dtype() not in (torch.float32, torch.float64) or b.get_dtype() != a.get_dtype():
        return False
    sa, sb = a.get_size(), b.get_size()
    batch = list(sa[:-2])
    macs = _static_macs(*batch, sa[-2], sa[-1], sb[-1])
    return macs is not None and 0 < macs <= config.small_mm_max_macs


def _realize(x):
    # A producer that is not a buffer yet (a pointwise chain) would be inlined into the
    # reduction and recomputed once per output column: make it a buffer first.
    x.realize()
    return x


def _product(a, b):
    from torch._inductor.lowering import lowerings

    aten = torch.ops.aten
    a, b = _realize(a), _realize(b)
    prod = lowerings[aten.mul.Tensor](
        lowerings[aten.unsqueeze.default](a, -1), lowerings[aten.unsqueeze.default](b, -3)
    )
    return lowerings[aten.sum.dim_IntList](prod, [-2])


def _view_targets() -> frozenset:
    import operator

    aten = torch.ops.aten
    return frozenset({
        aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.permute.default,
        aten.transpose.int, aten.t.default, aten.split.Tensor, aten.split_with_sizes.default,
        aten.slice.Tensor, aten.select.int, aten.unsqueeze.default, aten.squeeze.dim,
        aten.squeeze.default, aten.expand.default, aten.alias.default, operator.getitem,
    })


def _extern_targets() -> frozenset:
    aten = torch.ops.aten
    return frozenset({
        aten.mm.default, aten.bmm.default, aten.addmm.default, aten._addmm_activation.default,
        aten.convolution.default, aten._scaled_dot_product_fused_attention_overrideable.default,
        aten._scaled_dot_product_flash_attention_for_cpu.default,
        aten._scaled_dot_product_efficient_attention.default,
    })


def _bias_add_would_fuse() -> bool:
    """Whether the FX node being lowered (an addmm) has a reader, through views, that Inductor
    generates a kernel for (so a bias add fuses into it). Unknown nodes count as readers."""
    from torch._inductor.virtualized import V

    node = getattr(V.graph, "current_node", None)
    if node is None:
        return True
    views, externs = _view_targets(), _extern_targets()
    todo, seen = list(node.users), set()
    while todo:
        u = todo.pop()
        if u in seen:
            continue
        seen.add(u)
        if u.op == "output":
            continue
        if u.op != "call_function":
            return True
        if u.target in views:
            todo.extend(u.users)
        elif u.target not in externs:
            return True
    return False


@functools.cache
def register_small_mm() -> None:
    from torch._inductor.lowering import lowerings

    aten = torch.ops.aten
    mm_orig = lowerings[aten.mm.default]
    bmm_orig = lowerings[aten.bmm.default]
    addmm_orig = lowerings[aten.addmm.default]

    def mm(mat1, mat2, *args, **kwargs):
        if not args and not kwargs.get("out_dtype") and _small(mat1, mat2):
            return _product(mat1, mat2)
        return mm_orig(mat1, mat2, *args, **kwargs)

    def bmm(mat1, mat2, *args, **kwargs):
        if not args and not kwargs.get("out_dtype") and _small(mat1, mat2):
            return _product(mat1, mat2)
        return bmm_orig(mat1, mat2, *args, **kwargs)

    def addmm(inp, mat1, mat2, *, alpha=1, beta=1, **kwargs):
        from . import config

        small = not kwargs and _small(mat1, mat2) and _on_ocl(inp)
        unfuse = (not small and not kwargs and config.unfuse_addmm_bias
                  and _on_ocl(inp, mat1, mat2) and mat1.get_dtype().is_floating_point
                  and _bias_add_would_fuse())
        if small or unfuse:
            # Our eager addmm adds the bias in the GEMM's epilogue; mm plus a pointwise bias add
            # instead lets the add fuse into a kernel that follows (gelu, a residual add,
            # layer_norm), as Inductor does for GPUs (unfuse_bias_add_to_pointwise). Where only
            # extern kernels (attention, another GEMM) or the graph's outputs read the result,
            # the add would be a launch of its own: the eager addmm keeps it in the epilogue.
            out = _product(mat1, mat2) if small else mm_orig(mat1, mat2)
            if alpha != 1:
                out = lowerings[aten.mul.Tensor](out, alpha)
            if beta == 0:
                return out
            if beta != 1:
                inp = lowerings[aten.mul.Tensor](inp, beta)
            return lowerings[aten.add.Tensor](out, inp)
        return addmm_orig(inp, mat1, mat2, alpha=alpha, beta=beta, **kwargs)

    for op, fn in ((aten.mm.default, mm), (aten.bmm.default, bmm), (aten.addmm.default, addmm)):
        lowerings[op] = fn
    cat_orig = lowerings[aten.cat.default]

    def cat(inputs, dim=0):
        import torch._inductor.config as inductor_config

        from . import config

        n = len(inputs) if isinstance(inputs, (list, tuple)) else 0
        if n > inductor_config.max_pointwise_cat_inputs and _on_ocl(*inputs):
            numels = [_static_macs(*x.get_size()) for x in inputs]
            tiny = None not in numels and sum(numels) <= config.pointwise_cat_max_numel
        else:
            tiny = False
        if tiny:
            # A cat (stack) of many tiny tensors, as clip_grad_norm_'s stack of the per-tensor
            # norms: as a pointwise op (masked loads) it fuses into its reader (the total
            # norm's reduction) instead of one copy kernel into a buffer first.
            with inductor_config.patch(max_pointwise_cat_inputs=n):
                return cat_orig(inputs, dim)
        return cat_orig(inputs, dim)

    lowerings[aten.cat.default] = cat


# ---- addmm + relu/gelu -> aten._addmm_activation ------------------------------------------------


def has_native_addmm_activation() -> bool:
    return torch._C._dispatch_has_kernel_for_dispatch_key("aten::_addmm_activation", "PrivateUse1")


def _big_enough_for_gemm(m1, m2) -> bool:
    """Products the small-product lowering leaves to the eager GEMM (static sizes above
    config.small_mm_max_macs, or symbolic ones)."""
    from . import config

    sizes = (m1.shape[0], m1.shape[1], m2.shape[1])
    if not all(isinstance(x, int) for x in sizes):
        return True  # symbolic (int() of one would specialise it)
    return sizes[0] * sizes[1] * sizes[2] > config.small_mm_max_macs


def rewrite_addmm_activation(graph: torch.fx.Graph) -> int:
    """``relu(addmm(b, x, w))`` and exact ``gelu(addmm(b, x, w))`` on ocl tensors become one
    ``aten._addmm_activation`` (bias and activation fused into our GEMM) where the addmm has no
    other user (a training graph that saves the pre-activation for gelu's backward keeps it).
    Only when torch-ocl registers a native kernel for it; returns the number of rewrites."""
    if not has_native_addmm_activation():
        return 0
    from . import config

    aten = torch.ops.aten
    done = 0
    for node in list(graph.nodes):
        if node.op != "call_function":
            continue
        dead = []  # the decomposed gelu's inner nodes, erased after the rewrite
        if node.target in (aten.relu.default, aten.gelu.default):
            use_gelu = node.target is aten.gelu.default
            if use_gelu and node.kwargs.get("approximate", "none") != "none":
                continue
            mm = node.args[0]
            users = 1
        else:
            mm, dead = _decomposed_exact_gelu(node)
            if mm is None:
                continue
            use_gelu, users = True, 2
        view = None  # a reshape between the addmm and the activation (a 3-D linear's)
        if (isinstance(mm, torch.fx.Node) and mm.op == "call_function"
                and mm.target in (aten.view.default, aten.reshape.default,
                                  aten._unsafe_view.default)
                and len(mm.users) == users):
            view, mm = mm, mm.args[0]
        if not (isinstance(mm, torch.fx.Node) and mm.op == "call_function"
                and mm.target is aten.addmm.default):
            continue
        keep = len(mm.users) > (1 if view is not None else users)  # pre-activation read too
        if keep and not (config.addmm_activation_pair and has_addmm_with_activation()):
            continue
        val = mm.meta.get("val")
        if val is None or val.device.type != "ocl" or not val.dtype.is_floating_point:
            continue
        bias, m1, m2 = mm.args[:3]
        vals = [getattr(a, "meta", {}).get("val") for a in (m1, m2)]
        if any(v is None for v in vals) or not _big_enough_for_gemm(*vals):
            continue
        if keep:
            _keep_pre_activation(graph, node, dead, view, mm, use_gelu)
            done += 1
            continue
        with graph.inserting_before(node):
            fused = graph.call_function(
                aten._addmm_activation.default, (bias, m1, m2),
                {"beta": mm.kwargs.get("beta", 1), "alpha": mm.kwargs.get("alpha", 1),
                 "use_gelu": use_gelu},
            )
            out = fused
            if view is not None:  # a 3-D linear: the activation of the 2-D product, reshaped
                out = graph.call_function(aten.reshape.default, (fused, list(view.args[1])))
        fused.meta.update(mm.meta if view is not None else node.meta)
        if view is not None:
            fused.meta["val"] = mm.meta["val"].new_empty(mm.meta["val"].shape)
            out.meta.update(node.meta)
        _replace_activation(graph, node, out, dead, view, mm)
        done += 1
    return done


def _replace_activation(graph, node, out, dead, view, mm, pre=None) -> None:
    """The end of both rewrites: the activation's users read ``out`` (the fused result, reshaped
    back through ``view`` where there was one), and the activation, the decomposed gelu's inner
    nodes (``dead``), the view and the addmm are erased; the addmm's remaining users (a saved
    pre-activation) read ``pre``."""
    node.replace_all_uses_with(out)
    graph.erase_node(node)
    for d in dead:
        graph.erase_node(d)
    if view is not None:
        graph.erase_node(view)
    if pre is not None:
        mm.replace_all_uses_with(pre)
    graph.erase_node(mm)


def has_addmm_with_activation() -> bool:
    return hasattr(torch.ops.torch_ocl, "addmm_with_activation")


def _keep_pre_activation(graph, node, dead, view, mm, use_gelu) -> None:
    """``act(addmm)`` where the addmm is read elsewhere too (saved for the activation's
    backward): one ``torch_ocl::addmm_with_activation`` gives both, the product with its bias
    and the activation, in one command of the host BLAS."""
    import operator

    aten = torch.ops.aten
    val = mm.meta["val"]
    with graph.inserting_after(mm):
        pair = graph.call_function(
            torch.ops.torch_ocl.addmm_with_activation.default, tuple(mm.args[:3]),
            {"beta": mm.kwargs.get("beta", 1), "alpha": mm.kwargs.get("alpha", 1),
             "use_gelu": use_gelu})
    with graph.inserting_after(pair):
        pre = graph.call_function(operator.getitem, (pair, 0))
    with graph.inserting_after(pre):
        act = graph.call_function(operator.getitem, (pair, 1))
    pair.meta["val"] = (val, val.new_empty(val.shape))
    pre.meta.update(mm.meta)
    act.meta.update(mm.meta)
    act.meta["val"] = pair.meta["val"][1]
    out = act
    if view is not None:
        with graph.inserting_after(act):
            out = graph.call_function(aten.reshape.default, (act, list(view.args[1])))
        out.meta.update(node.meta)
    _replace_activation(graph, node, out, dead, view, mm, pre)


def _decomposed_exact_gelu(node: torch.fx.Node):
    """Inductor decomposes exact gelu before the post-grad passes into
    ``mul(mul(x, 0.5), add(erf(mul(x, M_SQRT1_2)), 1))``. For such a node returns ``(x, the
    inner nodes, outermost first)``, else ``(None, [])``; the inner nodes have no other user."""
    import math

    aten = torch.ops.aten

    def is_call(n, target):
        return isinstance(n, torch.fx.Node) and n.op == "call_function" and n.target is target

    def scalar_mul(n, value):  # mul(x, value) or mul(value, x) -> x
        if not is_call(n, aten.mul.Tensor) or len(n.users) != 1:
            return None
        a, b = n.args[:2]
        if isinstance(b, (int, float)) and abs(b - value) < 1e-12:
            return a
        if isinstance(a, (int, float)) and abs(a - value) < 1e-12:
            return b
        return None

    if not is_call(node, aten.mul.Tensor):
        return None, []
    for half, plus in (node.args[:2], node.args[1::-1]):
        x = scalar_mul(half, 0.5)
        if x is None or not is_call(plus, aten.add.Tensor) or len(plus.users) != 1:
            continue
        erf, one = plus.args[:2]
        if isinstance(erf, (int, float)):
            erf, one = one, erf
        if one != 1 or not is_call(erf, aten.erf.default) or len(erf.users) != 1:
            continue
        if scalar_mul(erf.args[0], math.sqrt(0.5)) is not x:
            continue
        return x, [plus, half, erf, erf.args[0]]
    return None, []


# ---- independent products -> torch_ocl::mm_group ------------------------------------------------


def _groupable_mm(node: torch.fx.Node):
    """The (dtype, device) of an ocl ``aten.mm`` that may join a group (static sizes, float32 or
    float64, more multiply-adds than the small-product lowering takes and at most
    config.group_mm_max_macs), else None."""
    if not (node.op == "call_function" and node.target is torch.ops.aten.mm.default):
        return None
    return _groupable_key(*[getattr(a, "meta", {}).get("val") for a in node.args[:2]])


def _groupable_key(*vals):
    """_groupable_mm's answer for a product of tensors with these fake values."""
    from . import config

    if any(not isinstance(v, torch.Tensor) for v in vals) or vals[0].device.type != "ocl":
        return None
    if vals[0].dtype not in (torch.float32, torch.float64) or vals[1].dtype != vals[0].dtype:
        return None
    sizes = (vals[0].shape[0], vals[0].shape[1], vals[1].shape[1])
    if not all(isinstance(x, int) for x in sizes):
        return None  # symbolic sizes (int() of one would specialise it)
    macs = sizes[0] * sizes[1] * sizes[2]
    if macs <= config.small_mm_max_macs or macs > config.group_mm_max_macs:
        return None
    return (vals[0].dtype, vals[0].device)


def _depends_on(node: torch.fx.Node, group: list, pos: dict) -> bool:
    """Whether node reads (through any chain of nodes) a member of group."""
    members, start = set(group), pos[group[0]]
    todo, seen = list(node.all_input_nodes), set()
    while todo:
        n = todo.pop()
        if n in members:
            return True
        if n in seen or pos[n] < start:
            continue
        seen.add(n)
        todo.extend(n.all_input_nodes)
    return False


_MAX_GROUP = 8  # gemmGroup's limit (csrc/aten/linalg/gemm.cpp)


def group_independent_mms(graph: torch.fx.Graph) -> int:
    """Consecutive ocl ``aten.mm`` nodes that do not read each other (a backward's input and
    weight gradients of one linear layer) become one ``torch_ocl::mm_group``: one native kernel
    of the host BLAS for all of them, where a launch each before. A run ends at a product that
    reads an earlier member, at one whose dtype or device differs, or where something between
    two members reads the earlier one (the group takes the last member's place in the graph).
    Returns the number of groups."""
    if config_off():
        return 0
    import operator

    split = _split_full_addmms(graph)
    nodes = list(graph.nodes)
    pos = {n: i for i, n in enumerate(nodes)}
    cands = [(n, k) for n in nodes if (k := _groupable_mm(n)) is not None]
    groups, i = [], 0
    while i < len(cands):
        group, key = [cands[i][0]], cands[i][1]
        j = i + 1
        while j < len(cands) and len(group) < _MAX_GROUP:
            nxt, k = cands[j]
            if k != key or _depends_on(nxt, group, pos):
                break
            if any(pos[u] < pos[nxt] for m in group for u in m.users):
                break
            group.append(nxt)
            j += 1
        if len(group) > 1:
            groups.append(group)
            i = j
        else:
            i += 1
    op = torch.ops.torch_ocl.mm_group.default
    for group in groups:
        with graph.inserting_before(group[-1]):
            fused = graph.call_function(op, ([m.args[0] for m in group],
                                             [m.args[1] for m in group]))
            fused.meta["val"] = [m.meta["val"] for m in group]
            for k, m in enumerate(group):
                item = graph.call_function(operator.getitem, (fused, k))
                item.meta.update(m.meta)
                m.replace_all_uses_with(item)
        for m in group:
            graph.erase_node(m)
    grouped = {m for group in groups for m in group}
    for mm, add, addmm, copies in split:
        if mm not in grouped:
            _refuse_addmm(graph, mm, add, addmm, copies)
    return len(groups)


def _split_full_addmms(graph: torch.fx.Graph) -> list:
    """``addmm(c, a, b)`` with a full-size ``c`` (beta = alpha = 1; Inductor's own post-grad
    pattern makes one of ``mm + add``: tied weights' gradient, the embedding's plus the output
    layer's) becomes ``mm(a, b)`` placed right after its operands, and ``add(c, mm)`` in the
    addmm's place: the product may then join a group of independent products started much
    earlier (small GPT's output-layer weight gradient with its input gradient), and the add,
    a generated kernel, joins a neighbour's combo launch. Returns (mm, add, the addmm's args,
    its meta) for each; group_independent_mms turns the ungrouped ones back into addmm."""
    aten = torch.ops.aten
    views = _view_targets()
    pos = {n: i for i, n in enumerate(graph.nodes)}
    out = []
    for node in list(graph.nodes):
        if not (node.op == "call_function" and node.target is aten.addmm.default):
            continue
        if node.kwargs.get("beta", 1) != 1 or node.kwargs.get("alpha", 1) != 1:
            continue
        c, a, b = node.args[:3]
        val, cval = node.meta.get("val"), getattr(c, "meta", {}).get("val")
        if val is None or not isinstance(cval, torch.Tensor) or cval.dtype != val.dtype:
            continue
        if _groupable_key(*[getattr(x, "meta", {}).get("val") for x in (a, b)]) is None:
            continue
        # static sizes only: comparing symbolic ones would add guards
        if not all(type(x) is int for x in (*val.shape, *cval.shape)) or cval.shape != val.shape:
            continue
        # the operands' view chains are copied next to their bases, the product after them
        chains, anchor = [], None
        for x in (a, b):
            chain = []
            while (isinstance(x, torch.fx.Node) and x.op == "call_function"
                   and x.target in views and isinstance(x.args[0], torch.fx.Node)
                   and all(not isinstance(y, torch.fx.Node) for y in x.args[1:])
                   and not x.kwargs):
                chain.append(x)
                x = x.args[0]
            chains.append(chain[::-1])
            if isinstance(x, torch.fx.Node) and (anchor is None or pos[x] > pos[anchor]):
                anchor = x
        if anchor is None or anchor.op == "placeholder":  # after the last placeholder
            anchor = [n for n in graph.nodes if n.op == "placeholder"][-1]
        operands, where, copies = [], anchor, []
        for x, chain in zip((a, b), chains):
            mapping = {}
            for v in chain:
                with graph.inserting_after(where):
                    where = graph.node_copy(v, lambda n, m=mapping: m.get(n, n))
                mapping[v] = where
                copies.append(where)
            operands.append(mapping[chain[-1]] if chain else x)
        with graph.inserting_after(where):
            mm = graph.call_function(aten.mm.default, tuple(operands))
        mm.meta.update(node.meta)
        with graph.inserting_before(node):
            add = graph.call_function(aten.add.Tensor, (c, mm))
        add.meta.update(node.meta)
        args, kwargs, meta = node.args, node.kwargs, dict(node.meta)
        node.replace_all_uses_with(add)
        graph.erase_node(node)
        out.append((mm, add, (args, kwargs, meta), copies))
        pos = {n: i for i, n in enumerate(graph.nodes)}
    return out


def _refuse_addmm(graph, mm, add, addmm, copies) -> None:
    """Undoes one split of _split_full_addmms whose product joined no group."""
    args, kwargs, meta = addmm
    with graph.inserting_before(add):
        node = graph.call_function(torch.ops.aten.addmm.default, (args[0], *mm.args), kwargs)
    node.meta.update(meta)
    add.replace_all_uses_with(node)
    graph.erase_node(add)
    graph.erase_node(mm)
    for v in copies[::-1]:
        if not v.users:
            graph.erase_node(v)


def config_off() -> bool:
    from . import config

    return config.group_mm_max_macs <= 0 or not hasattr(torch.ops.torch_ocl, "mm_group")


@functools.cache
def register_addmm_with_activation_fake() -> None:
    @torch.library.register_fake("torch_ocl::addmm_with_activation")
    def _(bias, m1, m2, *, beta=1, alpha=1, use_gelu=False):
        out = m1.new_empty((m1.shape[0], m2.shape[1]))
        return out, out.new_empty(out.shape)


@functools.cache
def register_mm_group_fake() -> None:
    @torch.library.register_fake("torch_ocl::mm_group")
    def _(a, b):
        return [x.new_empty((x.shape[0], y.shape[1])) for x, y in zip(a, b)]


def _pass_class():
    from torch._inductor.custom_graph_pass import CustomGraphPass

    class OclPostGradPass(CustomGraphPass):
        def __call__(self, graph: torch.fx.Graph) -> None:
            rewrite_addmm_activation(graph)
            group_independent_mms(graph)

        def uuid(self):
            import hashlib
            import pathlib

            h = hashlib.sha256(pathlib.Path(__file__).read_bytes())
            h.update(str(has_native_addmm_activation()).encode())
            h.update(str(has_addmm_with_activation()).encode())
            return h.hexdigest()

    return OclPostGradPass


def _append_pass(inductor_config, name: str, ours) -> None:
    """Sets Inductor's custom-pass slot `name` to ours, after a user's own pass(es) there."""
    current = getattr(inductor_config, name)
    if current is None:
        setattr(inductor_config, name, ours)
    elif isinstance(current, (list, tuple)):
        setattr(inductor_config, name, (*current, ours))
    else:
        setattr(inductor_config, name, (current, ours))


@functools.cache
def register_post_grad_pass() -> None:
    """Adds the pass to Inductor's post_grad_custom_post_pass, next to a user's own pass."""
    import torch._inductor.config as inductor_config

    register_mm_group_fake()
    register_addmm_with_activation_fake()
    _append_pass(inductor_config, "post_grad_custom_post_pass", _pass_class()())


# ---- embedding(weight, arange(n)) -> weight[:n] (pre-grad) ---------------------------------------


def _arange_end(node) -> int | None:
    """n for a ``torch.arange(n)`` / ``torch.arange(0, n)`` / ``torch.arange(0, n, 1)`` node of
    int64 values with a static n, else None."""
    if not (isinstance(node, torch.fx.Node) and node.op == "call_function"
            and node.target is torch.arange):
        return None
    args = list(node.args)
    if set(node.kwargs) - {"device", "dtype", "requires_grad", "layout", "pin_memory"}:
        return None
    if node.kwargs.get("dtype") not in (None, torch.int64) or node.kwargs.get("requires_grad"):
        return None
    if len(args) == 1:
        args = [0, args[0], 1]
    elif len(args) == 2:
        args = [*args, 1]
    if len(args) != 3 or not all(type(a) is int for a in args):
        return None
    start, end, step = args
    return end if start == 0 and step == 1 and end >= 0 else None


def rewrite_arange_embedding(graph: torch.fx.Graph) -> int:
    """``F.embedding(torch.arange(n), weight)`` (a GPT's position embedding) on ocl becomes
    ``weight[:n].clone()``: the same values, with no gather kernel in the forward (the clone is
    a pointwise op Inductor inlines into its reader) and, in the backward, a slice's gradient
    (a sum that fuses with its neighbours) instead of a zero fill and a scatter-add of the
    indices. Only without padding_idx, max_norm (which renormalises the weight in place),
    scale_grad_by_freq or sparse gradients, and with n within the weight's rows (an index out
    of range keeps embedding's error). Returns the number of rewrites."""
    from . import config

    if not config.arange_embedding_as_slice:
        return 0
    import torch.nn.functional as F

    done = 0
    for node in list(graph.nodes):
        if not (node.op == "call_function" and node.target in (F.embedding, torch.embedding)):
            continue
        if node.target is F.embedding:
            names = ("input", "weight", "padding_idx", "max_norm", "norm_type",
                     "scale_grad_by_freq", "sparse")
            defaults = (None, None, None, None, 2.0, False, False)
        else:  # torch.embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse)
            names = ("weight", "indices", "padding_idx", "scale_grad_by_freq", "sparse")
            defaults = (None, None, -1, False, False)
        if set(node.kwargs) - set(names):
            continue
        bound = dict(zip(names, defaults))
        bound.update(zip(names, node.args))
        bound.update(node.kwargs)
        idx = bound["input"] if node.target is F.embedding else bound["indices"]
        weight = bound["weight"]
        if bound["padding_idx"] not in (None, -1) or bound.get("max_norm") is not None:
            continue
        if bound["scale_grad_by_freq"] or bound["sparse"]:
            continue
        n = _arange_end(idx)
        wval = getattr(weight, "meta", {}).get("example_value")
        if n is None or not isinstance(wval, torch.Tensor) or wval.device.type != "ocl":
            continue
        if wval.dim() != 2 or not isinstance(wval.shape[0], int) or n > wval.shape[0]:
            continue
        with graph.inserting_before(node):
            rows = graph.call_function(torch.narrow, (weight, 0, 0, n))
            out = graph.call_function(torch.clone, (rows,))
        rows.meta["example_value"] = wval.narrow(0, 0, n)
        out.meta.update(node.meta)
        node.replace_all_uses_with(out)
        graph.erase_node(node)
        if not idx.users:
            graph.erase_node(idx)
        done += 1
    return done


def _pre_grad_pass_class():
    from torch._inductor.custom_graph_pass import CustomGraphPass

    class OclPreGradPass(CustomGraphPass):
        def __call__(self, graph: torch.fx.Graph) -> None:
            rewrite_arange_embedding(graph)

        def uuid(self):
            import hashlib
            import pathlib

            from . import config

            h = hashlib.sha256(pathlib.Path(__file__).read_bytes())
            h.update(str(config.arange_embedding_as_slice).encode())
            return h.hexdigest()

    return OclPreGradPass


@functools.cache
def register_pre_grad_pass() -> None:
    """Adds the pass to Inductor's pre_grad_custom_pass, next to a user's own pass."""
    import torch._inductor.config as inductor_config

    _append_pass(inductor_config, "pre_grad_custom_pass", _pre_grad_pass_class()())


# ---- avg_pool2d/3d backward with an overhanging ceil_mode window --------------------------------


def _overhanging_ceil_window(x, dims, kernel_size, stride, padding, ceil_mode) -> bool:
    """Whether ceil_mode adds a last window that runs past the padded input in one of the dims
    spatial dims (Inductor's pooling_size says ceil_mode is in effect there)."""
    from torch._inductor.lowering import pooling_size

    if not ceil_mode:
        return False

    def full(v, default):
        v = list(v) if v else list(default)
        return v * dims if len(v) == 1 else v

    k = full(kernel_size, ())
    s, p = full(stride, k), full(padding, [0])
    spatial = x.get_size()[-dims:]
    return any(pooling_size(spatial[i], i, k, s, p, True)[1] for i in range(dims))


def _is_uniform_on_cpu_driver(t) -> bool:
    """An ocl tensor of one element (a step count, a bias correction) on a CPU driver."""
    from .opencl import _device_is_cpu

    if not hasattr(t, "get_size") or not _on_ocl(t):
        return False
    return _static_macs(*t.get_size()) == 1 and _device_is_cpu(t.get_device().index or 0)


def register_uniform_pow() -> None:
    """pow whose result has one element on a CPU driver (an optimizer's ``beta ** step`` with
    the step counts on the device: capturable or fused-style state) becomes a buffer of its own.

    Inlined into the update kernel, it ran per element: PoCL vectorizes a work group's loop over
    its work items only without calls or loops of data-dependent length, and pow is both (the
    builtin, or ocl_pow_float's squaring loop). Small GPT's compiled AdamW took ~100 us of device
    time for 17408 elements that way, ~20 us with the powers loaded. The tiny pow kernels join the
    combo kernel that increments the step counts (no extra launch). GPUs keep Inductor's
    inlining (no loop to hoist out of)."""
    from torch._inductor.lowering import lowerings

    aten = torch.ops.aten

    def realize(out):
        for t in out if isinstance(out, (list, tuple)) else [out]:
            if _is_uniform_on_cpu_driver(t) and t.get_dtype().is_floating_point:
                t.realize()
        return out

    for op in (aten.pow.Scalar, aten.pow.Tensor_Tensor, aten.pow.Tensor_Scalar,
               aten._foreach_pow.ScalarAndTensor, aten._foreach_pow.List,
               aten._foreach_pow.Scalar):
        original = lowerings.get(op)
        if original is None or getattr(original, "_ocl_uniform_pow", False):
            continue

        def lowering(*args, _original=original, **kwargs):
            return realize(_original(*args, **kwargs))

        lowering._ocl_uniform_pow = True
        lowerings[op] = lowering


def register_avg_pool_backward() -> None:
    """Inductor 2.13's avg_pool2d/3d backward lowerings divide every window by the whole kernel
    size when count_include_pad is set, but the forward (eager and compiled) divides a last
    window that ceil_mode lets run past the padded input by its part inside it: the compiled
    gradient of such a layer was wrong (pytorch/pytorch#198119; on CPU too). EfficientNet's
    pooler, AvgPool2d(hidden_dim, ceil_mode=True) on a 1x1 map, gave a bias gradient 320^2 times
    too small. On ocl tensors these cases call our eager kernel instead; the others keep the
    lowering."""
    from torch._inductor.lowering import fallback_handler, lowerings

    aten = torch.ops.aten
    for op, dims in ((aten.avg_pool2d_backward.default, 2), (aten.avg_pool3d_backward.default, 3)):
        original = lowerings[op]
        if getattr(original, "_ocl_avg_pool", False):
            continue
        eager = fallback_handler(op, add_to_fallback_set=False)

        def lowering(grad_output, x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override=None, _original=original, _eager=eager, _dims=dims):
            args = (grad_output, x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                    divisor_override)
            if (count_include_pad and divisor_override is None and _on_ocl(grad_output, x)
                    and _overhanging_ceil_window(x, _dims, kernel_size, stride, padding,
                                                 ceil_mode)):
                return _eager(*args)
            return _original(*args)

        lowering._ocl_avg_pool = True
        lowerings[op] = lowering
