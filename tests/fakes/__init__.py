"""Fakes used by the tests only: :mod:`fakes.pynq_rtl` (a PYNQ device whose accelerator is the RTL under cocotb) and
its cocotb bench :mod:`fakes.driver_rtl_tb` (host/driver.py over that device)."""
