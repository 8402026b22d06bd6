"""generator/flows/pre_check.py on the official YOLOv4-tiny (int8): PRE's integer input stays within one LSB of the
float resize's, and the golden simulator's detections from it agree with those from the float input."""
from __future__ import annotations

import numpy as np

from helpers import compiled_model
from generator.eval.data import all_real_images
from generator.flows.pre_check import pre_effect, pre_inputs
from host.preprocess import load_image


def test_integer_pre_keeps_the_detections_of_bus():
    c = compiled_model()
    img = load_image(all_real_images()["bus"])
    xf, xi, x = pre_inputs(c, img)
    t = c.qgraph.tensors[c.qgraph.inputs[0]]
    assert xf.shape == xi.shape == x.shape == tuple(t.shape[1:])
    assert np.abs(xi - xf).max() <= 1
    (r,) = pre_effect(c, {"bus": img})
    assert r["dets"] == r["dets_int"] >= 4 and r["map50"] >= 0.95
    assert r["layer1_db"] > 50 and abs(r["input_db_int"] - r["input_db_float"]) < 1.0
