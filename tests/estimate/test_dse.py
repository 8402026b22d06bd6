"""Design-space exploration (generator/estimate/dse.py): the search space the RTL can be rendered with, the Pareto
front against a brute-force dominance check, a whole exploration of a small model re-checked point by point, and
the HP port capping the modelled DDR bandwidth."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from generator.codegen.program import compile_program
from generator.estimate import dse, rtl_model
from generator.frontend.modelgen import Builder
from generator.frontend.onnx_loader import load_onnx
from generator.ir import passes
from generator.quant.quantize import QuantConfig, calibrate, quantize
from generator.spec.board import load_board
from generator.spec.hw import HwConfig
from generator.spec.timing_engine import program_cycles


def test_candidates_are_what_the_rtl_can_render():
    """Every candidate renders as RTL (the package's checks), non-powers of two among the Tm; every combination
    the search leaves out does not render."""
    from generator.backends.rtl.render import RtlError, package_context

    b = load_board("ultra96v2")
    cands = dse.candidates(b)
    assert cands[0] == (b, "board")
    arrays = {(c.accelerator.tn, c.accelerator.tm, c.accelerator.axi_data_width_bits) for c, _ in cands[1:]}
    assert len(cands) == 1 + len(arrays) * len(dse.BUFFER_PRESETS) * len(dse.PUMPS)
    assert {c.accelerator.pump for c, _ in cands[1:]} == {1, 2}
    assert {tm for _, tm, _ in arrays} >= {24, 48} and (8, 24, 128) not in arrays
    assert (32, 48, 256) in arrays and (16, 24, 256) not in arrays   # 256-bit beats: a non-power-of-two Tm >= 32
    for c, _ in cands[1:]:
        a = c.accelerator
        assert a.axi_data_width_bits == b.hp_port_width_bits * a.hp_ports or (
            a.hp_ports == 1 and a.axi_data_width_bits < b.hp_port_width_bits)
        assert a.wbuf_bank_bytes % (a.tn * a.tm) == 0
    for tn, tm, (axi, ports) in itertools.product(dse.ARRAY_SIDES, dse.TM_SIDES, [(64, 1), (128, 1), (256, 2)]):
        brd = dse.configured(b, tn=tn, tm=tm, axi_data_width_bits=axi, hp_ports=ports)
        try:
            package_context(brd)
            ok = True
        except RtlError:
            ok = False
        assert ok == ((tn, tm, axi) in arrays), (tn, tm, axi)


def test_a_wider_m_axi_than_the_hp_port_moves_no_more_bytes():
    """One HP port narrows a 256-bit m_axi to its 128 bits; two ports (the RTL's burst splitter) move 32 bytes per
    cycle; two ports need an m_axi of twice the port width (a board error naming the field otherwise)."""
    b = dse.configured(load_board("zcu19eg", chosen=False), axi_data_width_bits=128, hp_ports=1)
    wide = dse.configured(b, axi_data_width_bits=256)
    assert wide.ddr_bytes_per_cycle == b.ddr_bytes_per_cycle == 16.0
    assert HwConfig.from_board(wide, 8).bytes_per_cycle == 16.0
    two = dse.configured(b, axi_data_width_bits=256, hp_ports=2)
    assert two.ddr_bytes_per_cycle == 32.0 and HwConfig.from_board(two, 8).hp_ports == 2
    assert two.accelerator.config_id() != wide.accelerator.config_id()
    with pytest.raises(ValueError, match="hp_ports"):
        dse.configured(b, axi_data_width_bits=128, hp_ports=2)


def _pt(fps, dsp, bram, uram, lut):
    p = dse.Point(None, dict(dsp48e2=dsp, bram36=bram, uram=uram, lut=lut, ff=0), "x")
    p.fps8 = fps
    return p


def test_four_hp_ports_where_the_ps_ddr_outruns_two():
    """Four HP ports (a 512-bit m_axi) move 64 bytes per cycle, up to the PS DDR's bandwidth: zcu19eg's 19.2 GB/s is
    64 bytes per 300 MHz cycle; the search tries them only where the PS DDR moves more than two ports (not on
    ultra96v2: 4.2 GB/s at 200 MHz is 21 bytes per cycle), only for arrays of at least FOUR_PORT_MIN_LANES PE steps
    per cycle, each a point the RTL renders and the HLS kernel refuses, so it is never chosen over one that fits both.
    Four ports of a narrower m_axi are a board error naming the field."""
    from generator.backends.rtl.render import package_context

    z = load_board("zcu19eg", chosen=False)
    four = dse.configured(z, tn=16, tm=32, axi_data_width_bits=512, hp_ports=4)
    assert four.ddr_bytes_per_cycle == 64.0 == 19.2e9 / 300e6
    u = load_board("ultra96v2")
    assert dse.configured(u, tn=16, tm=32, axi_data_width_bits=512, hp_ports=4).ddr_bytes_per_cycle == 21.0
    assert (512, 4) in dse.port_options(z) and (512, 4) not in dse.port_options(u)
    fours = [c.accelerator for c, _ in dse.candidates(z) if c.accelerator.hp_ports == 4]
    assert fours and all(a.tn * a.tm * a.pump >= dse.FOUR_PORT_MIN_LANES and a.axi_data_width_bits == 512
                         for a in fours)
    package_context(four)
    p = dse.hls_point(dse.Point(four, rtl_model.estimate(four).used(), "S"))
    assert p.hls_over == ("4 HP ports: RTL only",)
    with pytest.raises(ValueError, match="hp_ports"):
        dse.configured(z, axi_data_width_bits=256, hp_ports=4)


def test_hp_ports_flow_says_why_a_board_has_no_four_port_candidate():
    """``invoke explore --hp-ports`` on ultra96v2 (LPDDR4 at 4.2 GB/s: 21 bytes per 200 MHz cycle) names the PS DDR
    and returns no pairs, before compiling anything."""
    from generator.flows.explore import ports_flow

    said = []
    assert ports_flow("ultra96v2", log=said.append) == []
    assert len(said) == 1 and "4.2 GB/s" in said[0] and "two 128-bit ports" in said[0]


def test_pareto_front_against_brute_force():
    """Random points: a point is on the front exactly when no other point is at least as good in frames/s and in
    every resource (numpy comparison of all pairs) and better in one."""
    rng = np.random.default_rng(5)
    pts = [_pt(*rng.integers(1, 6, 5)) for _ in range(60)]
    front = set(map(id, dse.pareto_front(pts)))
    m = np.array([[p.fps8, -p.resources["dsp48e2"], -p.resources["bram36"], -p.resources["uram"],
                   -p.resources["lut"]] for p in pts])
    for i, j in itertools.product(range(len(pts)), repeat=2):
        if i != j and (m[j] >= m[i]).all() and (m[j] > m[i]).any():
            assert id(pts[i]) not in front
    for i, p in enumerate(pts):
        if id(p) not in front:
            assert any((m[j] >= m[i]).all() and (m[j] > m[i]).any() for j in range(len(pts)) if j != i)


def test_the_choice_is_the_fastest_point_whose_hls_kernel_fits_too():
    """A board file's block serves the HLS kernel and the RTL: a faster point the HLS estimate puts over the part
    loses to the fastest one that fits both; with no point fitting both, the fastest point is chosen."""
    fast, slow, slower = _pt(30, 100, 100, 0, 10), _pt(28, 100, 100, 0, 10), _pt(20, 50, 50, 0, 5)
    fast.hls_over = ("bram36",)
    assert dse.choose([fast, slow, slower]) is slow and slow.chosen and not fast.chosen
    slow.hls_over = slower.hls_over = ("lut",)
    assert dse.choose([slower, fast, slow]) is fast


def test_hls_point_is_the_hls_estimate_against_the_limits():
    """ultra96v2 (xczu3eg, 216 BRAM36, 128-bit m_axi): the 16x16 with S buffers is over in the HLS kernel's block
    RAM while its XXS buffers fit; the figures are hls_resources.estimate's. A Tm of 24 on a 64-byte m_axi cannot
    be rendered (the kernel's OBUF would put 3 words in a row): its point says so."""
    from generator.estimate import hls_resources

    b = load_board("ultra96v2", chosen=False)
    cap = b.resources.model_dump()
    for (preset, ib, wb, acc, ob), tm in itertools.product(dse.BUFFER_PRESETS, (8, 16)):
        c = dse.configured(b, tn=16, tm=tm, axi_data_width_bits=128, ibuf_bank_bytes=ib, wbuf_bank_bytes=wb * 16 * tm,
                           acc_bank_words=acc, obuf_bytes=ob, pump=1)
        p = dse.hls_point(dse.Point(c, {}, preset))
        e = hls_resources.estimate(c).used()
        assert p.hls == e
        over = [f"{k} {e[k]:g}" for k in dse.RESOURCE_KEYS if e[k] > dse.UTILIZATION_LIMIT[k] * cap[k]]
        assert p.hls_over == tuple(over)
        if preset in ("S", "XXS") and tm == 16:
            assert bool(over) == (preset == "S")
    c = dse.configured(b, tn=16, tm=24, axi_data_width_bits=512, pump=1)
    assert dse.hls_point(dse.Point(c, {}, "S")).hls_over == ("OBUF K=3",)


@pytest.fixture(scope="module")
def small_graphs():
    bld = Builder([1, 3, 32, 32], seed=2)
    y = bld.leaky(bld.conv("x", 16, k=3, s=2))
    y = bld.maxpool(bld.leaky(bld.conv(y, 32, k=3)))
    y = bld.conv(y, 24, k=1)
    g = passes.run_all(load_onnx(bld.model([y])))
    xs = [np.random.default_rng(i).random((1, 3, 32, 32)).astype(np.float32) for i in range(2)]
    ranges = calibrate(g, xs, progress=False)
    return {bits: quantize(g, ranges, QuantConfig.from_mode(m, True), 32 if bits == 8 else 48)
            for bits, m in ((8, "int8-asym"), (16, "int16-sym"))}


def test_explore_small_model_on_ultra96(small_graphs):
    """Every kept point fits the part by the model; the front and the choice re-checked by compiling each
    configuration again; the choice is the fastest point whose HLS kernel fits (on the xczu3eg every point the RTL
    fits has Tm = 8, the HLS kernel's STORE at II=2: then the fastest of all)."""
    b = load_board("ultra96v2")
    pts = dse.explore(b, small_graphs)
    assert pts and all(dse.fits(p.resources, b.resources.model_dump()) for p in pts)
    chosen = [p for p in pts if p.chosen]
    pool = [p for p in pts if p.fps8 > 0 and not p.hls_over] or [p for p in pts if p.fps8 > 0]
    assert len(chosen) == 1 and any(chosen[0] is p for p in pool) and chosen[0].fps16
    assert chosen[0].fps8 >= 0.999 * max(p.fps8 for p in pool)
    for p in [q for q in pts if q.pareto][:4]:
        assert p.resources == rtl_model.estimate(p.board).used()
        for bits, fps in ((8, p.fps8), (16, p.fps16)):
            hw = HwConfig.from_board(p.board, bits)
            cyc = program_cycles(hw, compile_program(small_graphs[bits], hw).insns)
            assert fps == pytest.approx(b.pl_clock_mhz * 1e6 / cyc)


def test_a_shared_cache_gives_each_board_what_its_own_exploration_gives(small_graphs):
    """`explore --board all` compiles a configuration found on several boards once (dse.timing_key): kv260
    explored after ultra96v2 with their shared cache gets every figure its exploration alone computes, at its
    own clock (250 MHz, ultra96v2's 200), and the configurations common to both boards are not compiled again."""
    u, k = load_board("ultra96v2", chosen=False), load_board("kv260", chosen=False)
    cache = {}
    dse.explore(u, small_graphs, cache=cache, workers=1)
    known = len(cache)
    calls = []
    shared = dse.explore(k, small_graphs, cache=cache, workers=1,
                         progress=lambda xs, total=None: [calls.append(x) or x for x in xs])
    alone = dse.explore(k, small_graphs, workers=1)
    fields = ("label", "fps8", "cycles8", "traffic8", "compulsory8", "fps16", "cycles16", "error", "pareto", "chosen")
    assert [[getattr(p, f) for f in fields] for p in shared] == [[getattr(p, f) for f in fields] for p in alone]
    before = set(list(cache)[:known])          # what ultra96v2's exploration put in the cache
    gid = dse.graph_fingerprint(small_graphs[8])
    common = [p for p in alone if dse.timing_key(p.board, 8, gid) in before]
    assert common and len(calls) == len(alone) - len(common)


def test_accelerator_source_explore_is_what_compile_uses(tmp_path, monkeypatch):
    """A board file with ``accelerator_source: explore``: refused with the command to run until a choice is
    recorded; ``invoke explore``'s flow records it; then loading the board (what compile, build, sim and package
    do) gives the chosen accelerator, and a compiled program is scheduled for it."""
    import yaml

    from generator.flows.explore import explore_flow
    from generator.flows.pipeline import compile_model
    from generator.spec import board as board_mod
    from generator.spec.board import BoardError

    monkeypatch.setattr(board_mod, "EXPLORE_DIR", tmp_path / "explore")
    raw = yaml.safe_load((board_mod.BOARDS_DIR / "ultra96v2.yaml").read_text())
    path = tmp_path / "u96.yaml"
    path.write_text(yaml.safe_dump({**raw, "accelerator_source": "explore"}))
    with pytest.raises(BoardError, match="run `invoke explore --board ultra96v2` first"):
        load_board(path)
    assert load_board(path, chosen=False).accelerator == load_board("ultra96v2").accelerator
    bld = Builder([1, 3, 32, 32], seed=2)
    onnx_path = tmp_path / "small.onnx"
    onnx_path.write_bytes(bld.model([bld.conv(bld.leaky(bld.conv("x", 16, k=3, s=2)), 24, k=1)]).SerializeToString())
    _, chosen = explore_flow(str(path), model=str(onnx_path), log=lambda *a: None)
    assert (tmp_path / "explore" / "ultra96v2" / "chosen.yaml").is_file()
    b = load_board(path)
    assert b.accelerator == chosen.board.accelerator
    c = compile_model(path, "int8-asym", model=str(onnx_path), progress=False)
    assert (c.hw.tn, c.hw.tm, c.hw.axi_bytes * 8) == (chosen.board.accelerator.tn, chosen.board.accelerator.tm,
                                                       chosen.board.accelerator.axi_data_width_bits)
    # another recorded choice (a candidate other than the file's) is what the board then has
    other = next(cb.accelerator for cb, _ in dse.candidates(load_board("ultra96v2"))
                 if (cb.accelerator.tn, cb.accelerator.tm) != (raw["accelerator"]["tn"], raw["accelerator"]["tm"]))
    (tmp_path / "explore" / "ultra96v2" / "chosen.yaml").write_text(yaml.safe_dump({"accelerator": other.model_dump()}))
    h = compile_model(path, "int8-asym", model=str(onnx_path), progress=False).hw
    assert (h.tn, h.tm) == (other.tn, other.tm)
    (tmp_path / "explore" / "ultra96v2" / "chosen.yaml").write_text("accelerator: {tn: 3}\n")
    with pytest.raises(BoardError, match="chosen.yaml: invalid board file: key 'accelerator.tm'"):
        load_board(path)
