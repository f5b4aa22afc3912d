"""Dates and times as the admin and the pages write them: ISO-like, and every time with its zone's name."""

DATETIME_FORMAT = "Y-m-d H:i:s T"
SHORT_DATETIME_FORMAT = "Y-m-d H:i T"
DATE_FORMAT = "Y-m-d"
TIME_FORMAT = "H:i:s T"
