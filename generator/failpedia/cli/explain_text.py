"""``failpedia explain ID``: an entry as plain text for a terminal, from the entry texts
the package ships (or the checkout's entries)."""

from __future__ import annotations

import textwrap
from typing import Any

from failpedia.signatures.finding_order import ROLE_TEXT

WIDTH = 88


def _paragraphs(text: str, indent: str = "") -> list[str]:
    """Wrap prose, but keep lists, code and indented lines as they are."""
    out: list[str] = []
    for block in text.strip().split("\n\n"):
        lines = block.splitlines()
        keep = any(
            line.startswith(("-", "*", " ", "|", "`")) or line[:2].rstrip(".").isdigit()
            for line in lines
        )
        if keep:
            out.extend(indent + line for line in lines)
        else:
            out.extend(
                textwrap.wrap(
                    " ".join(lines), WIDTH, initial_indent=indent, subsequent_indent=indent
                )
            )
        out.append("")
    return out


def _heading(title: str) -> list[str]:
    return [title.upper(), ""]


def explain_text(entry: dict[str, Any], url: str) -> str:
    out = [entry["title"], "=" * min(len(entry["title"]), WIDTH), ""]
    role = ROLE_TEXT.get(entry["role"], entry["role"])
    out += [f"{entry['id']} · {entry['category']} · {entry['kind']} · {role}", url, ""]
    out += _paragraphs(entry["summary"])
    out += _heading("Signatures")
    for signature in entry["signatures"]:
        out.extend("    " + line for line in signature["text"].splitlines())
        out.append(f"  ({signature['emitted_by'].strip()})".replace("\n", " "))
        out.append("")
    out += _heading("Why it happens")
    out += _paragraphs(entry["mechanism"])
    if entry.get("symptoms"):
        out += _heading("Symptoms")
        for symptom in entry["symptoms"]:
            out += _paragraphs(f"- {symptom['observation']}: {symptom['meaning']}")
    out += _heading("Confirm")
    for number, step in enumerate(entry["confirm"], start=1):
        out += _paragraphs(f"{number}. {step}")
    out += _heading("Fix")
    for number, step in enumerate(entry["fix"], start=1):
        out += _paragraphs(step["text"], "")
        if step.get("code"):
            out.extend("    " + line for line in step["code"].rstrip().splitlines())
            out.append("")
        if number < len(entry["fix"]):
            out.append("")
    if entry.get("decision"):
        out += _heading("Choosing a fix")
        out.extend("  " + line for line in entry["decision"].rstrip().splitlines())
        out.append("")
    if entry.get("prevention"):
        out += _heading("Prevention")
        for item in entry["prevention"]:
            out += _paragraphs(f"- {item}")
    if entry.get("faq"):
        out += _heading("Questions")
        for item in entry["faq"]:
            out += _paragraphs(item["question"])
            out += _paragraphs(item["answer"], "  ")
    if entry.get("related"):
        out += _heading("Related")
        for item in entry["related"]:
            note = f": {item['note']}" if item.get("note") else ""
            out.append(f"  {item['relation']} {item['id']}{note}")
        out.append("")
    return "\n".join(out).rstrip() + "\n"
