"""Which sentences of a requirements document state a requirement, and how (no Django here).

A requirement is found by what a statement says and how, wherever it stands in a document
whose role is requirements (``form``):

- **obligation**: a modal verb of obligation or an assurance, "должен", "необходимо",
  "требуется", "следует", "не допускается", "обеспечивает", "shall", "must";
- **function**: an item of a list whose lead-in announces what the product does ("Сервис
  оплаты должен выполнять следующие функции:", "Приложение позволяет:");
- **acceptance**: an acceptance criterion ("Работа принимается при условии ...", "считается
  выполненным, если", "Given ... when ... then");
- **limit**: a parameter with a bound ("не менее 1 Гб", "от 10 до 30 °C", "iOS 15 или более
  поздняя версия", "at most 2 s"), a row of a table of parameters too;
- **purpose**: what the product is for ("Назначением программы является оплата парковки",
  "предназначено для ...", "is intended to");
- **story**: a user story ("Как водитель, я хочу продлить стоянку, чтобы ...");
- **part**: any statement of a part the document itself titles as requirements ("4.
  ТРЕБОВАНИЯ К ПРОГРАММЕ"): the title is the modal ("Сервер принимает оплату от банка" there is a
  requirement). A requirements document without such a part states them throughout.

A sentence with none of these forms outside such a part (a name, "может использоваться как
...", a date, a description of the document itself) states no requirement.
"""

from __future__ import annotations

import re

OBLIGATION = re.compile(
    r"(?<!\w)(?:долж(?:ен|на|но|ны)|обязан\w*|необходим[оаы]?|требу(?:ется|ются)|следует|"
    r"не\s+допуска\w*|недопустим\w*|обеспечива(?:ет|ют|ть|ться|ется|ются)|обеспеч(?:ит|ат)|"
    r"предусматрива\w+|shall|must|is\s+required|are\s+required|ensures?)(?!\w)",
    re.IGNORECASE,
)
# A lead-in announcing a list of what the product does (with or without a modal verb).
FUNCTIONS_LEAD = re.compile(
    r"функци(?:и|й|ям|ями|ях|ю|я)\b|функционал|возможност|позволя|умеет|следующ\w+\s+(?:действи|операци|задач)|"
    r"\bfeatures?\b|\bcapabilit|\ballows?\b|\bcan\b",
    re.IGNORECASE,
)
ACCEPTANCE = re.compile(
    r"принима\w+\s+(?:\w+\s+){0,3}при\s+услови|счита\w+\s+(?:\w+\s+){0,2}"
    r"(?:выполненн|принят|пройденн|успешн|готов)|критери\w+\s+(?:приемк|приёмк|готовност)|"
    r"acceptance\s+criteri|definition\s+of\s+done|is\s+accepted\s+(?:only\s+)?(?:if|when)|"
    r"\bgiven\b.+\bwhen\b.+\bthen\b|\bдано\b.+\bкогда\b.+\bтогда\b",
    re.IGNORECASE,
)
_NUMBER = r"\d[\d.,]*"
LIMIT = re.compile(
    rf"(?<!\w)(?:не\s+(?:менее|более|ниже|выше|позднее|позже|ранее|раньше|больше|меньше|"
    rf"старше|превыша\w*)|no\s+(?:more|less|later|earlier)\s+than|at\s+(?:least|most)|"
    rf"up\s+to|минимум|максимум|minimum|maximum)\s+{_NUMBER}|"
    rf"(?<!\w)(?:от|from)\s+{_NUMBER}\s*\S*\s+(?:до|to)\s+{_NUMBER}|"
    rf"{_NUMBER}\s*\S*\s+(?:или|и|or)\s+(?:более\s+поздн\w+|выше|старше|later|higher|newer|above)|"
    rf"[≤≥<>]=?\s*{_NUMBER}",
    re.IGNORECASE,
)
PURPOSE = re.compile(
    r"назначени\w*\s+(?:[\w-]+\s+){0,3}(?:является|служит|состоит)|предназначен\w*\s+для|"
    r"служит\s+для|\bintended\s+(?:to|for)\b|\bpurpose\s+of\s+(?:the|this)\s+\w+\s+is\b",
    re.IGNORECASE,
)
STORY = re.compile(
    r"(?<!\w)как\s+\w+(?:\s+\w+){0,4},?\s+я\s+хочу|(?<!\w)as\s+an?\s+\w+(?:\s+\w+){0,4},?\s+"
    r"I\s+want",
    re.IGNORECASE,
)
_PATTERNS = {
    "obligation": OBLIGATION,
    "acceptance": ACCEPTANCE,
    "limit": LIMIT,
    "purpose": PURPOSE,
    "story": STORY,
}


def form(lead: str, text: str, *, in_requirements_part: bool = False) -> str:
    """How the statement (``text`` after its lead-in ``lead``) states a requirement: one of
    the forms of the module docstring, the most telling first; "" when it states none."""
    for name in ("acceptance", "story", "purpose", "obligation", "limit"):
        if _PATTERNS[name].search(text):
            return name
    if lead and (FUNCTIONS_LEAD.search(lead) or OBLIGATION.search(lead)):
        return "function"
    if lead and LIMIT.search(f"{lead} {text}"):
        return "limit"
    return "part" if in_requirements_part else ""
