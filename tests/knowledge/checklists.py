"""A QA checklist workbook in the shape testers keep them, built with openpyxl.

Two sheets, the two ways checklists name their sections: "Регистрация" has a section column
whose cells are merged down over their rows, under a title merged across the columns;
"Оформление заказа" has section title rows merged across the table. Statuses as a test run
leaves them (Passed, Failed, Blocked, Not run, Skipped), bug numbers in the comments.
"""

from __future__ import annotations

import io

import openpyxl
from openpyxl.styles import Font

REGISTRATION = [
    (
        "Поля формы",
        [
            (
                "Поле «E-mail» отмечено как обязательное",
                "Рядом с подписью поля стоит звёздочка; без e-mail форма не отправляется",
                "Passed",
                "",
            ),
            (
                "Ввод e-mail без символа @",
                "Под полем сообщение «Введите корректный адрес электронной почты», "
                "кнопка «Зарегистрироваться» неактивна",
                "Passed",
                "",
            ),
            (
                "Ввод e-mail с пробелами в начале и в конце",
                "Пробелы обрезаются, регистрация проходит",
                "Failed",
                "BUG-1042",
            ),
            (
                "Повторная регистрация на уже занятый e-mail",
                "Сообщение «Пользователь с таким e-mail уже зарегистрирован» и ссылка "
                "на восстановление пароля",
                "Passed",
                "",
            ),
        ],
    ),
    (
        "Пароль",
        [
            (
                "Пароль короче 8 символов",
                "Сообщение «Пароль должен содержать не менее 8 символов», форма не отправляется",
                "Passed",
                "",
            ),
            (
                "Пароль без цифр",
                "Сообщение «Пароль должен содержать хотя бы одну цифру»",
                "Failed",
                "BUG-1057",
            ),
            (
                "Поле «Пароль» скрывает ввод",
                "Символы отображаются точками; по кнопке с глазом пароль показывается",
                "Passed",
                "",
            ),
            (
                "Пароль и подтверждение не совпадают",
                "Сообщение «Пароли не совпадают» под полем подтверждения",
                "Passed",
                "",
            ),
        ],
    ),
    (
        "Подтверждение e-mail",
        [
            (
                "Письмо со ссылкой подтверждения после регистрации",
                "Письмо приходит в течение 5 минут, отправитель no-reply@shop.example",
                "Blocked",
                "Почтовый стенд недоступен",
            ),
            (
                "Переход по ссылке из письма через 25 часов",
                "Страница «Ссылка устарела» с кнопкой повторной отправки письма",
                "Not run",
                "",
            ),
            (
                "Повторный переход по уже использованной ссылке",
                "Сообщение «E-mail уже подтверждён», переход на страницу входа",
                "Passed",
                "",
            ),
        ],
    ),
]

CHECKOUT = [
    (
        "Корзина",
        [
            (
                "Добавление товара в корзину с карточки товара",
                "Счётчик корзины в шапке увеличивается на 1, товар появляется в корзине",
                "Passed",
                "",
            ),
            (
                "Изменение количества товара в корзине",
                "Сумма заказа пересчитывается без перезагрузки страницы",
                "Passed",
                "",
            ),
            (
                "Удаление последнего товара из корзины",
                "Показывается «Корзина пуста» и кнопка «Перейти в каталог»",
                "Passed",
                "",
            ),
        ],
    ),
    (
        "Доставка",
        [
            (
                "Выбор самовывоза из пункта выдачи",
                "Стоимость доставки 0 ₽, на карте отмечены пункты выдачи",
                "Passed",
                "",
            ),
            (
                "Ввод почтового индекса из 5 цифр",
                "Сообщение «Индекс должен состоять из 6 цифр»",
                "Failed",
                "BUG-1101",
            ),
        ],
    ),
    (
        "Оплата",
        [
            (
                "Оплата картой с недостаточным балансом",
                "Сообщение банка «Недостаточно средств», заказ остаётся в статусе «Ожидает оплаты»",
                "Passed",
                "",
            ),
            (
                "Применение промокода с истёкшим сроком действия",
                "Сообщение «Срок действия промокода истёк», сумма заказа не меняется",
                "Passed",
                "",
            ),
            (
                "Повторное нажатие «Оплатить» во время обработки платежа",
                "Кнопка заблокирована, второй платёж не создаётся",
                "Skipped",
                "",
            ),
        ],
    ),
]

# Spreadsheet rows of a few items (the header of "Регистрация" is row 4, of the other row 1).
ROW_SHORT_PASSWORD = 9  # "Пароль короче 8 символов"
ROW_POSTCODE = 8  # "Ввод почтового индекса из 5 цифр": row 2 is "Корзина", 6 is "Доставка"


def checklist_workbook() -> bytes:
    workbook = openpyxl.Workbook()
    registration = workbook.active
    registration.title = "Регистрация"
    registration.append(["Чек-лист: регистрация и вход в личный кабинет"])
    registration.merge_cells("A1:F1")
    registration.append(["Сборка 2.4.1, тестировщик А. Смирнова, прогон 2024-03-12"])
    registration.merge_cells("A2:F2")
    registration.append([])
    registration.append(["№", "Раздел", "Проверка", "Ожидаемый результат", "Статус", "Комментарий"])
    for cell in registration[4]:
        cell.font = Font(bold=True)
    number = 0
    for section, items in REGISTRATION:
        first = registration.max_row + 1
        for i, (check, expected, status, comment) in enumerate(items):
            number += 1
            # The section is typed once and merged down over its rows, as testers do.
            registration.append([number, section if i == 0 else None, check, expected, status])
            registration.cell(registration.max_row, 6, comment or None)
        registration.merge_cells(f"B{first}:B{registration.max_row}")

    checkout = workbook.create_sheet("Оформление заказа")
    checkout.append(["№", "Проверка", "Ожидаемый результат", "Статус", "Комментарий"])
    number = 0
    for section, items in CHECKOUT:
        checkout.append([section])
        checkout.merge_cells(f"A{checkout.max_row}:E{checkout.max_row}")
        checkout.cell(checkout.max_row, 1).font = Font(bold=True)
        for check, expected, status, comment in items:
            number += 1
            checkout.append([number, check, expected, status, comment or None])
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()
