"""Places as ISO 3166 codes: countries, subdivisions in local and English forms, cities, demonyms; no false hits."""

import pytest

from reasoning.facts.places import Place, country_of, find_places, names, place_name, within


def codes(text):
    return [(p.code, p.text) for p in find_places(text)]


@pytest.mark.parametrize(
    "text, code",
    [
        ("California", "US-CA"),
        ("Florida", "US-FL"),
        ("New York", "US-NY"),
        ("New Jersey", "US-NJ"),
        ("Zürich", "CH-ZH"),
        ("Zurich", "CH-ZH"),
        ("Genève", "CH-GE"),
        ("Geneva", "CH-GE"),
        ("Basel-Stadt", "CH-BS"),
        ("Basel", "CH-BS"),
        ("Zug", "CH-ZG"),
        ("Bayern", "DE-BY"),
        ("Bavaria", "DE-BY"),
        ("Munich", "DE-BY"),
        ("München", "DE-BY"),
        ("San Francisco", "US-CA"),
        ("Miami", "US-FL"),
        ("London", "GB"),
        ("Edinburgh", "GB"),
        ("Nice", "FR"),
        ("Kuala Lumpur", "MY"),
        ("Verbier", "CH-VS"),
        ("Düsseldorf", "DE-NW"),
        ("Scotland", "GB-SCT"),
        ("Switzerland", "CH"),
        ("Schweiz", "CH"),
        ("Germany", "DE"),
        ("United Kingdom", "GB"),
        ("United States", "US"),
        ("Liechtenstein", "LI"),
    ],
)
def test_it_reads_a_named_place(text, code):
    found = find_places(f"She has a flat in {text}.")
    assert [(p.code, p.text) for p in found] == [(code, text)]
    assert all(isinstance(p, Place) for p in found)


@pytest.mark.parametrize(
    "text, code",
    [
        ("Californian", "US-CA"),
        ("Floridian", "US-FL"),
        ("Swiss", "CH"),
        ("German", "DE"),
        ("American", "US"),
        ("British", "GB"),
    ],
)
def test_a_demonym_stands_for_its_place(text, code):
    assert codes(f"A {text} client") == [(code, text)]


def test_swiss_german_is_both():
    assert codes("A Swiss-German cross-border family") == [("CH", "Swiss"), ("DE", "German")]


def test_places_come_in_order_with_their_spans():
    text = "A Californian, 58, lives in San Francisco and owns a cabin in Montana."
    found = find_places(text)
    assert [p.code for p in found] == ["US-CA", "US-CA", "US-MT"]
    assert all(text[p.start : p.end] == p.text for p in found)
    assert found[0].name == "California"


@pytest.mark.parametrize(
    "text",
    [
        "She pays in USD and her CA advisor agrees.",
        "Georgia Smith and George Washington",
        "Jordan bought more stock",
        "Bath, Reading and Split are towns. Nice work.",
        "Reading the report, Kent and Devon agreed.",
        "paid in Swiss francs, US dollars and US$ 5",
        "a German-speaking canton",
        "Latin America",
        "us and them",
        "californian wines",  # not capitalised
    ],
)
def test_no_false_hits(text):
    assert codes(text) == []


def test_an_ambiguous_name_counts_after_a_place_cue():
    assert codes("He moved to Georgia last year") == [("US-GA", "Georgia")]
    assert codes("She lives in Washington") == [("US-WA", "Washington")]
    assert codes("a trust in Jersey") == [("JE", "Jersey")]
    assert codes("moved from Austin, Texas") == [("US-TX", "Austin"), ("US-TX", "Texas")]
    assert codes("a flat in the country of Georgia") == [("GE", "Georgia")]


def test_two_letter_codes_only_as_us_uk_usa_and_a_states_postal_code_by_a_person_or_town():
    assert codes("the US, the UK and the USA") == [("US", "US"), ("GB", "UK"), ("US", "USA")]
    assert codes("NY client, seventy") == [("US-NY", "NY")]
    assert codes("NJ couple") == [("US-NJ", "NJ")]
    assert codes("moved from Dallas, TX") == [("US-TX", "Dallas"), ("US-TX", "TX")]
    assert codes("CA is a word here, and so are IN and OR") == []


def test_a_uk_county_or_town_is_the_country_after_a_cue():
    assert codes("Couple in Surrey, both 68") == [("GB", "Surrey")]
    assert codes("a house in Reading") == [("GB", "Reading")]


def test_names_come_from_pycountry():
    table = names()
    assert table["Basel-Landschaft"] == "CH-BL" and table["Genf"] == "CH-GE" and table["Bâle-Ville"] == "CH-BS"
    assert table["Deutschland"] == "DE" and table["Suisse"] == "CH" and table["Wales"] == "GB-WLS"


def test_country_of_place_name_within():
    assert country_of("US-CA") == "US" and country_of("CH") == "CH"
    assert place_name("US-CA") == "California, United States"
    assert place_name("CH-BS") == "Basel-Stadt, Switzerland"
    assert place_name("DE-BY") == "Bavaria, Germany"
    assert place_name("CH") == "Switzerland"
    assert within("US-CA", "US") and within("US-CA", "US-CA") and within("US", "US")
    assert not within("US", "US-CA") and not within("CH-BS", "DE") and not within("US-CA", "US-NY")


@pytest.mark.parametrize(
    "text, code",
    [
        ("a rental flat in Freiburg worth EUR 650k", "DE-BW"),
        ("they moved to Tempe last year", "US-AZ"),
        ("a chalet near Sion and a flat in Fribourg", "CH-FR"),
        ("an apartment in Curitiba", "BR"),
        ("a house in Chelsea", "GB"),  # a UK town is its country, as London is
    ],
)
def test_a_town_the_tables_lack_is_read_from_geonames_after_a_place_cue(text, code):
    assert code in [p.code for p in find_places(text)]


@pytest.mark.parametrize("text", ["She retires in May.", "He works at Police headquarters.", "Reading is his hobby.",
                                  "Tempe was the name of the fund.", "$250k in Roth IRAs"])  # fmt: skip
def test_a_geonames_town_needs_a_cue_and_is_no_month_or_common_word(text):
    assert find_places(text) == []


def test_a_town_followed_by_its_state_is_in_that_state():
    from reasoning.facts.places import find_places

    assert [(p.code, p.text) for p in find_places("a cabin in Sun Valley, Idaho")] == [
        ("US-ID", "Sun Valley"), ("US-ID", "Idaho")
    ]
    assert [p.code for p in find_places("an office in Zurich, Switzerland")] == ["CH-ZH", "CH"]


@pytest.mark.parametrize(
    "text, code, town",
    [
        ("Familie Keller, Arbon. Die Firma gehört den Kindern.", "CH-TG", "Arbon"),  # a Swiss town of 5,000
        ("In 2019 they moved to Chiasso.", "CH-TI", "Chiasso"),
        ("Client: Maria, 61, Odense\n- pension DKK 4m", "DK", "Odense"),  # a heading: name, age, town
        ("Board memo - Elm Academy, Springfield IL. Assets $40m.", "US-IL", "Springfield"),  # a postal code after
        ("She also owns a condo in Portland ME.", "US-ME", "Portland"),  # the code wins over the table's Oregon
        ("The Harris trust in Bath owns two farms.", "GB", "Bath"),  # a body's seat, though "Bath" is a word
    ],
)
def test_a_town_is_read_from_a_heading_a_seat_or_a_postal_code(text, code, town):
    assert (code, town) in codes(text)


@pytest.mark.parametrize(
    "text",
    ["He sits in Bath every evening.", "Our client, Bill, is seventy-four.", "Dear all, March was a good month.",
     "They keep their savings in Zurich IN 2020 terms."],
)  # fmt: skip
def test_no_town_from_a_word_a_greeting_or_a_capitalised_word_after_a_foreign_town(text):
    assert all(code.startswith("CH") for code, _ in codes(text))
