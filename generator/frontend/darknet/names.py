"""Class names and YOLO head parameters of a darknet cfg."""
from __future__ import annotations

from pathlib import Path

from generator.frontend.darknet.cfg import DarknetError, Section, check_keys, parse_cfg
from generator.frontend.darknet.layers import Layer, OptionReader, yolo_layer


def read_names(path) -> list[str]:
    """Read a darknet class-names file (``coco.names``: one class name per line, in class-index order).

    Surrounding whitespace of each line is stripped and empty lines are skipped.

    Args:
        path: str or os.PathLike of the names file.
    Returns:
        list[str], at least one name.
    Raises:
        DarknetError: the file cannot be read, is not UTF-8 text, or holds no name (the message names the path).
    """
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as e:
        raise DarknetError(f"{path}: cannot read class names: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise DarknetError(f"{path}: class names file is not UTF-8 text ({e.reason} at byte {e.start})") from None
    names = [l.strip() for l in text.splitlines() if l.strip()]
    if not names:
        raise DarknetError(f"{path}: class names file is empty")
    return names


def cfg_names(cfg_path: Path, head: Section, layers: list[Layer], names) -> tuple[list[str] | None, str | None]:
    """Class names of the model: ``names`` (a path or a list) if given, else the [net] ``names=`` file resolved
    relative to the cfg's folder; checked against every [yolo]'s ``classes``. Returns (names or None, source)."""
    where = f"{cfg_path.name}:{head.key_lines.get('names', head.line)} [{head.type}]"
    source = None
    if names is None and head.options.get("names"):
        p = Path(head.options["names"])
        p = p if p.is_absolute() else cfg_path.parent / p
        if not p.is_file():
            raise DarknetError(f"{where}: names={head.options['names']}: no such file {p}")
        names, source = read_names(p), str(p)
    elif isinstance(names, (str, Path)):
        source = str(names)
        names = read_names(names)
    if names is None:
        return None, None
    names = [str(n) for n in names]
    for l in layers:
        if l.kind == "yolo" and l.params["classes"] != len(names):
            raise DarknetError(f"{source or 'names'}: {len(names)} class names, but [yolo] at {cfg_path.name}:"
                               f"{l.section.line} has classes={l.params['classes']}")
    return names, source


def yolo_params(cfg_path) -> tuple[list[dict], list[str] | None]:
    """The YOLO head parameters of a darknet cfg, without converting anything (for an ONNX model that lacks them).

    Only the cfg's keys (all sections, :func:`check_keys`) and its ``[yolo]`` sections are read; the rest of the
    network is not checked.

    Args:
        cfg_path: darknet ``.cfg`` file.
    Returns:
        (one dict per ``[yolo]`` in cfg order: ``{"anchors": [[w, h], ...], "mask": [...], "classes": int,
        "scale_x_y": float, "cfg_line": int, "layer": int}``, class names from the [net] ``names=`` file or None).
    Raises:
        DarknetError: unreadable cfg, unknown keys, no [yolo] section, inconsistent anchors/mask/num.
    """
    cfg_path = Path(cfg_path)
    sections = parse_cfg(cfg_path)
    check_keys(sections, cfg_path.name)
    opts = OptionReader(cfg_path.name)
    heads = []
    for i, s in enumerate(sections[1:]):
        if s.type == "yolo":
            p = yolo_layer(opts, i, s, None).params
            heads.append({"anchors": p["anchors"], "mask": p["mask"], "classes": p["classes"],
                          "scale_x_y": p["scale_x_y"], "cfg_line": s.line, "layer": i})
    if not heads:
        raise DarknetError(f"{cfg_path.name}: no [yolo] section")
    layers = [Layer(h["layer"], Section("yolo", h["cfg_line"]), "yolo", (0, 0, 0), h) for h in heads]
    names, _ = cfg_names(cfg_path, sections[0], layers, None) if sections else (None, None)
    return heads, names
