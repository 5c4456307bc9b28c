"""The entry model: one typed description of every section an entry may hold.

The validator converts YAML into these classes and the JSON Schema published for editors
is generated from them (``schema.py``), so the two cannot disagree. Field metadata carries
what type hints cannot: descriptions, string formats, list bounds, whether a text is
shown verbatim (in a code block) rather than as Markdown (checked by ``markdown_check``),
and whether it is a web address (checked by ``web_url``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

# What ``failpedia new`` writes into every field left for the author; the validator names
# each one still there.
PLACEHOLDER = "TODO"
# The first line of every entry file, so that editors check it against the JSON Schema.
SCHEMA_MODELINE = "# yaml-language-server: $schema=../../entry.schema.json"

ID_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"
# A web address as the schema accepts it; ``web_url`` checks the rest.
WEB_URL_PATTERN = r"^https?://[^\s<>\[\]\\\"`{}|^]+$"

Kind = Literal["crash", "warning", "hang", "silent-wrong-result"]
Role = Literal["initiating", "downstream", "wrapper"]
Relation = Literal["causes", "caused-by", "confused-with", "see-also"]
Device = Literal["cpu", "cuda", "multi-gpu"]
VerifiedFrom = Literal["framework-source", "reproducer-output"]

INVERSE_RELATION: dict[str, str] = {
    "causes": "caused-by",
    "caused-by": "causes",
    "confused-with": "confused-with",
    "see-also": "see-also",
}


def spec(
    description: str,
    *,
    default: Any = dataclasses.MISSING,
    verbatim: bool = False,
    pattern: str | None = None,
    min_items: int = 0,
    minimum: int | None = None,
    maximum: int | None = None,
    max_length: int | None = None,
    web_url: bool = False,
) -> Any:
    """Declare a model field with the constraints the validator and JSON Schema share."""
    metadata = {
        "description": description,
        "verbatim": verbatim,
        "pattern": pattern,
        "min_items": min_items,
        "minimum": minimum,
        "maximum": maximum,
        "max_length": max_length,
        "web_url": web_url,
    }
    if default is dataclasses.MISSING:
        return field(metadata=metadata)
    if isinstance(default, list):
        return field(default_factory=list, metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass(kw_only=True)
class Sighting:
    """The message as a public thread shows it, other than the thread it was written from."""

    url: str = spec(
        "Address of the public thread (an issue, a forum post) where the line was pasted.",
        pattern=WEB_URL_PATTERN,
        web_url=True,
    )
    line: str = spec(
        "The line exactly as pasted there (machine paths in the neutral form); the "
        "signature's pattern must match it as a log line is read.",
        verbatim=True,
    )


# A release as packages number them: ``2.13``, ``0.50.2`` (no pre-release or local part).
RELEASE_PATTERN = r"^[0-9]+(\.[0-9]+){0,3}$"


@dataclass(kw_only=True)
class ReleaseRange:
    """The releases of one package that emit a wording, in a form a test checks against the
    release the catalog installs, so that a new pin cannot leave the claim wrong unseen."""

    package: str = spec(
        "The package that prints the wording, as pip names it (`torch`, `transformers`).",
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
    )
    first: str = spec("The first release known to emit it, e.g. `1.7`.", pattern=RELEASE_PATTERN)
    last: str | None = spec(
        "The last release that emits it (`2.13` covers every 2.13.x). Left out while the "
        "release the catalog installs still emits it: the claim reads `<first> and later`.",
        default=None,
        pattern=RELEASE_PATTERN,
    )
    changed_in: str | None = spec(
        "The earliest release known to print another wording of this entry in its place, "
        "where a source says so; after `last`, and named in `emitted_by`. The page says "
        "`changed in`.",
        default=None,
        pattern=RELEASE_PATTERN,
    )
    removed_in: str | None = spec(
        "The earliest release known to print no wording of it any more, where a source says "
        "so; after `last`, and named in `emitted_by`. The page says `removed in`; an entry "
        "whose every wording was changed or removed is marked no longer emitted.",
        default=None,
        pattern=RELEASE_PATTERN,
    )
    source_text: str | None = spec(
        "A piece of the message exactly as the package's installed files hold it (a string "
        "of its Python source or of its compiled library) that only this wording has. The "
        "test looks for it in the release the catalog installs; needed where no "
        "verification record under that release shows the wording, and wherever the "
        "claim says that release does not emit it.",
        default=None,
        verbatim=True,
    )


@dataclass(kw_only=True)
class Signature:
    """A message exactly as a framework emits it, and the pattern that finds it in logs."""

    text: str = spec(
        "The message exactly as emitted (several lines allowed), copied from the framework's "
        "source or a reproducer's captured output.",
        verbatim=True,
    )
    pattern: str = spec(
        "Regular expression, in the portable dialect, that matches one line of `text` and "
        "tolerates its variable parts (shapes, names, paths, numbers).",
        verbatim=True,
    )
    verified_from: VerifiedFrom = spec(
        "Where the wording was checked: the framework's source or a reproducer's output."
    )
    verified_at: str = spec(
        "The file and release it was checked in, e.g. "
        "`torch/_dynamo/convert_frame.py, torch 2.13.0`."
    )
    emitted_by: str = spec("The releases that emit this wording, e.g. `torch >= 2.7`.")
    releases: list[ReleaseRange] = spec(
        "The releases named in `emitted_by`, one range per package, for each package the "
        "catalog installs whose release decides the wording; a test checks each against "
        "the installed release.",
        default=[],
    )
    seen_in: list[Sighting] = spec(
        "Real occurrences of the message, each from another public thread: at least two, or "
        "a `seen_in_note` that says what was searched and why fewer were found.",
        default=[],
    )
    seen_in_note: str | None = spec(
        "Where fewer than two threads show the message: what was searched, and why fewer "
        "were found (a wording one release printed, a message few people hit).",
        default=None,
    )


@dataclass(kw_only=True)
class Alias:
    """A wording people search for that no release emits verbatim."""

    text: str = spec("The wording as people quote it.", verbatim=True)
    note: str = spec("Why it is not a signature: where it comes from.")


@dataclass(kw_only=True)
class Symptom:
    observation: str = spec("What you observe.")
    meaning: str = spec("What it tells you.")


@dataclass(kw_only=True)
class FixStep:
    text: str = spec("What to do and why.")
    code: str | None = spec("Code for this step.", default=None, verbatim=True)
    language: str = spec(
        "Language of `code` for highlighting.", default="python", pattern=r"^[a-z0-9+-]+$"
    )


@dataclass(kw_only=True)
class Question:
    question: str = spec("A question people actually ask about this failure.")
    answer: str = spec("The answer.")


@dataclass(kw_only=True)
class Related:
    id: str = spec("The id of the related entry.", pattern=ID_PATTERN)
    relation: Relation = spec(
        "How it relates: this entry `causes` it, is `caused-by` it, is `confused-with` it, "
        "or `see-also`."
    )
    note: str | None = spec("One line on how they connect.", default=None)


@dataclass(kw_only=True)
class Reference:
    title: str = spec("Title of the page.")
    url: str = spec(
        "Address of a page confirmed to exist.",
        pattern=WEB_URL_PATTERN,
        web_url=True,
    )


@dataclass(kw_only=True)
class Versions:
    affected: str = spec("Releases and setups where the failure occurs.")
    fixed_in: str | None = spec("Release that fixed or changed it upstream, if any.", default=None)
    note: str | None = spec("Anything else about versions.", default=None)


@dataclass(kw_only=True)
class Reproducer:
    script: str = spec(
        "Reproducer file in the entry folder: `python SCRIPT` fails, `python SCRIPT --fixed` "
        "does not.",
        default="repro.py",
        pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*\.py$",
    )
    device: Device = spec("Hardware it needs: `cpu`, `cuda` or `multi-gpu`.")
    timeout: int = spec("Seconds each mode may run.", default=120, minimum=1, maximum=3600)
    requirements: list[str] = spec(
        "Packages beyond torch it needs, pinned as `name==version`.",
        default=[],
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9.+!-]+$",
    )
    private_requirements: list[str] = spec(
        "Packages installed apart, pinned as `name==version`, each in its own folder "
        "`failpedia-private/NAME-VERSION` under the Python installation's prefix "
        "(`sys.prefix`), on no reproducer's path until it puts that folder on `sys.path`: "
        "for a release that would break the other reproducers if installed beside them (a "
        "Triton other than the one torch pins). `failpedia requirements --private` lists "
        "them with their folders.",
        default=[],
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9.+!-]+$",
    )
    network: bool = spec(
        "Whether it needs the network. Reproducers run without one unless this is `true`; "
        "keep them offline wherever the failure allows.",
        default=False,
    )


@dataclass(kw_only=True)
class Report:
    """A public report of the failure: where it is, its line as pasted, what it ran on."""

    url: str = spec(
        "Address of the public thread (an issue, a forum post) that shows the failure.",
        pattern=WEB_URL_PATTERN,
        web_url=True,
    )
    quote: str = spec(
        "The failure's line exactly as the report shows it; a signature pattern must match it.",
        verbatim=True,
    )
    versions: str = spec("The versions the report names: library, torch, CUDA, driver, OS.")
    hardware: str | None = spec("The hardware the report names, if any.", default=None)


@dataclass(kw_only=True)
class Evidence:
    """What documents a failure that no script can trigger on demand."""

    unreproducible: str = spec(
        "Why no script can trigger it on demand (a hardware fault, a driver's internal "
        "error, a binary built for another system)."
    )
    reports: list[Report] = spec(
        "Public reports of it, at least two, each from a different thread.", min_items=2
    )


@dataclass(kw_only=True)
class Entry:
    """One failure: what the message means, why it happens, how to confirm and fix it."""

    id: str = spec("Stable identifier; equals the entry's folder name.", pattern=ID_PATTERN)
    title: str = spec("Short name of the failure.", max_length=120)
    category: str = spec("Category id from `entries/categories.yaml`.", pattern=ID_PATTERN)
    kind: Kind = spec("`crash`, `warning`, `hang` or `silent-wrong-result`.")
    role: Role = spec(
        "`initiating` if it starts a failure, `downstream` if it follows from another one, "
        "`wrapper` if it reports whichever failure it caught (a launcher's exit status, a "
        "compiler backend's exception): listed after every other finding."
    )
    summary: str = spec("The quick answer: what it means and the usual fix.")
    signatures: list[Signature] = spec("Every wording real logs contain.", min_items=1)
    aliases: list[Alias] = spec("Wordings people search for that no release emits.", default=[])
    affects: list[str] = spec("Components and setups where it occurs.", min_items=1)
    tags: list[str] = spec("Search keywords.", default=[], pattern=r"^[a-z0-9][a-z0-9._-]*$")
    mechanism: str = spec("Where in the framework the check lives and why it fires.")
    symptoms: list[Symptom] = spec("What you observe and what it means.", default=[])
    confirm: list[str] = spec(
        "Checks a reader can run to confirm this is their problem.", min_items=1
    )
    fix: list[FixStep] = spec("Steps that fix it, the proved one first.", min_items=1)
    prevention: list[str] = spec("How to keep it from coming back.", default=[])
    decision: str | None = spec(
        "ASCII decision path, shown preformatted.", default=None, verbatim=True
    )
    faq: list[Question] = spec("Questions people ask about this error.", default=[])
    related: list[Related] = spec("Typed links to other entries.", default=[])
    references: list[Reference] = spec("Upstream docs, source and issues.", default=[])
    versions: Versions | None = spec("Where it occurs and where it was fixed.", default=None)
    reproducer: Reproducer | None = spec(
        "How the runner proves the failure and its fix. Every entry has one, or `evidence` "
        "when no script can trigger the failure on demand.",
        default=None,
    )
    evidence: Evidence | None = spec(
        "Public reports documenting a failure no script can trigger on demand; only in "
        "place of `reproducer`, and for at most 15% of the catalog.",
        default=None,
    )


@dataclass(kw_only=True)
class Category:
    """A group of entries, listed on its own page."""

    id: str = spec("Category id, used in entry paths and URLs.", pattern=ID_PATTERN)
    title: str = spec("Name shown on the site.")
    description: str = spec("One or two sentences on what belongs here.")


@dataclass(kw_only=True)
class CategoryRegistry:
    """The file `entries/categories.yaml`."""

    categories: list[Category] = spec("Every category, in display order.", min_items=1)
