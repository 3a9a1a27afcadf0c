"""The default moderation rules (Russian and English): credentials and secrets, personal data
of colleagues, abuse. Staff edit them in the admin; this only seeds a new portal."""

from __future__ import annotations

from django.db import migrations

# A copy, not an import: a migration must not change when the shipped defaults do. The
# patterns are put together from a few parts here; the admin shows each one written out.
REQ_RU = r"(?:дай|дайте|скинь|скиньте|кинь|киньте|пришли|пришлите|вышли|вышлите|отправь|отправьте|скажи|скажите|подскажи|подскажите|напиши|напишите|сообщи|сообщите|покажи|покажите|продиктуй|продиктуйте|поделись|поделитесь)"
FILL_RU = r"(?:[\s,]+(?:же|мне|нам|пожалуйста|плиз|срочно|быстро|ка|текущий|текущие|актуальный|актуальные|рабочий|рабочие|новый|новые|админский|админские|рутовый|сервисный|сервисного|мастер|root|логин\s+и|логин\s+или|свой|твой|ваш))*"
SECRET_RU = r"(?:пароль|пароли|пароля|паролей|паролик|токен|токены|токена|токенов|api[- ]?ключ\w*|апи[- ]?ключ\w*|ключ\w*\s+(?:доступа|api|апи|от)|ssh[- ]?ключ\w*|приватн\w+\s+ключ\w*|секрет|секреты|креды|кредлы|креденшел\w*|учетк\w*|учетн\w+\s+данн\w+|доступы)"
TARGET_RU = r"(?:прод\w*|продакшн\w*|боев\w+|сервер\w*|баз\w*|бд|стенд\w*|стейдж\w*|админк\w*|рут\w*|root|vpn|впн|почт\w*|аккаунт\w*|учетк\w*|jenkins|gitlab|github|jira|aws|облак\w*|кластер\w*|k8s|кубер\w*|postgres\w*|mysql|redis|ssh|wi-?fi|вайфа\w*|1с|crm)"

CREDENTIALS = [
    # a request verb right before the secret (only filler words between): "дай пароль от прода", "скинь, пожалуйста, токен"
    r"(?<!\w)" + REQ_RU + FILL_RU + r"[\s,]+" + SECRET_RU + r"(?!\w)",
    # "нужен пароль от базы", "нужны доступы к стенду"
    r"(?<!\w)(?:нужен|нужна|нужны|нужно)\s+(?:\w+\s+)?(?:пароль|пароли|токен|токены|ключ|креды|доступы|логин\s+и\s+пароль)\s+(?:от|для|к|ко|на)\s+(?:\w+\s+){0,2}?"
    + TARGET_RU
    + r"(?!\w)",
    # "какой пароль от прода", "какие креды для стенда"
    r"(?<!\w)(?:какой|какие|каков|где\s+взять|где\s+лежит|где\s+лежат)\s+(?:\w+\s+){0,2}?(?:пароль|пароли|токен|токены|ключ|ключи|креды|логин\s+и\s+пароль|доступы)\s+(?:от|для|к|ко|на)\s+(?:\w+\s+){0,2}?"
    + TARGET_RU
    + r"(?!\w)",
    # "пароль от прода", "токен для прода": a secret of production is asked for whatever the verb
    r"(?<!\w)(?:пароль|пароли|пароля|токен|токены|токена|ключ|ключи|креды|доступы)\s+(?:от|для|к|ко)\s+(?:прод\w*|продакшн\w*|боев\w+)(?!\w)",
    # English: "send me the API token for ...", "can you share the db credentials", "tell me the root password"
    r"(?:^|[.!?;,]\s*|\b(?:please|pls|plz|can you|could you|would you|can u|kindly|i need you to)\s+)(?:give|send|share|tell|provide|dm|paste|post|forward|email|e-mail)\s+(?:me\s+|us\s+)?(?:the\s+|your\s+|a\s+|an\s+|our\s+|its\s+)?(?:(?!(?:how|what|why|where|when|which|to|about|if|whether)\b)[\w-]+\s+){0,3}?(?:passwords?|passwd|passphrases?|(?:api|access|secret|private|ssh|auth|bearer)[ -]?(?:tokens?|keys?)|tokens?|secrets?|credentials|creds|logins?\s+and\s+passwords?)(?!\w)",
    # "what is the password for prod", "what's the admin password of the staging server"
    r"\bwhat(?:'s|\s+is|\s+are)\s+(?:the|our|your)\s+(?:[\w-]+\s+){0,2}?(?:passwords?|passwd|(?:api|access|secret|ssh)[ -]?(?:tokens?|keys?)|tokens?|credentials|creds)\s+(?:for|to|of|on)\s+(?:the\s+)?(?:[\w-]+\s+){0,2}?(?:prod\w*|staging|server|database|db|admin\w*|root|vpn|jenkins|gitlab|github|jira|aws|gcp|azure|cluster|account|wi-?fi|mailbox|email)(?!\w)",
    # "i need the prod password", "need prod creds"
    r"\b(?:need|want)\s+(?:the\s+|our\s+)?(?:prod|production|staging|admin|root|db|database|server)\s+(?:passwords?|credentials|creds|tokens?|keys?)(?!\w)",
]

NAME_RU = r"(?-i:[А-ЯЁ][а-яё]{2,})"
ROLE_EXCL = r"(?!(?-i:Заказчик|Исполнител|Пользовател|Клиент|Абонент|Покупател|Участник|Студент|Администратор|Оператор|Компани|Организаци|Приложени|Систем|Банк|Сбер|Яндекс|Google|Гугл))"
PERSON_RU = (
    r"(?:у\s+)?(?:(?:мо(?:его|ей|ему|им)|наш(?:его|ей|ему|им)|это(?:го|й))\s+\w+|коллег\w*|"
    + ROLE_EXCL
    + NAME_RU
    + r")"
)
PERSONAL = [
    # the personal item then the person: "домашний адрес Иванова", "зарплата у коллеги", "дата рождения нашего тимлида"
    r"(?<!\w)(?:домашн\w*\s+адрес\w*|адрес\w*\s+(?:проживания|прописки|регистрации)|личн\w*\s+(?:телефон\w*|номер\w*|почт\w*|адрес\w*)|мобильн\w*\s+(?:телефон\w*|номер\w*)|номер\w*\s+(?:мобильного|личного|домашнего)(?:\s+телефона)?|зарплат\w*|зп|оклад\w*|паспортн\w*\s+данн\w*|паспорт\w*|снилс\w*|дат\w*\s+рождения|день\s+рождения)\s+"
    + PERSON_RU
    + r"(?!\w)",
    # "где живёт Иванов", "сколько получает наш тимлид", "сколько зарабатывает коллега"
    r"(?<!\w)(?:где\s+(?:живет|проживает)|сколько\s+(?:получает|зарабатывает|платят))\s+"
    + PERSON_RU
    + r"(?!\w)",
    # a request verb, the contact, the person: "дай телефон Петрова", "скинь адрес коллеги"
    r"(?<!\w)"
    + REQ_RU
    + r"(?:[\s,]+(?:мне|нам|пожалуйста))*[\s,]+(?:телефон\w*|номер\w*(?:\s+телефона)?|адрес\w*|почт\w*|e-?mail|мейл\w*|контакт\w*)\s+"
    + PERSON_RU
    + r"(?!\w)",
    # English: "John Smith's home address", "Anna's salary", "my colleague's phone number"
    r"(?:(?-i:[A-Z][a-z]+)(?:\s+(?-i:[A-Z][a-z]+))?|(?:my|our)\s+(?:colleague|coworker|co-worker|manager|boss|teammate|team\s+lead|lead))'s\s+(?:home\s+address|personal\s+(?:address|phone|email|number)|(?:mobile|cell|personal|private)\s+(?:phone|number)|phone\s+number|salary|wages?|paycheck|passport(?:\s+number)?|date\s+of\s+birth|birthday|social\s+security\s+number|ssn)(?!\w)",
    r"\b(?:my|our)\s+(?:colleague|coworker|co-worker|manager|boss|teammate|team\s+lead)(?:'s)?\s+(?:home\s+)?(?:address|phone(?:\s+number)?|number|salary|pay|passport|date\s+of\s+birth|birthday)(?!\w)",
    # "salary of John Smith", "home address of my colleague"
    r"\b(?:home\s+address|personal\s+(?:phone|address|email)|(?:mobile|cell)\s+(?:phone|number)|phone\s+number|salary|wages?|passport\s+number|date\s+of\s+birth)\s+of\s+(?:my\s+|our\s+)?(?:colleague|coworker|co-worker|manager|boss|teammate|(?-i:[A-Z][a-z]+))(?!\w)",
    # "where does Anna live", "how much does John Smith earn", "how much does my manager make"
    r"\bwhere\s+does\s+(?:my\s+|our\s+)?(?:colleague|coworker|manager|boss|teammate|(?-i:[A-Z][a-z]+))(?:\s+(?-i:[A-Z][a-z]+))?\s+live\b",
    r"\bhow\s+much\s+does\s+(?:(?:my|our)\s+(?:colleague|coworker|manager|boss|teammate|team\s+lead)|(?-i:[A-Z][a-z]+)\s+(?-i:[A-Z][a-z]+))\s+(?:earn|make|get\s+paid)\b",
]

ABUSE_PATTERNS = [
    r"(?<!\w)(?:ты|вы)\s+(?:\w+\s+)?(?:тупой|тупая|тупые|тупица|идиот\w*|дебил\w*|кретин\w*|дура\w*|бесполезн\w*|никчемн\w*|урод\w*)(?!\w)",
    r"\byou(?:'re|\s+are)\s+(?:so\s+|such\s+an?\s+|an?\s+|a\s+total\s+|totally\s+)?(?:stupid|useless|dumb|idiot|moron|retarded|trash|garbage|worthless|pathetic)\b",
    r"\bshut\s+up\b",
]
ABUSE_TERMS = """\
идиот*
дебил*
кретин*
придурок
придурк*
мудак*
мудил*
сука
суки
сволочь
заткнись
хуй*
хуе*
хуё*
нахуй
пизд*
ебан*
ебат*
ебал*
еблан*
уебок
уебищ*
бля
блядь
бляд*
гондон*
fuck*
motherfuck*
asshole*
bitch*
dickhead*
moron*
retard*
cunt*
bastard*"""


RULES = [
    {
        "name": "Credentials and secrets",
        "kind": "credentials",
        "position": 1,
        "patterns": CREDENTIALS,
        "terms": "",
        "note": 'Requests to hand over passwords, tokens, keys or other secrets ("дай пароль '
        'от прода", "send me the API token for ..."). Questions about testing a password '
        "form or about what a token is are not matched: a request verb must come right before "
        "the secret, or the secret must be of a named system.",
    },
    {
        "name": "Personal data of colleagues",
        "kind": "personal_data",
        "position": 2,
        "patterns": PERSONAL,
        "terms": "",
        "note": 'A named colleague\'s (a capitalised name, "коллега", "my manager") home '
        'address, phone, salary, passport or date of birth. "Тестирование персональных '
        'данных" and the fields of a specification ("дата рождения Пользователя") are not '
        "matched.",
    },
    {
        "name": "Abuse and insults",
        "kind": "abuse",
        "position": 3,
        "patterns": ABUSE_PATTERNS,
        "terms": ABUSE_TERMS,
        "note": "Insults aimed at the assistant, and obscene words.",
    },
]


def seed(apps, schema_editor) -> None:
    rule = apps.get_model("chat", "ModerationRule")
    for row in RULES:
        fields = {**row, "patterns": "\n".join(row["patterns"])}
        rule.objects.get_or_create(name=fields.pop("name"), defaults=fields)


def unseed(apps, schema_editor) -> None:
    apps.get_model("chat", "ModerationRule").objects.filter(
        name__in=[r["name"] for r in RULES]
    ).delete()


class Migration(migrations.Migration):
    dependencies = [("chat", "0005_moderation_topics")]

    operations = [migrations.RunPython(seed, unseed)]
