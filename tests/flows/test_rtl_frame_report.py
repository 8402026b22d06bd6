"""`invoke rtl-frame`'s text report: its totals are the whole frame's, including the PRE bands a PRE program runs
after its last layer (before END), which no layer's row counts."""
from generator.flows.rtl_frame import format_report
from generator.spec.board import load_board
from generator.spec.hw import HwConfig


def _rows():
    return [{"layer": "conv_0", "kind": "conv", "model": 1000, "ideal": 500.0, "ddr_bytes": 64, "rtl": 1010,
             "util": 0.5, "pe_busy": 0.6, "stall": 400, "ratio": 1.01},
            {"layer": "conv_1", "kind": "conv", "model": 2000, "ideal": 1500.0, "ddr_bytes": 128, "rtl": 1990,
             "util": 0.75, "pe_busy": 0.8, "stall": 398, "ratio": 0.995}]


def test_report_totals_count_the_pre_bands_after_the_last_layer():
    hw = HwConfig.from_board(load_board("zcu19eg"), 8)
    text = format_report(_rows(), hw, 4000, 300.0, tail_model=1000)
    lines = text.splitlines()
    tail = next(ln for ln in lines if ln.startswith("(tail)")).split()
    assert tail[2:5] == ["1000", "1000", "1.00"]           # RTL 4000 - 3000 after the layers; the model's 1000
    total = next(ln for ln in lines if ln.startswith("total")).split()
    assert total[1:4] == ["4000", "4000", "1.00"]
    # frames/s: the model's of the whole program (4000 cycles at 300 MHz = 75,000), not of the layers alone
    assert "model: 75000.00 FPS" in lines[-1] and "= 75000.00 FPS at 300 MHz" in lines[-1]


def test_report_without_bands_has_no_tail_row():
    hw = HwConfig.from_board(load_board("zcu19eg"), 8)
    text = format_report(_rows(), hw, 3005, 300.0)
    assert "(tail)" not in text
    total = next(ln for ln in text.splitlines() if ln.startswith("total")).split()
    assert total[1:3] == ["3005", "3000"] and "model: 100000.00 FPS" in text
