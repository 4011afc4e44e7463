"""Which kernels of an ocl graph share a combo kernel (one launch).

Inductor's default groups only the nodes of one topological level: nodes whose inputs are all
ready at the same time. A node with slack - one that nothing needs until much later, like a
backward's bias-gradient sum (read only by the graph's output), a zero fill, or a batch-norm
counter update - then launches on its own whenever no other kernel shares its level (the level
of a bias sum is that of the extern GEMM next to it). Here each such node may move to any
level between its last producer and its first consumer where other kernels run, and joins
their launch. Moves only ever place a node strictly after all its producers and strictly
before all its consumers (Inductor's dependencies, including the ordering of mutations), so
the grouped graph stays acyclic and every group is a set of mutually independent nodes, as
the default's are. Graphs without ocl nodes keep Inductor's default.
"""

from __future__ import annotations

from collections import defaultdict


def _on_ocl(node) -> bool:
    d = node.get_device()
    return d is not None and d.type == "ocl"


def group_nodes_for_combo_kernels(scheduler) -> list[list]:
    from torch._inductor import config
    from torch._inductor.scheduler import FusedMixOrderReductions, ForeachKernelSchedulerNode

    default = ForeachKernelSchedulerNode._default_group_nodes_for_combo_kernels
    if not any(_on_ocl(n) for n in scheduler.nodes):
        return default(scheduler)
    if any(getattr(scheduler, "node_to_stream", {}).get(n, 0) for n in scheduler.nodes):
        return default(scheduler)  # several streams: keep Inductor's stream-aware grouping
    order = [n for level in scheduler._topological_sort_nodes() for n in level]
    preds = {n: scheduler._get_unmet_dep_nodes(n) for n in order}
    succs: dict = defaultdict(list)
    level: dict = {}
    for n in order:
        for p in preds[n]:
            succs[p].append(n)
        level[n] = 1 + max((level[p] for p in preds[n]), default=-1)
    top = max(level.values(), default=0)

    mixed = {b for n in order if isinstance(n, FusedMixOrderReductions)
             for b in n.get_buffer_names()}
    combinable = [n for n in ForeachKernelSchedulerNode.combinable_nodes(order)
                  if _on_ocl(n) and not (n.used_buffer_names() & mixed)]
    members: dict = defaultdict(list)
    for n in combinable:
        members[level[n]].append(n)

    def target(n, here):
        lo = 1 + max((level[p] for p in preds[n]), default=-1)
        hi = min((level[s] for s in succs[n]), default=top + 1) - 1
        cands = [lv for lv in range(lo, hi + 1) if lv != here and members.get(lv)]
        if not cands:
            return None
        if not preds[n]:
            return max(cands)  # a zero fill: the latest place (see below)
        return min(cands, key=lambda lv: (abs(lv - here), lv))  # the nearest: shortest detour

    # Last level first: a node's consumers have their final level when it is placed. A level's
    # kernels all move to other levels' launches, or none does (each costs one launch where it
    # is): members of one level are independent, so each moves within its own bounds.
    for here in range(top, -1, -1):
        if not members.get(here):
            continue
        for n in [m for m in members[here] if not preds[m]]:
            # Reads no other node's output (a zero fill): as late as possible, so its buffer is
            # not held longer than needed (Inductor rejects combos that raise the peak memory).
            t = target(n, here)
            if t is not None and t > here:
                level[n] = t
                members[t].append(n)
                members[here].remove(n)
        moves = [(n, target(n, here)) for n in members[here]]
        if not moves or any(t is None for _, t in moves):
            continue
        for n, t in moves:
            level[n] = t
            members[t].append(n)
        members[here] = []
    movable = set(combinable)
    groups: dict = defaultdict(list)
    for n in order:
        if n in movable:
            groups[level[n]].append(n)
    size = config.combo_kernel_max_num_nodes
    out = []
    for lv in sorted(groups):
        nodes = groups[lv]
        out.extend(nodes[i : i + size] for i in range(0, len(nodes), size))
    return out


def install() -> None:
    from torch._inductor.scheduler import ForeachKernelSchedulerNode

    ForeachKernelSchedulerNode.set_group_algorithm_for_combo_kernels(group_nodes_for_combo_kernels)
