"""Tesseract OCR of one page image, through pytesseract: one ``tesseract`` process per page.

Why a process per page (see also README, "Scanned documents"): the engine is Debian's
``tesseract-ocr`` with its language packs, nothing to compile; a page that hangs is killed at
its timeout and a crash or a memory blow-up on a hostile image ends that process, not the
Celery worker; ``nice`` keeps it below the web process; and two single-threaded processes
side by side read two pages in the time Tesseract's own OpenMP threads read one on these
two cores (measured: 4.8 s against 21.5 s for two pages, the threads spinning against each
other), so ``OMP_THREAD_LIMIT=1`` is set for it.

The output is hOCR (Tesseract's HTML): every line with its box and Tesseract's estimate of
the type size (``x_size``), every word with its box and confidence, every paragraph with the
language Tesseract read it in. Boxes are in the image's pixels; ``knowledge.parsing.ocr_layout``
turns them into page lines and tables.

Russian and English read together confuse letters the two alphabets share in shape: "ACT" comes
out in Cyrillic capitals, "Тecт" mixes both. A word mixing the alphabets is written in its
majority alphabet, and in a paragraph Tesseract read as English a word of Cyrillic look-alikes
only is written in Latin letters (``one_script``), so that a search for the word finds it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from lxml import etree

from knowledge.parsing.base import ParseError

Box = tuple[float, float, float, float]  # x0, y0, x1, y1
Progress = Callable[[int, int], None]  # pages recognised, pages to recognise

_LINE_CLASSES = {"ocr_line", "ocr_header", "ocr_caption", "ocr_textfloat"}
_BBOX = re.compile(r"bbox (\d+) (\d+) (\d+) (\d+)")
_WCONF = re.compile(r"x_wconf (\d+)")
_XSIZE = re.compile(r"x_size ([\d.]+)")
_LANGUAGE = re.compile(r"^[a-z_]+$", re.I)
# Letters of the same shape in the two alphabets (capitals and small letters).
_CYRILLIC_LOOKALIKES = "АВЕКМНОРСТХаеорсухі"
_LATIN_LOOKALIKES = "ABEKMHOPCTXaeopcyxi"
_TO_LATIN = str.maketrans(_CYRILLIC_LOOKALIKES, _LATIN_LOOKALIKES)
_TO_CYRILLIC = str.maketrans(_LATIN_LOOKALIKES, _CYRILLIC_LOOKALIKES)
_CYRILLIC = re.compile(r"[А-Яа-яЁёі]")
_LATIN = re.compile(r"[A-Za-z]")


class OcrUnavailable(ParseError):
    """Tesseract (or a language it needs) is not installed where the ingest runs."""


@dataclass(frozen=True)
class OcrOptions:
    """How scanned pages are recognised; ``from_settings`` reads the KB_OCR_* settings."""

    languages: str = "rus+eng"
    command: str = "tesseract"
    dpi: int = 300
    jobs: int = 2
    max_pages: int = 500
    time_limit: float = 3600.0
    page_timeout: int = 120
    min_confidence: int = 70
    nice: int = 10

    @classmethod
    def from_settings(cls) -> OcrOptions | None:
        """The configured options, or None when OCR is switched off (``KB_OCR=0``)."""
        from django.conf import settings

        if not settings.OCR_ENABLED:
            return None
        return cls(
            languages=settings.OCR_LANGUAGES,
            command=settings.OCR_TESSERACT,
            dpi=settings.OCR_DPI,
            jobs=settings.OCR_JOBS or os.cpu_count() or 1,
            max_pages=settings.OCR_MAX_PAGES,
            time_limit=float(settings.OCR_TIME_LIMIT_SECONDS),
            page_timeout=settings.OCR_PAGE_TIMEOUT_SECONDS,
            min_confidence=settings.OCR_MIN_CONFIDENCE,
            nice=settings.OCR_NICE,
        )


@dataclass
class OcrWord:
    box: Box
    text: str
    confidence: float  # 0-100, Tesseract's


@dataclass
class OcrLine:
    box: Box
    size: float  # Tesseract's estimate of the type size, in pixels
    block: int  # the text area (column, table cell group) it belongs to, numbered on the page
    paragraph: int  # its paragraph, numbered on the page
    words: list[OcrWord] = field(default_factory=list)
    stroke: float = 0.0  # mean width of its strokes in pixels (scan.measure_strokes): bold type

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)


@dataclass
class OcrPage:
    lines: list[OcrLine]
    dpi: float  # pixels per inch of the image recognised

    @property
    def confidence(self) -> float | None:
        """Mean word confidence, each word weighted by its length; None without any word."""
        weights = [(len(w.text), w.confidence) for ln in self.lines for w in ln.words]
        total = sum(n for n, _ in weights)
        return round(sum(n * c for n, c in weights) / total, 1) if total else None


def packages_for(languages: str) -> list[str]:
    """The Debian packages of Tesseract and of each language: rus -> tesseract-ocr-rus."""
    return ["tesseract-ocr"] + [
        "tesseract-ocr-" + code.lower().replace("_", "-") for code in split_languages(languages)
    ]


def split_languages(languages: str) -> list[str]:
    return [code for code in languages.split("+") if code]


def install_hint(languages: str) -> str:
    return "apt-get install " + " ".join(packages_for(languages))


def check_engine(options: OcrOptions) -> str:
    """ "Tesseract 5.3.0 (rus+eng)" when the engine and every language are installed; else
    OcrUnavailable saying in plain words what to install."""
    import pytesseract

    bad = [code for code in split_languages(options.languages) if not _LANGUAGE.match(code)]
    if bad or not split_languages(options.languages):
        raise OcrUnavailable(
            f"KB_OCR_LANGUAGES={options.languages!r} is not a list of Tesseract languages "
            "(codes joined by '+', such as rus+eng)"
        )
    pytesseract.pytesseract.tesseract_cmd = options.command
    try:
        version = pytesseract.get_tesseract_version()
        installed = set(pytesseract.get_languages())
    except (pytesseract.TesseractNotFoundError, OSError, SystemExit):
        raise OcrUnavailable(
            f"Tesseract OCR is not installed on the server that indexes documents "
            f"('{options.command}' was not found): install the Debian packages "
            f"{', '.join(packages_for(options.languages))} ({install_hint(options.languages)})"
        ) from None
    missing = [code for code in split_languages(options.languages) if code not in installed]
    if missing:
        packages = ["tesseract-ocr-" + code.lower().replace("_", "-") for code in missing]
        raise OcrUnavailable(
            f"Tesseract has no data for the language(s) {', '.join(missing)} of "
            f"KB_OCR_LANGUAGES: install the Debian package(s) {', '.join(packages)} "
            f"(apt-get install {' '.join(packages)})"
        )
    return f"Tesseract {version}"


def engine_detail() -> str:
    """For the staff view of ``/healthz`` (``HEALTH_OPTIONAL_CHECKS``): the engine and languages
    configured, or an exception saying why scans cannot be recognised here."""
    options = OcrOptions.from_settings()
    if options is None:
        raise RuntimeError("OCR is switched off (KB_OCR=0): scans and images are refused")
    return f"{check_engine(options)}, languages {options.languages}"


def recognise(image_path: str, dpi: float, options: OcrOptions) -> OcrPage:
    """The lines and words Tesseract reads on the image at ``image_path`` (``dpi`` tells it the
    scale). Raises OcrError when Tesseract fails or runs past the page timeout."""
    import pytesseract

    pytesseract.pytesseract.tesseract_cmd = options.command
    # One thread per process: see the module docstring. The environment is read by the child.
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    try:
        hocr = pytesseract.image_to_pdf_or_hocr(
            image_path,
            lang=options.languages,
            config=f"--psm 3 --dpi {min(1200, max(70, round(dpi)))}",
            nice=options.nice,
            extension="hocr",
            timeout=options.page_timeout,
        )
    except RuntimeError as exc:  # pytesseract's way of saying the timeout killed it
        raise OcrError(
            f"Tesseract did not finish the page within {options.page_timeout} s "
            "(KB_OCR_PAGE_TIMEOUT_SECONDS)"
        ) from exc
    except pytesseract.TesseractError as exc:
        raise OcrError(f"Tesseract could not read the page: {exc.message or exc.status}") from exc
    except pytesseract.TesseractNotFoundError:
        raise OcrUnavailable(
            f"Tesseract OCR is not installed: {install_hint(options.languages)}"
        ) from None
    return OcrPage(lines=parse_hocr(hocr), dpi=dpi)


class OcrError(Exception):
    """One page could not be recognised (the message says why, in plain words)."""


def parse_hocr(data: bytes) -> list[OcrLine]:
    """The text lines of an hOCR page, in Tesseract's reading order, words with confidence."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, recover=True)
    root = etree.fromstring(data, parser=parser)
    if root is None:
        return []
    lines: list[OcrLine] = []
    block = paragraph = 0
    language = ""
    for element in root.iter():
        classes = set((element.get("class") or "").split())
        title = element.get("title") or ""
        if "ocr_carea" in classes:
            block += 1
        elif "ocr_par" in classes:
            paragraph += 1
            language = element.get("lang") or ""
        elif classes & _LINE_CLASSES:
            size = _XSIZE.search(title)
            lines.append(
                OcrLine(
                    box=_box(title),
                    size=float(size.group(1)) if size else 0.0,
                    block=block,
                    paragraph=paragraph,
                )
            )
        elif "ocrx_word" in classes and lines:
            text = one_script("".join(element.itertext()).strip(), language)
            if text:
                confidence = _WCONF.search(title)
                lines[-1].words.append(
                    OcrWord(_box(title), text, float(confidence.group(1)) if confidence else 0.0)
                )
    return [line for line in lines if line.words]


def one_script(word: str, language: str = "") -> str:
    """The word in one alphabet where Tesseract mixed look-alike letters (module docstring)."""
    cyrillic = len(_CYRILLIC.findall(word))
    latin = len(_LATIN.findall(word))
    if cyrillic and latin:
        if cyrillic >= latin:
            fixed = word.translate(_TO_CYRILLIC)
            return fixed if not _LATIN.search(fixed) else word
        fixed = word.translate(_TO_LATIN)
        return fixed if not _CYRILLIC.search(fixed) else word
    if cyrillic and language == "eng":
        fixed = word.translate(_TO_LATIN)
        return fixed if not _CYRILLIC.search(fixed) else word
    return word


def _box(title: str) -> Box:
    found = _BBOX.search(title)
    if not found:
        return (0.0, 0.0, 0.0, 0.0)
    x0, y0, x1, y1 = (float(v) for v in found.groups())
    return (x0, y0, x1, y1)
