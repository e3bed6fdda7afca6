"""The fault catalogue (fixtures/faults/catalogue.yaml): what each fault code does to a chip."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .levels import LEVELS_MOST_SEVERE_FIRST, is_level
from .profiles import Metadata, fixtures_dir

FaultType = Literal["CardUnhealthy", "CardNetworkUnhealthy", "NodeUnhealthy"]
NpuSmiHealth = Literal["OK", "Warning", "Alarm", "Critical"]
CODE_PATTERN = re.compile(r"^[0-9A-F]{8}$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_level(value: str) -> str:
    if not is_level(value):
        raise ValueError(f"unknown fault level {value!r}; known: {', '.join(LEVELS_MOST_SEVERE_FIRST)}")
    return value


class Timeout(_Strict):
    after_s: float = Field(gt=0)
    level: str

    _level = field_validator("level")(_check_level)


class Frequency(_Strict):
    count: int = Field(ge=1)
    window_s: float = Field(gt=0)
    level: str

    _level = field_validator("level")(_check_level)


class Effects(_Strict):
    hbm_single_bit_ecc: int = 0
    hbm_double_bit_ecc: int = 0
    hbm_double_bit_isolated_pages: int = 0
    temperature_c: int | None = None
    link_up: bool | None = None
    present: bool | None = None


class FaultEntry(_Strict):
    kind: str = Field(pattern=r"^[a-z0-9][-a-z0-9]*$")
    code: str | None
    description: str
    level: str
    fault_type: FaultType
    npu_smi_health: NpuSmiHealth = "Warning"
    timeout: Timeout | None = None
    recover_after_s: float = Field(default=0, ge=0)
    frequency: Frequency | None = None
    counter_only: bool = False
    node_wide: bool = False
    npu_emu_code: bool = False
    effects: Effects = Effects()

    _level = field_validator("level")(_check_level)

    @field_validator("code", mode="before")
    @classmethod
    def _code_upper(cls, value: object) -> object:
        if value is None:
            return None
        text = str(value).upper().removeprefix("0X")
        if not CODE_PATTERN.match(text):
            raise ValueError(f"fault code {value!r} must be 8 hex digits")
        return text

    @model_validator(mode="after")
    def _code_or_counter(self) -> FaultEntry:
        if self.code is None and not self.counter_only:
            raise ValueError(f"{self.kind}: only counter-only faults may have no code")
        return self


class CatalogueBody(_Strict):
    faults: list[FaultEntry] = Field(min_length=1)


class CatalogueFile(_Strict):
    apiVersion: Literal["npu-emu.io/v1alpha1"]
    kind: Literal["FaultCatalogue"]
    metadata: Metadata
    spec: CatalogueBody


class Catalogue:
    """Lookup of fault entries by kind and by code."""

    def __init__(self, entries: list[FaultEntry]) -> None:
        self.entries = entries
        self.by_kind = {e.kind: e for e in entries}
        self.by_code = {e.code: e for e in entries if e.code}
        if len(self.by_kind) != len(entries) or len(self.by_code) != len([e for e in entries if e.code]):
            raise ValueError("fault catalogue has a duplicate kind or code")

    def resolve(self, *, kind: str | None = None, code: str | None = None, level: str | None = None) -> FaultEntry:
        """The entry for a kind or a code. A code missing from the catalogue is accepted only with an
        explicit level (the real stack would map it to SeparateNPU; npu-emu asks the caller to say)."""
        if (kind is None) == (code is None):
            raise ValueError("give exactly one of 'kind' and 'code'")
        if kind is not None:
            try:
                return self.by_kind[kind]
            except KeyError:
                raise LookupError(f"unknown fault kind {kind!r}; known: {', '.join(sorted(self.by_kind))}") from None
        assert code is not None
        normal = code.upper().removeprefix("0X")
        if not CODE_PATTERN.match(normal):
            raise ValueError(f"fault code {code!r} must be 8 hex digits, e.g. 80E01801")
        if normal in self.by_code:
            return self.by_code[normal]
        if level is None:
            raise LookupError(f"fault code {normal} is not in the catalogue; pass 'level' to inject a custom code")
        return FaultEntry(kind=f"custom-{normal.lower()}", code=normal, description=f"custom fault {normal}",
                          level=_check_level(level), fault_type="CardUnhealthy")


def load_catalogue(path: str | Path | None = None) -> Catalogue:
    path = Path(path) if path else fixtures_dir() / "faults" / "catalogue.yaml"
    with path.open() as f:
        parsed = CatalogueFile.model_validate(yaml.safe_load(f))
    return Catalogue(list(parsed.spec.faults))
