"""Regenerate the committed gRPC stubs beside deviceplugin/v1beta1/api.proto.

Usage: python ci/gen_protos.py [--out DIR]

Compiles from the repository root (`-I .`), so the stubs import each other as
`from deviceplugin.v1beta1 import api_pb2`. With --out the files go under DIR/deviceplugin/v1beta1/
instead (tests diff that against the committed copies).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTOS = ("deviceplugin/v1beta1/api.proto",)


def generate(out: Path = ROOT) -> list[Path]:
    """Run grpc_tools.protoc for every proto; returns the generated files."""
    from grpc_tools import protoc  # dev dependency: grpcio-tools

    out.mkdir(parents=True, exist_ok=True)
    for proto in PROTOS:
        args = [
            "grpc_tools.protoc",
            f"-I{ROOT}",
            f"--python_out={out}",
            f"--pyi_out={out}",
            f"--grpc_python_out={out}",
            str(ROOT / proto),
        ]
        if protoc.main(args) != 0:
            raise RuntimeError(f"protoc failed for {proto}")
    generated: list[Path] = []
    for proto in PROTOS:
        stem = out / Path(proto).with_suffix("")
        generated += [stem.with_name(stem.name + s) for s in ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py")]
    return generated


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=ROOT, help="output root (default: the repository root)")
    ns = parser.parse_args(argv)
    for path in generate(ns.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
