"""The input geometries of host/preprocess.py (darknet stretch, Ultralytics' centred letterbox, YOLOX's top-left
letterbox): a bright rectangle drawn into an image lands where the geometry says in the network input, the padding
is gray 114, and host.preprocess.boxes_to_image maps the rectangle found in the input back onto the drawn one."""
import numpy as np
import pytest

from host.preprocess import LETTERBOX_PAD, RESIZE_MODES, boxes_to_image, letterbox_geometry, resize


def _found(x, thr=0.8):
    """Bounding box (x1, y1, x2, y2), pixel edges, of the input pixels brighter than ``thr`` in every channel."""
    ys, xs = np.nonzero((x > thr).all(axis=2))
    return np.array([xs.min(), ys.min(), xs.max() + 1, ys.max() + 1], np.float32)


@pytest.mark.parametrize("mode", RESIZE_MODES)
@pytest.mark.parametrize("img_w,img_h", [(810, 1080), (1280, 720), (333, 200)])
def test_a_drawn_box_maps_through_the_input_and_back(mode, img_w, img_h):
    img = np.full((img_h, img_w, 3), 40, np.uint8)
    box = np.array([img_w * 0.3, img_h * 0.2, img_w * 0.7, img_h * 0.6]).round().astype(int)
    img[box[1]:box[3], box[0]:box[2]] = 250
    net = 320
    x = resize(img, net, net, mode)
    assert x.shape == (net, net, 3) and x.dtype == np.float32
    got = boxes_to_image(_found(x)[None], img_w, img_h, net, net, mode)[0]
    tol = max(img_w, img_h) / net * 1.5 + 1          # one or two input pixels of the bilinear edge
    np.testing.assert_allclose(got, box, atol=tol)


@pytest.mark.parametrize("mode", ["letterbox", "letterbox_topleft"])
def test_letterbox_pads_with_gray_and_keeps_the_aspect_ratio(mode):
    img = np.full((1080, 810, 3), 200, np.uint8)      # portrait: padded left and right
    gain, nw, nh, left, top = letterbox_geometry(810, 1080, 640, 640, mode)
    assert gain == pytest.approx(640 / 1080) and nh == 640 and nw == 480 and top == 0
    assert left == (80 if mode == "letterbox" else 0)
    x = resize(img, 640, 640, mode)
    pad = np.ones(640, bool)
    pad[left:left + nw] = False
    assert np.all(x[:, pad] == np.float32(LETTERBOX_PAD) / np.float32(255))
    assert np.allclose(x[:, ~pad], 200 / 255)


def test_unknown_mode_is_an_error():
    with pytest.raises(ValueError, match="unknown resize mode 'fill'"):
        letterbox_geometry(10, 10, 8, 8, "fill")
