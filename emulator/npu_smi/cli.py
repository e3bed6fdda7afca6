"""`npu-smi` entry point: argument handling the way the real tool does it, output to stdout.

Errors print to stdout like the real tool (it writes with printf), and exit non-zero.
"""
# ruff: noqa: UP031  -- printf-style on purpose: the formats mirror the C source of npu-smi

from __future__ import annotations

import sys

from . import details, source, table, topo

# typing and collections.abc cost milliseconds at start-up: annotations only, imported for type checkers
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, TextIO

EXIT_OK = 0
EXIT_USAGE = 1
EXIT_DRIVER = 1
DRIVER_ERROR = "dcmi module initialize failed. ret is -8005"

# `npu-smi info -h` as the 24.x tool prints it (public captures; see docs/npu-smi.md).
INFO_USAGE = """Usage: npu-smi info <watch|proc|-h|-m|-l|-t type> [Options...]

Commands:
       watch          Show all device's status in scrolling format
       proc           Show device's matrix process status in scrolling format
       -h, --help     Show this help text and exit
       -m             Show all device's mapping information
       -l             Show all device's topology information
       -t type        Show information for type
                      type: board, flash, memory, usages, sensors, temp, power, volt, mac-addr,
                            common, health, product, ecc, ip, sys-time, i2c_check, work-mode,
                            ecc-enable, p2p-enable, ssh-enable, license, customized-info,
                            device-share, nve-level, aicpu-config, pcie-err, mcu-monitor,
                            err-count, boot-area, vnpu-mode, info-vnpu, vnpu-svm, cpu-num-cfg,
                            first-power-on-date, proc-mem, phyid-remap, vnpu-cfg-recover, key-manage,
                            template-info, pkcs-enable, p2p-mem-cfg, pwm-mode, pwm-duty-ratio,
                            boot-select, topo, hccs, sio-info, spod-info, tls-csr-get, tls-cert,
                            tls-cert-period, rootkey, hccs-bw.

Options:
       -i %d          Card ID
       -c %d          Chip ID
       -p %d          Chip Physical ID
"""
KNOWN_TYPES = frozenset(
    t.strip(" .\n") for t in INFO_USAGE.split("type: ", 1)[1].split("Options:", 1)[0].split(",")
)
# Not verbatim: the top-level help of the real tool was not found; npu-emu emulates only `info`.
USAGE = """Usage: npu-smi <command> [Options...]

Commands:
       info           Show device information
       -h, --help     Show this help text and exit
"""


class UsageError(Exception):
    pass


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        text = run(args)
    except UsageError as e:
        out.write(str(e))
        return EXIT_USAGE
    except (source.SourceError, source.VisibleDevicesError) as e:
        out.write(DRIVER_ERROR + "\n")
        sys.stderr.write("npu-emu: %s\n" % e)
        return EXIT_DRIVER
    out.write(text)
    return EXIT_OK


def run(args: list[str], state: tuple[dict[str, Any], list[dict[str, Any]]] | None = None) -> str:
    """Render the output of `npu-smi <args>`; raise UsageError with the text to print on bad input."""
    if not args or args[0] in ("-h", "--help"):
        if args:
            return USAGE
        raise UsageError(USAGE)
    if args[0] != "info":
        raise UsageError("Invalid command: %s\n%s" % (args[0], USAGE))
    opts = _parse_info(args[1:])
    if opts.get("help"):
        return INFO_USAGE
    node, chips = state if state is not None else source.load_state()
    cmd = opts.get("cmd")
    if cmd is None:
        if "i" in opts or "c" in opts or "p" in opts:
            raise UsageError(INFO_USAGE)
        return table.render_info(node, chips)
    if cmd == "-l":
        return details.render_list(node, chips)
    if cmd == "-m":
        return details.render_mapping(node, chips)
    kind = str(opts["t"])
    if kind == "topo":
        return topo.render_topo(node, chips)
    render = details.TYPES.get(kind)
    if render is None:
        raise UsageError("This device does not support querying %s\n" % kind)
    card, members, chip = _select(chips, opts)
    return "\n".join(render(node, card, members, chip)) + "\n"


def _parse_info(args: list[str]) -> dict[str, Any]:
    opts: dict[str, Any] = {}
    it = iter(args)
    for a in it:
        if a in ("-h", "--help"):
            opts["help"] = True
        elif a in ("-l", "-m"):
            _set_cmd(opts, a)
        elif a in ("watch", "proc"):
            raise UsageError("npu-emu does not emulate 'npu-smi info %s'\n" % a)
        elif a in ("-t", "-i", "-c", "-p"):
            value = next(it, None)
            if value is None or (value.startswith("-") and a == "-t"):
                raise UsageError("Error parameter of %s\n%s" % (a, INFO_USAGE))
            if a == "-t":
                if value not in KNOWN_TYPES:
                    raise UsageError("Error parameter of -t\n%s" % INFO_USAGE)
                _set_cmd(opts, "-t")
                opts["t"] = value
            else:
                if not value.isdigit():
                    raise UsageError("Error parameter of %s\n%s" % (a, INFO_USAGE))
                opts[a[1]] = int(value)
        else:
            raise UsageError("Error parameter of %s\n%s" % (a, INFO_USAGE))
    return opts


def _set_cmd(opts: dict[str, Any], cmd: str) -> None:
    if opts.get("cmd") not in (None, cmd):
        raise UsageError(INFO_USAGE)
    opts["cmd"] = cmd


def _select(chips: list[dict[str, Any]], opts: dict[str, Any]
            ) -> tuple[int, list[dict[str, Any]], dict[str, Any] | None]:
    grouped = dict(table.cards(chips))
    if "p" in opts:
        for card, members in grouped.items():
            for c in members:
                if c.get("phy_id") == opts["p"]:
                    return card, members, c
        raise UsageError("The chip physical id %d is invalid.\n" % opts["p"])
    if "i" not in opts:
        raise UsageError("Error parameter of -i\n%s" % INFO_USAGE)
    card = opts["i"]
    if card not in grouped:
        raise UsageError("The card id %d is invalid.\n" % card)
    members = grouped[card]
    if "c" not in opts:
        return card, members, None
    for c in members:
        if int(c.get("chip_index", 0)) == opts["c"]:
            return card, members, c
    raise UsageError("The chip id %d is invalid.\n" % opts["c"])


if __name__ == "__main__":
    sys.exit(main())
