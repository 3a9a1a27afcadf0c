"""Tesseract's hOCR read into lines and words, and look-alike letters put in one alphabet."""

from __future__ import annotations

import pytest

from knowledge.parsing.ocr import OcrPage, one_script, parse_hocr

HOCR = """<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><body>
<div class='ocr_page' id='page_1' title='image "p.png"; bbox 0 0 2480 3508; ppageno 0'>
 <div class='ocr_carea' id='block_1_1' title="bbox 100 100 900 200">
  <p class='ocr_par' id='par_1_1' lang='eng' title="bbox 100 100 900 200">
   <span class='ocr_line' id='line_1_1' title="bbox 100 100 900 140; baseline 0 -8; x_size 40; x_descenders 8; x_ascenders 10">
    <span class='ocrx_word' id='word_1_1' title='bbox 100 100 260 140; x_wconf 96'>SECURITIES</span>
    <span class='ocrx_word' id='word_1_2' title='bbox 280 100 400 140; x_wconf 90'>АСТ</span>
   </span>
  </p>
 </div>
 <div class='ocr_carea' id='block_1_2' title="bbox 100 300 900 400">
  <p class='ocr_par' id='par_1_2' lang='rus' title="bbox 100 300 900 400">
   <span class='ocr_header' id='line_1_2' title="bbox 100 300 900 350; baseline 0 -9; x_size 52">
    <span class='ocrx_word' id='word_1_3' title='bbox 100 300 300 350; x_wconf 60'>Тecт</span>
    <span class='ocrx_word' id='word_1_4' title='bbox 320 300 500 350; x_wconf 80'>плана</span>
   </span>
  </p>
 </div>
</div></body></html>""".encode()


def test_hocr_gives_lines_with_size_area_paragraph_and_words_with_confidence():
    lines = parse_hocr(HOCR)
    assert [line.text for line in lines] == ["SECURITIES ACT", "Тест плана"]
    first, header = lines
    assert (first.box, first.size, first.block, first.paragraph) == ((100, 100, 900, 140), 40, 1, 1)
    assert (header.size, header.block, header.paragraph) == (52, 2, 2)  # ocr_header is a line
    assert [w.confidence for w in first.words] == [96, 90]
    # Confidence of the page: the words' mean weighted by their length.
    page = OcrPage(lines=lines, dpi=300)
    assert page.confidence == round((10 * 96 + 3 * 90 + 4 * 60 + 5 * 80) / 22, 1)


@pytest.mark.parametrize(
    ("word", "language", "expected"),
    [
        ("АСТ", "eng", "ACT"),  # Cyrillic capitals in an English paragraph
        ("АСТ", "rus", "АСТ"),  # ... a Russian abbreviation in a Russian one
        ("Тecт", "", "Тест"),  # mixed: the majority alphabet
        ("Cистема", "rus", "Система"),
        ("MOCK", "rus", "MOCK"),  # an English word in a Russian paragraph stays
        ("Привет", "eng", "Привет"),  # no Latin look-alike for every letter: unchanged
    ],
)
def test_look_alike_letters_are_written_in_one_alphabet(word, language, expected):
    assert one_script(word, language) == expected
