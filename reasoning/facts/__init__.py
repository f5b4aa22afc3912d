"""The client's facts: read from the problem, kept as a sheet, and every step and answer checked against them.

- sheet.py: Fact, Finding, Sheet, and the sheet as prompt lines (render_sheet / read_sheet).
- quantities.py: amounts, percents, ages and years as people write them ("$3.2M", "CHF 1'800'000", "2,5 Mio. EUR",
  "seventy percent"), with babel's CLDR currency data.
- places.py: places as ISO 3166 codes and subdivisions (pycountry), demonyms, and the places a text names.
- extract.py: extract(problem) -> the facts, deterministically; ground(facts, problem) drops a fact a model
  invented (its figure or place is not in the problem).
- regimes.py: tax regimes and rules, and the jurisdiction each belongs to (NIIT: US; wealth tax: CH; ...).
- check.py: check(text, facts, final=False) -> findings of the kinds figure, arithmetic, currency, jurisdiction,
  label and (final answers only) coverage; capped(score, findings) -> the score a failed check allows.

Nothing here imports Django or litellm.
"""
