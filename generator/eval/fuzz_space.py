"""The fuzzer's case space (:mod:`generator.eval.fuzz`): what a case is, how ``(seed, index)`` draws one, and the
ONNX model it builds (:class:`generator.frontend.modelgen.Builder`). Kinds: a convolution, chains, concat, channel
split, stand-alone copy layers, fully-connected layers, element-wise products (``emul``: spatial attention of one
shape, a channel-attention [1, C, 1, 1] gate, a square), and degenerate shapes the compiler must refuse. Half the
cases also carry an instruction-level draw of POST's identity above the table's window (:func:`identity_variant`)
for the hardware executors; one in three takes its input from PRE, a drawn camera frame (:func:`_pre_variant`)."""
from __future__ import annotations

import numpy as np

QUANT_MODES = [("int8-asym", True), ("int8-asym", False), ("int8-sym", True), ("int8-sym", False),
               ("int16-sym", True), ("int16-sym", False), ("int16-asym", True), ("int16-asym", False)]
#: multiply-accumulates allowed per case, by the slowest executor asked for
MAC_BUDGET = {"golden": 40_000_000, "ref": 40_000_000, "csim": 6_000_000, "rtl": 1_500_000}
KINDS = ["conv", "conv", "conv", "chain", "concat", "split", "standalone", "fc", "emul", "degenerate"]


def _logint(rng, lo, hi):
    """An integer in [lo, hi], log-uniform (small values as likely as large ones per octave)."""
    return int(min(hi, max(lo, round(float(np.exp(rng.uniform(np.log(lo), np.log(hi + 1)))) - 0.5))))


#: convolution activations drawn: leaky, relu, linear, and POST-table ones as exported (modelgen.Builder.act)
ACTS = ["leaky", "relu", "linear", "silu", "Sigmoid", "mish", "hardswish_mul", "Tanh", "gelu_erf"]


def _act(b, y, act):
    return b.leaky(y) if act == "leaky" else b.relu(y) if act == "relu" else y if act == "linear" else b.act(y, act)


def _conv_spec(rng, H, W, allow_pool=True, allow_up=True):
    k = int(rng.choice([1, 3, 5, 7], p=[0.3, 0.4, 0.15, 0.15]))
    s = int(rng.choice([1, 2], p=[0.7, 0.3]))
    p = int(rng.integers(0, k // 2 + 1))
    if k > 1 and rng.random() < 0.25:                  # asymmetric: top, left, bottom, right (SAME_UPPER & co.)
        p = [int(v) for v in rng.integers(0, k // 2 + 1, 4)]
    pt, pl, pb, pr = p if isinstance(p, list) else [p] * 4
    act = str(rng.choice(ACTS, p=[0.22, 0.15, 0.2, 0.12, 0.06, 0.06, 0.06, 0.06, 0.07]))
    spec = dict(op="conv", oc=_logint(rng, 1, 600), k=k, s=s, p=p, act=act,
                wscale=float(rng.choice([1.0, 1.0, 3.0])), zero_oc=bool(rng.random() < 0.1))
    OH, OW = (H + pt + pb - k) // s + 1, (W + pl + pr - k) // s + 1
    if allow_pool and rng.random() < 0.35 and min(OH, OW) >= 3:
        pk = int(rng.choice([2, 3]))
        ps = int(rng.choice([1, 2]))
        pe = int(rng.choice([0, pk - 1]))
        spec["pool"] = [pk, ps, pe]
        OH, OW = (OH + pe - pk) // ps + 1, (OW + pe - pk) // ps + 1
    if allow_up and rng.random() < 0.2:
        spec["up"] = int(rng.choice([2, 4]))
        OH, OW = OH * spec["up"], OW * spec["up"]
    return spec, OH, OW


def draw_case(seed: int, index: int, configs: list[str], executors: list[str]) -> dict:
    """The case ``index`` of ``seed`` (a JSON-able dict): graph kind, input shape, layers, quantization mode,
    hardware configuration, input saturation factor. Depends only on (seed, index, configs, executors)."""
    rng = np.random.default_rng([seed, index])
    budget = min(MAC_BUDGET[e] for e in executors)
    kind = str(rng.choice(KINDS))
    mode, pc = QUANT_MODES[int(rng.integers(len(QUANT_MODES)))]
    cfg = str(rng.choice(configs))
    for _ in range(200):
        H, W = _logint(rng, 1, 64), _logint(rng, 1, 64)
        ic = _logint(rng, 1, 600)
        layers = []
        if kind == "degenerate":
            k = int(rng.choice([3, 5, 7]))
            H = W = int(rng.integers(1, k - 1))
            layers.append(dict(op="conv", oc=_logint(rng, 1, 64), k=k, s=1, p=0, act="leaky", wscale=1.0,
                               zero_oc=False))
        elif kind in ("conv", "chain"):
            h, w = H, W
            for i in range(1 if kind == "conv" else int(rng.integers(2, 4))):
                spec, h, w = _conv_spec(rng, h, w, allow_up=kind == "conv")
                if h < 1 or w < 1:
                    break
                layers.append(spec)
            else:
                if h * w > 64 * 64 * 4:
                    continue
        elif kind == "concat":
            a, h, w = _conv_spec(rng, H, W, allow_pool=False, allow_up=False)
            a.update(s=1, p=a["k"] // 2)
            b = dict(op="conv", oc=_logint(rng, 1, 300), k=int(rng.choice([1, 3])), s=1, act="leaky",
                     wscale=1.0, zero_oc=False)
            b["p"] = b["k"] // 2
            layers = [a, b, dict(op="concat", pool=bool(rng.random() < 0.5) and min(H, W) >= 2)]
        elif kind == "split":
            a = dict(op="conv", oc=2 * _logint(rng, 1, 300), k=1, s=1, p=0, act="leaky", wscale=1.0, zero_oc=False)
            b, _, _ = _conv_spec(rng, H, W, allow_pool=False, allow_up=False)
            layers = [a, dict(op="split", half=int(rng.integers(0, 2))), b]
        elif kind == "standalone":
            a, h, w = _conv_spec(rng, H, W, allow_pool=False, allow_up=False)
            a.update(s=1, p=a["k"] // 2)
            c = dict(op="conv", oc=_logint(rng, 1, 200), k=3, s=1, p=1, act="leaky", wscale=1.0, zero_oc=False)
            tail = str(rng.choice(["pool", "relu", "leaky", "up"]))
            pk = int(rng.choice([2, 3, 5, 9], p=[0.35, 0.35, 0.2, 0.1]))
            ps = 1 if pk == 9 else int(rng.choice([1, 2]))
            pads = [int(v) for v in rng.integers(0, pk, 4)] if rng.random() < 0.5 else [0, 0, 0, 0]
            if pk == 9:   # split into a chain: every side's padding below the links' windows
                pads = [min(v, 4) for v in pads]
            layers = [a, c, dict(op="standalone", what=tail, pk=pk, ps=ps, up=int(rng.choice([2, 4])), pads=pads,
                                 ceil=int(ps == 2 and rng.random() < 0.5))]
            if tail == "pool" and min(H + pads[0] + pads[2], W + pads[1] + pads[3]) < pk:
                continue
            for n, p0, p1 in ((H, pads[0], pads[2]), (W, pads[1], pads[3])):   # no ceil_mode where a last window
                layers[2]["ceil"] *= -(-(n + p0 + p1 - pk) // ps) * ps < n + p0  # starts in the padding (ONNX disagrees)
        elif kind == "emul":   # a * b: b = act(conv(a)) of a's shape (SAM), a [1, C, 1, 1] gate (SE), or a itself
            gate = str(rng.choice(["sam", "se", "square"]))
            if gate == "se":   # the gate's global pool is an H x W convolution: small square maps
                H = W = _logint(rng, 1, 6)
            a, h, w = _conv_spec(rng, H, W, allow_pool=gate != "se", allow_up=False)
            if gate == "se" and h != w:
                continue
            layers = [a, dict(op="emul", gate=gate, k=int(rng.choice([1, 3])), act=str(rng.choice(
                ["Sigmoid", "linear", "leaky", "Tanh"])), swap=bool(rng.random() < 0.5))]
        elif kind == "fc":
            H = W = _logint(rng, 1, 8)     # square: a fully-connected layer becomes an H x W convolution
            ic = _logint(rng, 1, 128)
            layers = [dict(op="fc", oc=_logint(rng, 1, 600), act=str(rng.choice(["linear", "relu", "leaky"])))]
            if rng.random() < 0.5:
                layers.append(dict(op="fc", oc=_logint(rng, 1, 100), act="linear"))
        if not layers:
            continue
        case = dict(seed=seed, index=index, kind=kind, in_shape=[1, ic, H, W], layers=layers, mode=mode,
                    per_channel=pc, config=cfg, saturate=float(rng.choice([1.0, 1.0, 2.0, 4.0])),
                    model_seed=int(rng.integers(1 << 30)))
        if kind == "degenerate" or 0 <= _macs(case) <= budget:
            break
    return _variants(case, seed, index, executors)


def _variants(case: dict, seed: int, index: int, executors=("golden",)) -> dict:
    """``case`` with its instruction-level identity variant (``identity``) and its mixed precision (``mixed``)
    drawn, each from its own stream (the draws of :func:`draw_case` stay those of earlier versions): a seed, or
    None (half of the cases each)."""
    irng = np.random.default_rng([seed, index, 43])
    case["identity"] = int(irng.integers(1 << 30)) if irng.random() < 0.5 else None
    prng = np.random.default_rng([seed, index, 44])   # mixed precision: each layer's output int8 or int16
    case["mixed"] = int(prng.integers(1 << 30)) if prng.random() < 0.5 else None
    case["pre"] = _pre_variant(case, np.random.default_rng([seed, index, 45]),
                               PRE_FRAME_MAX["golden" if set(executors) <= {"golden", "ref"} else "sim"])
    return case


#: the largest camera frame side a PRE case draws (golden / ref only, and with the C-simulation or the RTL)
PRE_FRAME_MAX = {"golden": 1920, "sim": 160}


def _pre_variant(case: dict, rng: np.random.Generator, top: int) -> dict | None:
    """One case in three (not a degenerate one) takes its input from PRE (issue 45): a 3-channel input and a drawn
    camera frame (``frame_w`` x ``frame_h``, log-uniform from 1 pixel, landscape or portrait; a row ``pitch_extra``
    in bytes one time in three), the model's resize ``mode`` and input ``format``, the frame's order (``bgr``),
    the frame's ``seed``; None for the others. Sets ``in_shape``'s channels to 3. ``top``: the largest side."""
    if case["kind"] == "degenerate" or rng.random() >= 1 / 3:
        return None
    from host.preprocess import INPUT_FORMATS, RESIZE_MODES

    case["in_shape"][1] = 3
    return dict(frame_w=_logint(rng, 1, top), frame_h=_logint(rng, 1, top),
                pitch_extra=int(rng.integers(1, 40)) if rng.random() < 1 / 3 else 0,
                mode=str(rng.choice(RESIZE_MODES)), format=str(rng.choice(INPUT_FORMATS)),
                bgr=bool(rng.integers(2)), seed=int(rng.integers(1 << 30)))


def mixed_bits(g, base_bits: int, seed: int | None) -> dict | None:
    """{region: bits} of a mixed-precision case (:func:`generator.quant.precision.region_bits` of each Macro
    layer's output drawn int8 or int16 from ``seed``), or None for a uniform case (``seed`` None)."""
    if seed is None:
        return None
    from generator.quant.precision import region_bits

    rng = np.random.default_rng(seed)
    return region_bits(g, {n.name: int(rng.choice([8, 16])) for n in g.macro_nodes()}, base_bits)


def identity_variant(prog, seed: int | None):
    """``prog`` with the identity above the activation table's window (POST ``id_above``, ``id_shift``, ``zp_id``;
    :data:`generator.spec.isa.ID_SHIFT_MAX`) drawn per POST instruction from ``seed``: on a table POST id_above
    on (3 in 4), id_shift 0..ID_SHIFT_MAX, zp_id in the precision's range or (1 in 4) anywhere in the field's, and
    (3 in 4) zp_out raised by 1/16 to 1/2 of the range so that requantized values pass qmax; on other POSTs
    (1 in 4) the three fields set at random (they must be ignored). The hardware executors run this program
    against the golden simulator's run of it; the compiler's own choice is what the integer reference checks.
    Returns a new Program, or ``prog`` itself when ``seed`` is None or no POST changed."""
    import dataclasses

    from generator.spec import isa

    if seed is None:
        return prog
    rng = np.random.default_rng(seed)
    fmax = 1 << 15
    out, changed = [], False
    for ins in prog.insns:
        if ins.op != "POST":
            out.append(ins)
            continue
        qr = 1 << (15 if ins.f["prec"] == isa.PRECISIONS["int16"] else 7)   # the POST's own precision
        table = bool(ins.f["act"] & isa.ACTIVATIONS["table"])
        if not table and rng.random() >= 0.25:
            out.append(ins)
            continue
        f = dict(ins.f, id_above=int(rng.random() < (0.75 if table else 1.0)),
                 id_shift=int(rng.integers(0, isa.ID_SHIFT_MAX + 1)),
                 zp_id=int(rng.integers(-fmax, fmax) if rng.random() < 0.25 else rng.integers(-qr, qr)))
        if table and rng.random() < 0.75:
            f["zp_out"] = int(min(fmax - 1, f["zp_out"] + rng.integers(qr // 8, qr + 1)))
        out.append(isa.Insn(ins.op, f))
        changed = True
    return dataclasses.replace(prog, insns=out) if changed else prog


def _product(b, a: str, L: dict) -> str:
    """``a * g`` (or ``g * a``: ``L["swap"]``) with the gate g of ``L["gate"]``: ``a`` itself (square), act(conv
    of a's global average pool) ([1, C, 1, 1], SE) or act(k x k conv of a) (one shape, SAM)."""
    _, c, h, w = b.shapes[a]
    if L["gate"] == "square":
        g = a
    elif L["gate"] == "se":
        g = _act(b, b.conv(b.op("GlobalAveragePool", [a], [1, c, 1, 1]), c, k=1), L["act"])
    else:
        g = _act(b, b.conv(a, c, k=L["k"]), L["act"])
    return b.op("Mul", [g, a] if L["swap"] else [a, g], [1, c, h, w])


def _macs(case) -> int:
    """Multiply-accumulates of the case's convolutions and FC layers (negative when a tensor would be empty)."""
    return build_model(case, shapes_only=True)


def build_model(case: dict, shapes_only: bool = False):
    """The ONNX model of ``case`` (outputs named in the model). With ``shapes_only``: the case's MAC count."""
    from generator.frontend.modelgen import Builder

    b = Builder(case["in_shape"], seed=case["model_seed"])
    macs = 0

    def conv(x, L):
        nonlocal macs
        y = b.conv(x, L["oc"], k=L["k"], s=L["s"], p=L["p"], scale=L["wscale"] / np.sqrt(b.shapes[x][1] * L["k"] ** 2))
        _, ic, _, _ = b.shapes[x]
        _, oc, oh, ow = b.shapes[y]
        if min(oh, ow) <= 0:
            macs = -1 << 62          # an empty tensor: only the degenerate kind draws these
        macs += max(oh, 0) * max(ow, 0) * oc * ic * L["k"] ** 2
        if L.get("zero_oc") and not shapes_only:
            w = b.inits[-2] if len(b.inits) >= 2 else None
            if w is not None:
                from onnx import numpy_helper as nh
                arr = nh.to_array(w).copy()
                arr[0] = 0
                b.inits[-2] = nh.from_array(arr, w.name)
        y = _act(b, y, L["act"])
        if L.get("pool"):
            pk, ps, pe = L["pool"]
            y = b.maxpool(y, k=pk, s=ps, pad_end=pe)
        if L.get("up"):
            y = b.upsample(y, L["up"])
        return y

    outs = []
    cur = "x"
    layers = case["layers"]
    if case["kind"] in ("conv", "chain", "degenerate"):
        for L in layers:
            cur = conv(cur, L)
        outs = [cur]
    elif case["kind"] == "concat":
        a = conv("x", layers[0])
        c = conv(a, layers[1])
        cat = b.concat(c, a)
        outs = [b.maxpool(cat) if layers[2]["pool"] else cat]
    elif case["kind"] == "split":
        a = conv("x", layers[0])
        parts = b.split(a)
        outs = [conv(parts[layers[1]["half"]], layers[2])]
    elif case["kind"] == "standalone":
        a = conv("x", layers[0])
        c = conv(a, layers[1])
        cat = b.concat(a, c)
        t = layers[2]
        if t["what"] == "pool":   # padding -inf on any side (SPP, auto_pad, ceil_mode)
            y = b.maxpool(cat, k=t["pk"], s=t["ps"], pads=t.get("pads"), ceil_mode=t.get("ceil", 0))
        elif t["what"] == "relu":
            y = b.relu(cat)
        elif t["what"] == "leaky":
            y = b.leaky(cat)
        else:
            y = b.upsample(cat, t["up"])
        outs = [y, c]
    elif case["kind"] == "emul":
        outs = [_product(b, conv("x", layers[0]), layers[1])]
    elif case["kind"] == "fc":
        y = "x"
        for L in layers:
            k = int(np.prod(b.shapes[y][1:]))
            macs += k * L["oc"]
            y = b.fc(y, L["oc"]) if len(b.shapes[y]) == 4 else b.fc_next(y, L["oc"])
            y = _act(b, y, L["act"])
        outs = [y]
    if shapes_only:
        return macs
    return b.model(outs, check=case["kind"] != "degenerate")
